import StageCore
import StageDrivers

/// `stagerack validate`: checks rack files and prints every problem with its place.
enum ValidateCommand {
    static let help = """
        usage: stagerack validate RACK...

        Checks each rack file (syntax, keys, unit types, parameter values, MIDI mappings,
        the graph) and prints every problem as FILE:LINE:COL: path: message.
        Exit status 0 only if every file is valid.
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valueOptions: [], flagOptions: [])
        guard !a.positional.isEmpty else { throw UsageError(message: "validate takes one or more rack files\n\n\(help)") }
        var bad = 0
        for path in a.positional {
            do {
                let plan = try RackFiles.load(path, registry: Registry.standard, options: GraphCompiler.Options())
                for w in plan.warnings { Console.err("\(path): warning: \(w)") }
                Console.out("\(path): ok (\(plan.units.count) units)")
            } catch {
                bad += 1
                for d in error.diagnostics { Console.err(d.description) }
            }
        }
        return bad == 0 ? 0 : 1
    }
}
