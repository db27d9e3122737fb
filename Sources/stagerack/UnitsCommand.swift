import StageCore
import StageLV2

#if canImport(Glibc)
import Glibc
#endif

/// `stagerack units`: every unit type with its settings and parameters.
enum UnitsCommand {
    static let help = """
        usage: stagerack units [TYPE | lv2 | PLUGIN-URI [--state [--preset NAME]]]

        Lists every unit type, or one, with its settings and its parameters
        (name, range, unit, default). `units lv2` lists the installed LV2 plugins
        with their URIs; `units URI` shows one plugin's parameters and presets;
        `units URI --state` prints a new instance's state (after `--preset NAME`)
        as a rack unit's "state".
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valueOptions: ["--preset"], flagOptions: ["--state"])
        var types = Registry.standard.types
        if let name = a.positional.first, name.contains(":"), a.flags.contains("--state") {
            return emit(try LV2Listing.state(name, preset: a.options["--preset"]))
        }
        if let name = a.positional.first, name.contains(":") {
            return emit(try LV2Listing.plugin(name))
        }
        if a.positional.first == "lv2" { return emit(LV2Listing.installed()) }
        if let name = a.positional.first {
            guard let t = Registry.standard.type(named: name) else {
                throw UsageError(message: "no unit type \"\(name)\"\(Suggest.hint(for: name, in: Registry.standard.names))")
            }
            types = [t]
        }
        // Collected and written with one write(2) call: into a pipe that is one atomic
        // write, so `stagerack units | grep -q` does not see the command die of SIGPIPE halfway.
        var lines: [String] = []
        for (i, t) in types.enumerated() {
            if i > 0 { lines.append("") }
            lines.append("\(t.name): \(t.summary)")
            for s in t.settings {
                lines.append("  setting \(s.key): \(s.kind.summary)\(s.required ? " (required)" : "") - \(s.help)")
            }
            lines += t.parameters(UnitSettings()).map(parameterLine)
        }
        return emit(lines)
    }

    /// One parameter as `units` shows it.
    static func parameterLine(_ p: ParameterSpec) -> String {
        var line = "  \(p.id): "
        if p.unit == .choice {
            line += p.choices.joined(separator: " | ") + ", default \(p.format(p.defaultValue))"
        } else if p.unit == .boolean {
            line += "on/off, default \(p.format(p.defaultValue))"
        } else {
            let u = p.unit == .generic ? "" : " \(p.unit.rawValue)"
            line += "\(formatNumber(p.range.lowerBound))…\(formatNumber(p.range.upperBound))\(u), default \(formatNumber(p.defaultValue))"
        }
        if !p.help.isEmpty { line += " - \(p.help)" }
        return line
    }

    /// Writes `lines` with one write(2) call. Thread: main.
    static func emit(_ lines: [String]) -> Int32 {
        var bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { break }
            offset += n
        }
        return 0
    }
}
