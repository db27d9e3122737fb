import StageCore
import StageControl
import StageDrivers
import StageSynth

#if canImport(Glibc)
import Glibc
#endif

/// `stagerack render`: a rack rendered offline, file in, file out.
enum RenderCommand {
    static let help = """
        usage: stagerack render RACK|SETLIST --output OUT.wav [--midi FILE.mid] [--input VOICE.wav]
                                [--duration SECONDS] [--sample-rate HZ] [--block FRAMES] [--demo]
                                [--song N]

        Renders RACK offline: the same graph as live, driven by a file clock. With a SETLIST,
        the first song's rack plays (or song N's, with --song N) and program changes in the
        MIDI file switch songs (and recall snapshots) exactly as live. The --input file
        is the microphone (any format libsndfile reads; resampled if its rate differs), the
        MIDI file goes through the rack's MIDI mappings (one hour at most), and the result
        is written to OUT (.wav 32-bit, .w64/.caf float, .flac/.aiff 24-bit, .ogg). A rack with
        several outputs writes one file each: OUT for the first, OUT-NAME for output NAME
        (out.wav and out-ears.wav).

          --output FILE       where to write (required)
          --midi FILE         a Standard MIDI File (type 0 or 1)
          --input FILE        audio for the rack's input unit
          --demo              use the built-in demo: a sung phrase (with s, t, k and a
                              breath) and a chord progression
          --duration SECONDS  length (default: the longer of input and MIDI, then until the
                              tails fall under -80 dBFS for 100 ms, 30 s at most)
          --sample-rate HZ    render rate (default: the rack's io.sampleRate, else 48000;
                              the input is resampled to it)
          --block FRAMES      block size, 1…8192 (default 256)
          --song N            with a SETLIST, start at its song N (1: the first): its
                              outputs are the files written (a song's in-ears and click)
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(
            args, valueOptions: ["--output", "-o", "--midi", "--input", "--duration", "--sample-rate", "--block", "--song"],
            flagOptions: ["--demo"])
        guard a.positional.count == 1 else { throw UsageError(message: "render takes one rack file\n\n\(help)") }
        guard let output = a.options["--output"] ?? a.options["-o"] else {
            throw UsageError(message: "render needs --output FILE")
        }
        let rackPath = a.positional[0]
        _ = try AudioFileWriter.format(forPath: output)  // before any slow loading
        let block = try a.int("--block", range: 1...8192) ?? 256
        var duration = try a.double("--duration", range: 0.001...86_400)

        let setlist = try RackFiles.readSetlist(rackPath)
        let song = try a.int("--song", range: 1...10000) ?? 1
        guard song <= setlist.entries.count else {
            throw UsageError(message: "--song \(song): \(rackPath) has \(setlist.entries.count) song\(setlist.entries.count == 1 ? "" : "s")")
        }
        let rack = try RackFiles.readSong(setlist, song - 1, registry: Registry.standard)
        let rate = try a.double("--sample-rate", range: 8000...384_000) ?? rack.io.sampleRate ?? 48000
        var input: RenderSource?
        var inputIsEmpty = false
        var midi: StandardMIDIFile?
        if let path = a.options["--input"] {
            // Streamed from disk a block at a time: memory stays flat whatever its length.
            let prepared: RenderInput
            do {
                prepared = try RenderInput(path: path, rack: rack, rate: rate)
            } catch {
                throw InputFileProblem(path: path, error: error)
            }
            for note in prepared.notes { Console.err("info: \(note)") }
            input = prepared.source
            inputIsEmpty = prepared.source.isEmpty()
        }
        if let path = a.options["--midi"] {
            let file = try MIDIFiles.read(path)
            if file.isTruncated { Console.err("warning: \(path): \(truncationMessage(file))") }
            midi = file
        }
        if a.flags.contains("--demo") {
            if input == nil { input = MemorySource(DemoMaterial.voice(sampleRate: rate)) }
            if midi == nil { midi = DemoMaterial.song() }
            if duration == nil { duration = DemoMaterial.seconds }
        }
        let options = GraphCompiler.Options(
            sampleRate: rate, maxFrames: block, hostInputChannels: max(input?.channelCount ?? 1, 1), realTime: false)
        let plan = try GraphCompiler(registry: Registry.standard).compile(rack, options: options)
        for w in plan.warnings { Console.err("warning: \(rackPath): \(w)") }
        for u in plan.units { if let synth = u as? SynthUnit { Console.err("info: \(synth.soundFontDescription)") } }
        if plan.usesHostInput && input == nil {
            Console.err("note: the rack has an input unit but no --input was given: it hears silence")
        }
        let renderer = setlist.entries.count > 1 || !rack.snapshots.isEmpty
            ? OfflineRenderer(setlist: setlist, index: song - 1, plan: plan, registry: Registry.standard, options: options,
                              log: { Console.err("info: \($0)") })
            : OfflineRenderer(plan: plan)
        let frames: Int?
        var tail: Double? = nil
        if let duration {
            frames = Int((duration * rate).rounded())
        } else {
            // The input and the MIDI, then the tails until they fall silent (30 s at most).
            frames = nil
            tail = 30
            guard (input != nil && !inputIsEmpty) || OfflineRenderer.midiSeconds(midi) > 0 else {
                if let path = a.options["--input"] {
                    throw AudioFileError(path: path, message: "holds no audio frames (give --duration to render the rack anyway)")
                }
                throw UsageError(message: "nothing to render: give --input, --midi, --duration or --demo")
            }
        }
        // One file per output unit: OUT for the first, OUT-NAME for the others.
        let writer = try OutputFiles(path: output, outputs: plan.outputs, sampleRate: rate, maxFrames: block)
        let wallStart = monotonicNanoseconds()
        var showing = false
        let summary = try renderer.render(
            source: input, midi: midi, frames: frames, blockSize: block, tailUntilSilent: tail,
            progress: { fraction in
                if !showing && monotonicNanoseconds() - wallStart > 1_000_000_000 { showing = true }
                if showing { Console.progress(fraction, label: "rendering") }
            },
            sink: { bus, n in try writer.write(bus, frames: n) })
        if showing { Console.endProgress() }
        try writer.close()
        // The whole process's figures (start-up, loading, reading, rendering, writing).
        let usage = ProcessUsage.now()
        let realTime = usage.cpuSeconds > 0 ? summary.seconds / usage.cpuSeconds : .infinity
        var line = "rendered \(formatNumber((summary.seconds * 100).rounded() / 100)) s to \(writer.paths.joined(separator: ", ")): "
        line += "peak \(formatNumber((Double(summary.peakDBFS) * 10).rounded() / 10)) dBFS, "
        line += "CPU \(formatNumber((usage.cpuSeconds * 1000).rounded() / 1000)) s, "
        line += "\(formatNumber(realTime.rounded()))x real time, "
        line += "memory \(formatNumber((Double(usage.peakResidentBytes) / 1e5).rounded() / 10)) MB"
        if summary.switches > 0 { line += ", \(counted(summary.switches, "switch"))" }
        if plan.latencyFrames > 0 {
            line += ", latency \(formatNumber((Double(plan.latencyFrames) / rate * 10000).rounded() / 10)) ms"
        }
        Console.err(line)
        if summary.safety.nonFiniteSamples > 0 {
            Console.err("warning: the output stage replaced \(counted(summary.safety.nonFiniteSamples, "NaN/Inf sample")) with silence")
        }
        if summary.safety.limitedSamples > 0 {
            Console.err("note: the output limiter held \(counted(summary.safety.limitedSamples, "sample")) under -0.3 dBFS")
        }
        return 0
    }

    /// Why a MIDI file was cut at `StandardMIDIFile.maximumSeconds`.
    static func truncationMessage(_ file: StandardMIDIFile) -> String {
        let claimed = file.claimedDuration < 1e12 ? String(Int(file.claimedDuration.rounded())) : "\(file.claimedDuration)"
        return "its time division and delta times put its last event at \(claimed) s; "
            + "render plays the first \(formatNumber(StandardMIDIFile.maximumSeconds / 60)) minutes of a MIDI file and drops the rest"
    }
}

/// What is wrong with an `--input` file that does not open, in words and with its name
/// (libsndfile alone says "Format not recognised." or "System error : No such file or
/// directory."): not there, a folder, unreadable, a MIDI file (give it with --midi), or not
/// audio libsndfile reads. Other problems (its channels) keep their own message.
struct InputFileProblem: Error, CustomStringConvertible {
    var description: String

    init(path: String, error: AudioFileError) {
        let what = "--input \(path)"
        var st = stat()
        guard stat(path, &st) == 0 else {
            description = "\(what): no such file (the audio the rack's input unit hears: WAV, FLAC, AIFF, Ogg...)"
            return
        }
        if st.st_mode & S_IFMT == S_IFDIR {
            description = "\(what): is a folder, not an audio file"
            return
        }
        guard let f = fopen(path, "rb") else {
            description = "\(what): cannot be read (\(String(cString: strerror(errno))))"
            return
        }
        var head = [UInt8](repeating: 0, count: 4)
        let n = fread(&head, 1, 4, f)
        fclose(f)
        let lower = path.lowercased()
        if n == 4 && head == Array("MThd".utf8) || lower.hasSuffix(".mid") || lower.hasSuffix(".midi") || lower.hasSuffix(".smf") {
            description = "\(what): is a MIDI file, not audio: give it with --midi \(path) (--input is the audio the rack's input unit hears)"
        } else if error.path == path && (error.message.hasPrefix("Format not recognised") || error.message.hasPrefix("System error")) {
            description = "\(what): not an audio file this program reads (WAV, FLAC, AIFF, Ogg and the other formats of libsndfile): \(error.message)"
        } else {
            description = error.description
        }
    }
}
