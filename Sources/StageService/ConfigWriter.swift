import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes one setting into a config file, keeping the rest of its text (comments, order),
/// creating the file (and its folder) when missing. Thread: control.
public enum ConfigWriter {
    public struct WriteError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    public static func setInteger(_ key: String, _ value: Int, in path: String) throws(WriteError) {
        let edited: String
        switch ConfigFiles.read(path) {
        case .missing:
            makeFolders(for: path)
            edited = "{\n  \"\(key)\": \(value)\n}\n"
        case .unreadable(let why):
            throw WriteError(description: "\(path): \(why)")
        case .text(let text):
            do {
                edited = try RackTextEditor.settingNumber(key, to: value, in: text)
            } catch {
                throw WriteError(description: "\(path): \(error.message)")
            }
        }
        // Write beside it, then rename over it: the file is never half written.
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw WriteError(description: "\(path): \(String(cString: strerror(errno)))") }
        let bytes = Array(edited.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw WriteError(description: "\(path): could not write the file")
        }
    }

    static func makeFolders(for path: String) {
        var folder = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/").dropLast() {
            folder += "/" + part
            mkdir(folder, 0o755)
        }
    }
}
