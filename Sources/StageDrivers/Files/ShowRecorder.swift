import CSndFile
import StageCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Records the show: the microphone input(s) as captured and the stereo output as the
/// audience hears it (after the output stage), each to its own file in a folder, written by
/// a disk thread of its own so the audio thread never waits for a disk.
///
/// The audio thread copies each period into a block of a fixed pool (`take`); two queues
/// link it to the disk thread, each one producer and one consumer (`SPSCQueue`):
/// - `filled`: block numbers, audio thread → disk thread (a period to write);
/// - `free`: block numbers, disk thread → audio thread (written, to reuse).
/// When no block is free (the disk fell behind by the whole pool, `bufferSeconds`) the
/// period is dropped from the recording only, and counted; the show never waits.
///
/// Files are WAV, 24-bit, written with libsndfile's `SFC_SET_UPDATE_HEADER_AUTO` (the
/// header is rewritten after each write) on a descriptor the recorder opened, which it
/// `fsync`s about once a second: after a `kill -9` or a power cut the files open with all
/// but at most the last second. A full disk (or any write error) stops the recording with
/// a warning; the show goes on. With `flac`, each WAV is converted to FLAC when the
/// recording stops cleanly (and the WAV removed): FLAC's length is written only at close,
/// so a FLAC written live would not survive a `kill -9`; the WAV does.
///
/// Names: `NNN-SONG-mic.wav`, `NNN-SONG-out.wav`, NNN the next free sequence number in the
/// folder (a Pi has no clock that survives a power cut), prefixed with the date when the
/// system clock is synchronised (systemd-timesyncd). A new pair starts at each song change (`songChanged`).
///
/// Thread: `take` on the audio thread; `songChanged`, `stop`, the counters and `problem`
/// from the main thread; the disk thread runs `run`.
public final class ShowRecorder: @unchecked Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case wav, flac
    }

    public let folder: String
    public let format: Format
    public let sampleRate: Int
    public let micChannels: Int
    public let blockFrames: Int
    public let blockCount: Int
    /// Samples per block: the mic channels then the two output channels, interleaved each.
    let micSamples: UnsafeMutablePointer<Float>
    let outSamples: UnsafeMutablePointer<Float>
    let blockLength: UnsafeMutablePointer<Int>
    /// Producer: audio thread. Consumer: disk thread.
    let filled: SPSCQueue<Int32>
    /// Producer: disk thread. Consumer: audio thread.
    let free: SPSCQueue<Int32>

    /// Frames dropped from the recording because the pool was full.
    public var droppedFrames: Int { dropped.load(ordering: .relaxed) }
    /// Frames written to the output file(s).
    public var writtenFrames: Int { written.load(ordering: .relaxed) }
    /// True once a write failed (a full disk): nothing more is recorded.
    public var hasStopped: Bool { failed.load(ordering: .acquiring) }
    /// What went wrong, once `hasStopped` (main thread).
    public var problem: String? { problemText.withLock { $0 } }
    /// The files written so far (main thread).
    public var files: [String] { fileList.withLock { $0 } }

    let dropped = Atomic<Int>(0)
    let written = Atomic<Int>(0)
    let failed = Atomic<Bool>(false)
    let running = Atomic<Bool>(true)
    let problemText = Locked<String?>(nil)
    let fileList = Locked<[String]>([])
    let song = Locked<(name: String, serial: Int)>(("", 0))
    private var thread: StageThread?
    /// Disk-thread state.
    private var micFile: RecordingFile?
    private var outFile: RecordingFile?
    private var songSerial = -1
    /// Audio-thread state: blocks handed out for the first time.
    private var audioNeverUsed = 0

    /// Prepares the pool (`bufferSeconds` of audio) and starts the disk thread; the folder
    /// is created if needed. Thread: main.
    public init(
        folder: String, format: Format, sampleRate: Int, micChannels: Int, blockFrames: Int, song: String,
        bufferSeconds: Double = 4
    ) throws(AudioFileError) {
        self.folder = folder
        self.format = format
        self.sampleRate = sampleRate
        self.micChannels = micChannels
        self.blockFrames = blockFrames
        blockCount = max(8, Int(bufferSeconds * Double(sampleRate)) / blockFrames)
        try Self.makeFolder(folder)
        micSamples = .allocate(capacity: max(micChannels, 1) * blockFrames * blockCount)
        micSamples.initialize(repeating: 0, count: max(micChannels, 1) * blockFrames * blockCount)
        outSamples = .allocate(capacity: 2 * blockFrames * blockCount)
        outSamples.initialize(repeating: 0, count: 2 * blockFrames * blockCount)
        blockLength = .allocate(capacity: blockCount)
        blockLength.initialize(repeating: 0, count: blockCount)
        filled = SPSCQueue(minimumCapacity: blockCount)
        free = SPSCQueue(minimumCapacity: blockCount)
        self.song.withLock { $0 = (song, 1) }
        try openFiles()
        do {
            thread = try StageThread(.init(name: "stagerack-rec")) { [self] in run() }
        } catch {
            throw AudioFileError(path: folder, message: "cannot start the recording thread: \(error)")
        }
    }

    deinit {
        micSamples.deallocate()
        outSamples.deallocate()
        blockLength.deallocate()
    }

    // MARK: audio thread

    /// Copies one period: `input` as captured (nil: no capture), `output` as played.
    /// Never waits, allocates or locks; a full pool drops the period from the recording.
    /// Thread: audio.
    public func take(input: AudioBus?, output: AudioBus, frames: Int) {
        guard !failed.load(ordering: .relaxed), frames <= blockFrames else { return }
        var block: Int32 = -1
        if audioNeverUsed < blockCount {
            block = Int32(audioNeverUsed)
            audioNeverUsed += 1
        } else if let b = free.pop() {
            block = b
        }
        guard block >= 0 else {
            dropped.add(frames, ordering: .relaxed)
            return
        }
        let b = Int(block)
        if micChannels > 0, let input {
            let dst = micSamples + b * micChannels * blockFrames
            for c in 0..<micChannels {
                let src = input[min(c, input.channelCount - 1)]
                for f in 0..<frames { dst[f * micChannels + c] = src[f] }
            }
        }
        let dst = outSamples + b * 2 * blockFrames
        let l = output[0]
        let r = output[min(1, output.channelCount - 1)]
        for f in 0..<frames {
            dst[2 * f] = l[f]
            dst[2 * f + 1] = r[f]
        }
        blockLength[b] = frames
        _ = filled.push(block)
    }

    /// A new audio thread takes over (a device lost and back). Thread: main, between the
    /// old audio thread's end and the new one's start.
    public func handOverAudioThread() {
        filled.handOverProducer()
        free.handOverConsumer()
    }

    // MARK: main thread

    /// The next song's files start at the next period. Thread: main.
    public func songChanged(_ name: String) {
        song.withLock { $0 = (name, $0.serial + 1) }
    }

    /// Writes what is queued, closes the files (converting them to FLAC when asked) and
    /// stops the disk thread. Thread: main, after the audio thread stopped.
    public func stop() {
        guard let t = thread else { return }
        running.store(false, ordering: .releasing)
        t.join()
        thread = nil
    }

    // MARK: disk thread

    private func run() {
        var lastSync = monotonicNanoseconds()
        while true {
            let stopping = !running.load(ordering: .acquiring)
            var did = false
            while let b = filled.pop() {
                did = true
                write(Int(b))
                _ = free.push(b)
            }
            let now = monotonicNanoseconds()
            if now &- lastSync >= 1_000_000_000 {
                micFile?.sync()
                outFile?.sync()
                lastSync = now
            }
            if stopping { break }
            if !did { napMicroseconds(5000) }
        }
        closeFiles(convert: true)
    }

    private func write(_ b: Int) {
        guard !failed.load(ordering: .relaxed) else { return }
        let serial = song.withLock { $0.serial }
        if serial != songSerial {
            closeFiles(convert: true)
            do { try openFiles() } catch { fail("\(error)"); return }
        }
        let n = blockLength[b]
        do {
            if let micFile { try micFile.write(micSamples + b * micChannels * blockFrames, frames: n) }
            if let outFile { try outFile.write(outSamples + b * 2 * blockFrames, frames: n) }
            written.add(n, ordering: .relaxed)
        } catch {
            fail("\(error)")
        }
    }

    private func fail(_ message: String) {
        problemText.withLock { $0 = message }
        failed.store(true, ordering: .releasing)
        micFile?.abandon()
        outFile?.abandon()
        micFile = nil
        outFile = nil
    }

    /// Opens the next pair of files. Thread: disk (or main in `init`).
    private func openFiles() throws(AudioFileError) {
        let (name, serial) = song.withLock { ($0.name, $0.serial) }
        songSerial = serial
        let stem = folder + "/" + Self.nextStem(in: folder, song: name)
        if micChannels > 0 {
            micFile = try RecordingFile(path: stem + "-mic.wav", channels: micChannels, sampleRate: sampleRate)
        }
        outFile = try RecordingFile(path: stem + "-out.wav", channels: 2, sampleRate: sampleRate)
        let paths = [micFile?.path, outFile?.path].compactMap { $0 }
        fileList.withLock { $0 += paths }
    }

    private func closeFiles(convert: Bool) {
        for file in [micFile, outFile].compactMap({ $0 }) {
            file.close()
            if convert && format == .flac, let flac = file.convertToFLAC() {
                fileList.withLock { list in list = list.map { $0 == file.path ? flac : $0 } }
            }
        }
        micFile = nil
        outFile = nil
    }

    /// `NNN-song` (or `YYYY-MM-DD-NNN-song` when the clock is synchronised), NNN one more
    /// than the highest number in the folder.
    static func nextStem(in folder: String, song: String) -> String {
        var highest = 0
        if let dir = opendir(folder) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                let parts = name.split(separator: "-")
                let number = parts.first { $0.count == 3 && $0.allSatisfy(\.isNumber) }
                if let n = number.flatMap({ Int($0) }) { highest = max(highest, n) }
            }
            closedir(dir)
        }
        let serial = String(highest + 1)
        let padded = String(repeating: "0", count: max(0, 3 - serial.count)) + serial
        let cleaned = String(song.map { $0.isLetter || $0.isNumber ? $0 : "_" }.prefix(40))
        let stem = cleaned.isEmpty ? padded : padded + "-" + cleaned
        return clockIsSynchronised ? today() + "-" + stem : stem
    }

    /// systemd-timesyncd says the clock was set from the network (it creates this file
    /// once synchronised); without it, a Pi's clock restarts from the last shutdown.
    static var clockIsSynchronised: Bool {
        access("/run/systemd/timesync/synchronized", F_OK) == 0
    }

    static func today() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }

    static func makeFolder(_ path: String) throws(AudioFileError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw AudioFileError(path: path, message: "cannot create the recording folder: \(String(cString: strerror(errno)))")
            }
        }
        guard access(path, W_OK) == 0 else {
            throw AudioFileError(path: path, message: "the recording folder is not writable: \(String(cString: strerror(errno)))")
        }
    }
}

