import StageCore
import StageDrivers
import StageService

#if canImport(Glibc)
import Glibc
#endif

/// `play --record DIR`: the show recorded by a `ShowRecorder` (its own disk thread), one
/// pair of files per song; a full disk stops the recording with a warning, never the show.
extension LiveSession {
    /// The folder to record into, or nil: `--record` / `record` / `$STAGERACK_RECORD`; a
    /// relative folder is inside the service's state directory (`$STATE_DIRECTORY`,
    /// /var/lib/stagerack under systemd), else the current folder.
    var recordingFolder: String? {
        guard let folder = setup.service.settings.text(.record) else { return nil }
        if folder.hasPrefix("/") { return folder }
        if let state = ProcessEnvironment.current["STATE_DIRECTORY"]?.split(separator: ":").first {
            return String(state) + "/" + folder
        }
        return folder
    }

    /// Starts recording when asked to. Thread: main.
    func startRecording(capture: PCMStream?, period: Int) throws -> ShowRecorder? {
        guard let folder = recordingFolder else { return nil }
        let format = ShowRecorder.Format(rawValue: setup.service.settings.text(.recordFormat) ?? "wav") ?? .wav
        let recorder = try ShowRecorder(
            folder: folder, format: format, sampleRate: setup.rate, micChannels: capture?.configuration.channels ?? 0,
            blockFrames: period, song: song(0).name)
        Log.info("recording to \(folder): \(recorder.files.joined(separator: ", "))\(format == .flac ? " (FLAC when the show stops)" : "")")
        return recorder
    }

    /// Follows the setlist (a new pair of files per song) and warns once when the recording
    /// stopped (a full disk). Thread: main, in the status loop.
    func watchRecording(_ recorder: ShowRecorder?, songIndex: Int, state: inout RecordingWatch) {
        guard let recorder else { return }
        if songIndex != state.songIndex {
            state.songIndex = songIndex
            recorder.songChanged(song(songIndex).name)
        }
        if recorder.hasStopped && !state.warned {
            state.warned = true
            Log.warning("\(recorder.problem ?? "the recording stopped"); the show goes on without recording")
        }
        let dropped = recorder.droppedFrames
        if dropped > state.droppedLogged {
            state.droppedLogged = dropped
            Log.warning("recording: the disk is slow: \(dropped) frames dropped from the recording so far (the show is not affected)")
        }
    }

    /// Writes the rest, closes (and converts) the files, says what was recorded. Thread: main.
    func finishRecording(_ recorder: ShowRecorder?) {
        guard let recorder else { return }
        recorder.stop()
        let seconds = Double(recorder.writtenFrames) / Double(setup.rate)
        var line = "recorded \(formatNumber((seconds * 10).rounded() / 10)) s: \(recorder.files.joined(separator: ", "))"
        if recorder.droppedFrames > 0 { line += "; \(recorder.droppedFrames) frames dropped (the disk was too slow)" }
        if recorder.hasStopped { line += "; stopped early: \(recorder.problem ?? "a write failed")" }
        Log.info(line)
    }
}

/// What the main thread remembers about the recording between status ticks.
struct RecordingWatch {
    var songIndex = 0
    var warned = false
    var droppedLogged = 0
}
