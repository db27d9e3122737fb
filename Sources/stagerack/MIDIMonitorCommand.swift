import StageCore
import StageControl
import StageDrivers

#if canImport(Glibc)
import Glibc
#endif

/// `stagerack midi-monitor`: incoming MIDI, and with a rack what each message maps to.
enum MIDIMonitorCommand {
    static let help = """
        usage: stagerack midi-monitor [RACK] [--connect PATTERNS] [--seconds N] [--clock]

        Opens the sequencer client StageRack (ports in and out), connects to the ports the
        rack's midi.connect names (default: every hardware port; --connect overrides, a
        comma-separated list of name patterns with * and ?), follows ports that come and go,
        and prints one line per message: time, sending port, message and, with RACK, what it
        maps to, e.g.

          2.381 24:0 CC7 ch1 = 64 → mix.gain2 = -17 dB

        Runs until Ctrl-C or SIGTERM (exit status 0), or for --seconds N.
          --clock     also show clock ticks and active sensing (hidden unless the tempo changes)
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valueOptions: ["--connect", "--seconds"], flagOptions: ["--clock"])
        guard a.positional.count <= 1 else { throw UsageError(message: "midi-monitor takes at most one rack file\n\n\(help)") }
        let seconds = try a.double("--seconds", range: 0.01...1e7)
        var patterns: [String] = []
        var mapper: MIDIMapper?
        if let path = a.positional.first {
            let plan = try RackFiles.load(path, registry: Registry.standard, options: GraphCompiler.Options())
            for w in plan.warnings { Console.err("\(path): warning: \(w)") }
            mapper = MIDIMapper(plan: plan, presetsByDefault: true)  // as `play` maps it
            patterns = plan.rack.midi.connect
        }
        if let list = a.options["--connect"] { patterns = MIDICommandSupport.patterns(list) }

        let signals = MIDICommandSupport.blockTerminationSignals()
        let input = try MIDIInput(options: MIDIInput.Options(patterns: patterns, monitor: true), mapper: mapper, events: nil)
        try input.start()
        Console.err("listening on \(input.inputName)" + (patterns.isEmpty ? " (every hardware port)" : " (ports matching \(patterns.joined(separator: ", ")))"))
        let start = monotonicSeconds()
        let showClock = a.flags.contains("--clock")
        var out = MIDICommandSupport.LineWriter()
        while true {
            for line in input.takeLog() { out.line("# \(line)") }
            while let r = input.monitor?.pop() {
                if let text = describe(r, start: start, mapper: mapper, showClock: showClock) { out.line(text) }
            }
            out.flush()
            if let seconds, monotonicSeconds() - start >= seconds { break }
            if MIDICommandSupport.waitForSignal(signals, milliseconds: 10) { break }
        }
        input.stop()
        for line in input.takeLog() { out.line("# \(line)") }
        while let r = input.monitor?.pop() {
            if let text = describe(r, start: start, mapper: mapper, showClock: showClock) { out.line(text) }
        }
        out.flush()
        Console.err(
            "\(counted(input.messagesReceived, "message"))" + (input.sysExSkipped > 0 ? ", \(input.sysExSkipped) SysEx skipped" : "")
                + (input.inputOverruns > 0 ? ", \(input.inputOverruns) input overruns" : ""))
        return 0
    }

    /// One monitor line, or nil for what is hidden (clock ticks, active sensing).
    static func describe(_ r: MIDIMonitorRecord, start: Double, mapper: MIDIMapper?, showClock: Bool) -> String? {
        let m = r.message
        if !showClock && (m.status == 0xFE || (m.status == 0xF8 && r.outcome.kind != .tempo)) { return nil }
        let time = MIDICommandSupport.seconds(r.seconds - start)
        let source = r.sourceClient >= 0 ? "\(r.sourceClient):\(r.sourcePort)" : "-"
        let what = m.status == 0 ? "(a 14-bit half alone)" : m.description
        guard let mapper else { return "\(time) \(source) \(what)" }
        return "\(time) \(source) \(what) → \(mapper.describe(r.outcome))"
    }
}

/// What the MIDI commands share: signals, patterns, unbuffered output.
enum MIDICommandSupport {
    static func patterns(_ list: String) -> [String] {
        list.split(separator: ",").map { $0.trimmingCharacters(in: " ") }.filter { !$0.isEmpty }
    }

    /// Blocks SIGINT and SIGTERM in this thread and the threads it starts, so that
    /// `waitForSignal` can take them. Call before starting threads.
    static func blockTerminationSignals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        return set
    }

    /// Waits up to `milliseconds` for SIGINT/SIGTERM; true if one came.
    static func waitForSignal(_ set: sigset_t, milliseconds: Int) -> Bool {
        var s = set
        var ts = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
        return sigtimedwait(&s, nil, &ts) > 0
    }

    /// `12.345`.
    static func seconds(_ t: Double) -> String {
        let ms = Int((max(t, 0) * 1000).rounded())
        let frac = String(ms % 1000)
        return "\(ms / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
    }

    /// Lines to stdout, written as they come (a pipe to another program sees them at once).
    struct LineWriter {
        var pending: [UInt8] = []
        mutating func line(_ s: String) {
            pending += Array(s.utf8)
            pending.append(10)
        }
        mutating func flush() {
            var offset = 0
            while offset < pending.count {
                let n = pending.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
                if n <= 0 { break }
                offset += n
            }
            pending.removeAll(keepingCapacity: true)
        }
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var s = self
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}
