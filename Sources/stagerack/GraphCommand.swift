import StageCore
import StageControl
import StageDrivers

/// `stagerack graph`: the rack as a Graphviz DOT digraph.
enum GraphCommand {
    static let help = """
        usage: stagerack graph RACK

        Prints the rack as a Graphviz DOT digraph (units labelled with their type,
        connections labelled with their input bus). Draw it with: dot -Tsvg -o rack.svg
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valueOptions: [], flagOptions: [])
        guard a.positional.count == 1 else { throw UsageError(message: "graph takes one rack file\n\n\(help)") }
        let rack = try RackFiles.read(a.positional[0], registry: Registry.standard)
        let problems = GraphCompiler(registry: Registry.standard).check(rack)
        if !problems.isEmpty { throw RackError(problems) }
        Console.out(dot(rack))
        return 0
    }

    static func quote(_ s: String) -> String {
        "\"" + s.replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"").replacingOccurrences("\n", "\\n") + "\""
    }

    static func dot(_ rack: RackDescription) -> String {
        var lines = ["digraph \(quote(rack.name.isEmpty ? "rack" : rack.name)) {", "  rankdir=LR;", "  node [shape=box, style=rounded];"]
        for u in rack.units {
            let shape = u.type == "input" || u.type == "output" ? ", shape=ellipse" : ""
            lines.append("  \(quote(u.id)) [label=\(quote("\(u.id)\n\(u.type)"))\(shape)];")
        }
        for c in rack.connections {
            lines.append("  \(quote(c.from.unit)) -> \(quote(c.to.unit)) [label=\(quote("in \(c.to.bus)"))];")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }
}

extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
