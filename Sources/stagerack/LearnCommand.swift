import Foundation
import StageCore
import StageControl
import StageDrivers

/// `stagerack learn`: the mapping entry for the next control moved.
enum LearnCommand {
    static let help = """
        usage: stagerack learn RACK --param UNIT.PARAM [--write] [--timeout SECONDS] [--connect PATTERNS]

        Waits for the next knob, fader, encoder, button or pad moved on a connected
        controller and prints the midi.map entry that maps it to UNIT.PARAM, e.g.

          { "cc": 7, "channel": 1, "to": "mix.gain2" }

        It tells 14-bit pairs, NRPN/RPN, relative encoders (turn them a few steps) and
        buttons (press and release) from plain knobs. With --write the entry is added to
        RACK's midi.map, the rest of the file unchanged. UNIT.bypass names a unit's bypass.
          --timeout SECONDS  give up after this long with no control moved (default 60)
          --connect PATTERNS ports to listen to (default: the rack's midi.connect)
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valueOptions: ["--param", "--timeout", "--connect"], flagOptions: ["--write"])
        guard a.positional.count == 1 else { throw UsageError(message: "learn takes one rack file\n\n\(help)") }
        guard let target = a.options["--param"] else { throw UsageError(message: "learn needs --param UNIT.PARAM") }
        let path = a.positional[0]
        let timeout = try a.double("--timeout", range: 0.1...86_400) ?? 60
        let plan = try RackFiles.load(path, registry: Registry.standard, options: GraphCompiler.Options())
        guard let (_, spec, _) = MIDIMapper.resolve(target, in: plan) else {
            let names = plan.unitIDs.enumerated().flatMap { u, id in plan.parameters[u].specs.map { "\(id).\($0.id)" } + ["\(id).bypass"] }
            throw UsageError(message: "\(path) has no parameter \(target)\(Suggest.hint(for: target, in: names))")
        }
        var patterns = plan.rack.midi.connect
        if let list = a.options["--connect"] { patterns = MIDICommandSupport.patterns(list) }

        let signals = MIDICommandSupport.blockTerminationSignals()
        let input = try MIDIInput(options: MIDIInput.Options(patterns: patterns, monitor: true), mapper: nil, events: nil)
        try input.start()
        defer { input.stop() }
        Console.err("move a control for \(target) (listening on \(input.inputName); Ctrl-C to give up)")
        var learn = MIDILearn()
        let start = monotonicSeconds()
        while true {
            for line in input.takeLog() { Console.err("# \(line)") }
            while let r = input.monitor?.pop() {
                if learn.feed(r.message, seconds: r.seconds), learn.values.count + (learn.sawLSB ? 1 : 0) == 1 {
                    Console.err("heard \(r.message) from \(r.sourceClient):\(r.sourcePort)…")
                }
            }
            let now = monotonicSeconds()
            if learn.isSettled(at: now) { break }
            if !learn.hasControl && now - start >= timeout {
                Console.err("stagerack learn: no control moved in \(formatNumber(timeout)) s")
                return 1
            }
            if MIDICommandSupport.waitForSignal(signals, milliseconds: 10) { return 130 }
        }
        guard let (mapping, notes) = learn.mapping(target: target, spec: spec) else { return 1 }
        for n in notes { Console.err("note: \(n)") }
        for m in plan.rack.midi.map where m.source == mapping.source && (m.channel == nil || m.channel == mapping.channel) {
            Console.err("note: \(m.source.label(hires: m.hires)) already maps to \(m.target ?? m.action?.rawValue ?? "?") in \(path)")
        }
        let entry = mapping.jsonText
        Console.out(entry)
        guard a.flags.contains("--write") else { return 0 }
        try write(entry, into: path)
        Console.err("added to \(path): midi.map")
        return 0
    }

    /// Adds `entry` to the rack file's midi.map, keeping the rest of its text, and checks
    /// the result before replacing the file (`RackFileEdit`, shared with "save" from the page).
    static func write(_ entry: String, into path: String) throws {
        _ = try RackFileEdit.apply(to: path) { text in try RackTextEditor.addingMIDIMapping(entry, to: text) }
    }
}
