import StageCore
import StageControl
import StageDrivers

/// `stagerack validate`: checks rack files and prints every problem with its place.
enum ValidateCommand {
    static let help = """
        usage: stagerack validate RACK|SETLIST...

        Checks each rack file (syntax, keys, unit types, parameter values, MIDI mappings,
        the graph; every rack of a setlist) and prints every problem as FILE:LINE:COL: path: message.
        Exit status 0 only if every file is valid.
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valueOptions: [], flagOptions: [])
        guard !a.positional.isEmpty else { throw UsageError(message: "validate takes one or more rack files\n\n\(help)") }
        var bad = 0
        for path in a.positional {
            do {
                let setlist = try RackFiles.readSetlist(path, checkSongs: false)
                let missing = RackFiles.missingSongs(setlist) + RackFiles.missingTracks(setlist)
                var failed = !missing.isEmpty
                for m in missing { Console.err(m.diagnostic.description) }
                let absent = Set(missing.map(\.song))
                for (i, entry) in setlist.entries.enumerated() where !absent.contains(i) {
                    do {
                        let rack = try RackFiles.readSong(setlist, i, registry: Registry.standard)
                        let plan = try GraphCompiler(registry: Registry.standard).compile(rack, options: GraphCompiler.Options())
                        for n in rack.notes { Console.err(n.description) }
                        for w in plan.warnings { Console.err("\(entry.rack): warning: \(w)") }
                        if plan.outputs.count > 1 {
                            let list = plan.outputs.map { o in
                                "\"\(o.unitID)\" on \(o.deviceChannels.count == 1 ? "channel" : "channels") "
                                    + o.deviceChannels.map { String($0 + 1) }.joined(separator: "-")
                            }
                            Console.out("\(entry.rack): \(plan.outputs.count) outputs: \(list.joined(separator: ", ")) (playback opens \(plan.outputChannelCount) channels)")
                        }
                    } catch {
                        failed = true
                        for d in error.diagnostics { Console.err(d.description) }
                    }
                }
                if failed {
                    bad += 1
                } else if setlist.entries.count == 1 && setlist.entries[0].rack == path {
                    Console.out("\(path): ok")
                } else {
                    Console.out("\(path): ok (setlist of \(counted(setlist.entries.count, "rack")))")
                }
            } catch {
                bad += 1
                for d in error.diagnostics { Console.err(d.description) }
            }
        }
        return bad == 0 ? 0 : 1
    }
}
