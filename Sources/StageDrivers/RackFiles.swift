import Foundation
import StageCore

/// Reading rack files from disk. Thread: control.
public enum RackFiles {
    /// Reads and checks the rack at `path`: syntax, keys, types, values (not the graph).
    public static func read(_ path: String, registry: UnitRegistry) throws(RackError) -> RackDescription {
        let text: String
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            guard let s = String(data: data, encoding: .utf8) else {
                throw RackError([RackDiagnostic(file: path, location: nil, path: "", message: "the file is not UTF-8 text")])
            }
            text = s
        } catch let e as RackError {
            throw e
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file"
            throw RackError([RackDiagnostic(file: path, location: nil, path: "", message: reason)])
        }
        return try RackReader(registry: registry).read(text: text, file: path)
    }

    /// Reads, checks and compiles: every problem of the file and of its graph.
    public static func load(
        _ path: String, registry: UnitRegistry, options: GraphCompiler.Options
    ) throws(RackError) -> RenderPlan {
        let rack = try read(path, registry: registry)
        return try GraphCompiler(registry: registry).compile(rack, options: options)
    }
}

/// Reading MIDI files from disk. Thread: control.
public enum MIDIFiles {
    public struct ReadError: Error, CustomStringConvertible {
        public var path: String
        public var message: String
        public var description: String { "\(path): \(message)" }
    }

    public static func read(_ path: String) throws(ReadError) -> StandardMIDIFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ReadError(path: path, message: FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file")
        }
        do {
            return try StandardMIDIFile(bytes: [UInt8](data))
        } catch {
            throw ReadError(path: path, message: error.description)
        }
    }
}

extension RackFiles {
    /// Reads a setlist, or a rack as a setlist of one. Thread: control.
    public static func readSetlist(_ path: String) throws(RackError) -> Setlist {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read as UTF-8 text" : "no such file"
            throw RackError([RackDiagnostic(file: path, location: nil, path: "", message: reason)])
        }
        if let root = try? JSONParser.parse(text), Setlist.isSetlist(root) {
            return try SetlistReader.read(text: text, file: path)
        }
        var single = Setlist()
        single.file = path
        single.entries = [Setlist.Entry(rack: path, name: path, program: nil, bank: 0, location: nil)]
        return single
    }
}
