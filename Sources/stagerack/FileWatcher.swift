#if canImport(Glibc)
import Glibc
#endif

/// Watches rack files for changes with inotify (an editor's save, a copy over ssh).
/// Thread: main (polled from the control loop; never blocks).
final class FileWatcher {
    private let fd: Int32
    private var watches: [Int32: String] = [:]

    /// nil when inotify is unavailable.
    init?(paths: [String]) {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        // Watch the folders: editors replace files (rename over), which drops a file watch.
        for path in Set(paths) {
            let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
            let wd = inotify_add_watch(fd, folder.isEmpty ? "/" : folder, UInt32(IN_CLOSE_WRITE | IN_MOVED_TO))
            if wd >= 0 { watches[wd] = folder.isEmpty ? "/" : folder }
        }
    }

    deinit { close(fd) }

    /// Paths (as given, folder + name) written since the last call.
    func changed() -> Set<String> {
        var result = Set<String>()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= n {
                let (wd, length) = buffer.withUnsafeBytes { raw -> (Int32, Int) in
                    let e = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (e.wd, Int(e.len))
                }
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let nameBytes = buffer[nameStart..<min(nameStart + length, n)].prefix { $0 != 0 }
                if let folder = watches[wd] {
                    let name = String(decoding: nameBytes, as: UTF8.self)
                    result.insert(folder == "." ? name : "\(folder)/\(name)")
                    result.insert(name)
                }
                offset = nameStart + length
            }
        }
        return result
    }
}
