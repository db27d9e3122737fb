#if canImport(Glibc)
import Glibc
#endif

/// Writing to the terminal: results to stdout, messages and progress to stderr.
/// Thread: main (never the render thread).
enum Console {
    static func out(_ s: String) {
        print(s)
    }

    static func err(_ s: String) {
        writeStderr(s + "\n")
    }

    static func writeStderr(_ s: String) {
        var bytes = Array(s.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }

    static var stderrIsTerminal: Bool { isatty(2) != 0 }

    /// A one-line progress bar, redrawn in place (only when stderr is a terminal).
    static func progress(_ fraction: Double, label: String) {
        guard stderrIsTerminal else { return }
        let width = 30
        let filled = Int((fraction * Double(width)).rounded())
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        writeStderr("\r\(label) [\(bar)] \(Int(fraction * 100))%")
    }

    static func endProgress() {
        guard stderrIsTerminal else { return }
        writeStderr("\r\u{1B}[K")
    }
}
