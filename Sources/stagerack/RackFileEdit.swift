import Foundation
import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// Edits a rack file keeping its text: reads it, applies an edit of the text
/// (`RackTextEditor`), checks that the result is a valid rack, and replaces the file
/// atomically (a temporary file renamed over it). `stagerack learn --write` and "save" from
/// the remote page both write racks this way. Thread: any one at a time per file.
enum RackFileEdit {
    /// Edits `path`, writing the result to `destination` (default: `path` itself; the rack
    /// is checked as if it were still at `path`, so its relative file names mean the same).
    /// `willReplace` sees the new text just before the file is replaced (`--watch` then
    /// knows the write is its own). Returns the path written.
    @discardableResult
    static func apply(
        to path: String, writingTo destination: String? = nil, willReplace: (String) -> Void = { _ in },
        edit: (String) throws -> String
    ) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw UsageError(message: "cannot read \(path)")
        }
        let edited = try edit(text)
        _ = try RackReader(registry: Registry.standard).read(text: edited, file: path)
        let target = destination ?? path
        let temporary = target + ".stagerack-new"
        do {
            try edited.write(toFile: temporary, atomically: false, encoding: .utf8)
        } catch {
            throw UsageError(message: "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        willReplace(edited)
        guard rename(temporary, target) == 0 else {
            let e = String(cString: strerror(errno))
            unlink(temporary)
            throw UsageError(message: "cannot replace \(target): \(e)")
        }
        return target
    }
}