/// Sleeps the calling thread (never the audio thread).
func napMicroseconds(_ us: Int) {
    var ts = timespec(tv_sec: us / 1_000_000, tv_nsec: (us % 1_000_000) * 1000)
    nanosleep(&ts, nil)
}

/// One WAV file being recorded: 24-bit PCM, header rewritten after every write, data
/// synced on request. Thread: the recorder's disk thread (opened on main for the first).
final class RecordingFile {
    let path: String
    let channels: Int
    let sampleRate: Int
    private var file: OpaquePointer?
    private let descriptor: Int32

    init(path: String, channels: Int, sampleRate: Int) throws(AudioFileError) {
        self.path = path
        self.channels = channels
        self.sampleRate = sampleRate
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw AudioFileError(path: path, message: "cannot create: \(String(cString: strerror(errno)))")
        }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_24)
        guard let f = sf_open_fd(descriptor, Int32(SFM_WRITE), &info, 0) else {
            let reason = String(cString: sf_strerror(nil))
            Glibc.close(descriptor)
            throw AudioFileError(path: path, message: reason)
        }
        sf_command(f, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        sf_command(f, Int32(SFC_SET_UPDATE_HEADER_AUTO), nil, Int32(SF_TRUE))
        file = f
    }

    deinit { close() }

    func write(_ samples: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) {
        guard let file else { return }
        let n = sf_writef_float(file, samples, sf_count_t(frames))
        if n != frames {
            let reason = sf_error(file) != 0 ? String(cString: sf_strerror(file)) : String(cString: strerror(errno))
            throw AudioFileError(path: path, message: "the recording stopped: \(reason)")
        }
    }

    func sync() {
        guard let file else { return }
        sf_write_sync(file)
        fsync(descriptor)
    }

    func close() {
        guard let f = file else { return }
        file = nil
        sf_close(f)
        fsync(descriptor)
        Glibc.close(descriptor)
    }

    /// After a failed write: keep what was written, close without more writes.
    func abandon() { close() }

    /// Converts the closed WAV to FLAC next to it and removes the WAV; the FLAC's path, or
    /// nil (the WAV stays) when the conversion failed.
    func convertToFLAC() -> String? {
        let flac = String(path.dropLast(4)) + ".flac"
        var inInfo = SF_INFO()
        guard let input = sf_open(path, Int32(SFM_READ), &inInfo) else { return nil }
        defer { sf_close(input) }
        var outInfo = SF_INFO()
        outInfo.samplerate = inInfo.samplerate
        outInfo.channels = inInfo.channels
        outInfo.format = Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24)
        guard let output = sf_open(flac, Int32(SFM_WRITE), &outInfo) else { return nil }
        let frames = 16384
        let buffer = UnsafeMutablePointer<Int32>.allocate(capacity: frames * Int(inInfo.channels))
        defer { buffer.deallocate() }
        var ok = true
        while true {
            let n = sf_readf_int(input, buffer, sf_count_t(frames))
            if n <= 0 { break }
            if sf_writef_int(output, buffer, n) != n {
                ok = false
                break
            }
        }
        if sf_close(output) != 0 { ok = false }
        guard ok else {
            unlink(flac)
            return nil
        }
        unlink(path)
        return flac
    }
}
