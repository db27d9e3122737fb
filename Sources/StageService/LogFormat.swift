#if canImport(Glibc)
import Glibc
#endif

/// The level of a log line.
public enum LogLevel: String, Sendable, CaseIterable {
    case error, warning, info, status

    /// syslog priority, for journald's `<N>` line prefix.
    public var syslogPriority: Int {
        switch self {
        case .error: return 3
        case .warning: return 4
        case .info, .status: return 6
        }
    }
}

/// How log lines look on stderr: one line per event, `level: message`.
///
/// - Under systemd with stderr connected to the journal (`$JOURNAL_STREAM` names stderr's
///   device and inode), each line starts with `<N>` so that journald stores the syslog
///   priority (`journalctl -p warning` shows warnings and errors only); journald strips it.
/// - On a terminal, `error:` and `warning:` are coloured unless `$NO_COLOR` is set or
///   `TERM=dumb`. Anywhere else, no escape sequence is ever written (the message's own
///   control characters are replaced too).
/// - A message of several lines becomes several log lines, each with the prefix.
/// Thread: any (a value).
public struct LogFormat: Sendable, Equatable {
    public var journal: Bool
    public var colour: Bool

    public init(journal: Bool = false, colour: Bool = false) {
        self.journal = journal
        self.colour = colour
    }

    /// The bytes to write for one event, each line ending in `\n`.
    public func format(_ level: LogLevel, _ message: String) -> String {
        var out = ""
        for line in message.split(separator: "\n", omittingEmptySubsequences: true) {
            if journal { out += "<\(level.syslogPriority)>" }
            let clean = colour ? String(line) : Self.withoutControlCharacters(line)
            switch (colour, level) {
            case (true, .error): out += "\u{1B}[1;31merror:\u{1B}[0m "
            case (true, .warning): out += "\u{1B}[33mwarning:\u{1B}[0m "
            default: out += "\(level.rawValue): "
            }
            out += clean + "\n"
        }
        return out
    }

    /// Replaces ESC and other C0 controls (but tab) with `?`.
    static func withoutControlCharacters(_ s: Substring) -> String {
        guard s.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) else { return String(s) }
        return String(String.UnicodeScalarView(s.unicodeScalars.map { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F ? "?" : $0 }))
    }

    /// The format for stderr (fd 2) in this process's environment.
    public static func detect(environment: [String: String], fd: Int32 = 2) -> LogFormat {
        let terminal = isatty(fd) != 0
        let noColour = !(environment["NO_COLOR"] ?? "").isEmpty
        let colour = terminal && !noColour && environment["TERM"] != "dumb"
        return LogFormat(journal: isJournalStream(environment["JOURNAL_STREAM"], fd: fd), colour: colour)
    }

    /// True when `journalStream` (`DEVICE:INODE`, as systemd sets it) is the file `fd` is open on.
    public static func isJournalStream(_ journalStream: String?, fd: Int32) -> Bool {
        guard let js = journalStream else { return false }
        let parts = js.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }
}
