#if canImport(Glibc)
import Glibc
#endif

/// Where `stagerack play` finds its config files, and reading them. Thread: control.
///
/// Without `--config FILE` or `$STAGERACK_CONFIG`, both of these are read when they exist,
/// the second overriding the first key by key:
/// 1. `/etc/stagerack/stagerack.json` (the service's; written by `install-service`);
/// 2. `$XDG_CONFIG_HOME/stagerack/stagerack.json` (default `~/.config/stagerack/stagerack.json`).
/// `--config FILE` or `$STAGERACK_CONFIG=FILE` reads only that file (it must exist);
/// `--no-config` or `$STAGERACK_CONFIG=none` reads none.
public enum ConfigFiles {
    public static let systemPath = "/etc/stagerack/stagerack.json"
    public static let environmentVariable = "STAGERACK_CONFIG"

    public struct Candidate: Sendable, Equatable {
        public var path: String
        /// A file named explicitly must exist; the standard places are optional.
        public var required: Bool
    }

    /// The user's config path from `XDG_CONFIG_HOME` or `HOME`.
    public static func userPath(environment: [String: String]) -> String? {
        if let x = environment["XDG_CONFIG_HOME"], x.hasPrefix("/") { return x + "/stagerack/stagerack.json" }
        if let h = environment["HOME"], !h.isEmpty { return h + "/.config/stagerack/stagerack.json" }
        return nil
    }

    /// The files to read, lowest precedence first.
    public static func candidates(
        explicit: String?, noConfig: Bool, environment: [String: String], systemPath: String = systemPath
    ) -> [Candidate] {
        if noConfig { return [] }
        if let explicit { return [Candidate(path: explicit, required: true)] }
        if let e = environment[environmentVariable], !e.isEmpty {
            return e == "none" ? [] : [Candidate(path: e, required: true)]
        }
        var list = [Candidate(path: systemPath, required: false)]
        if let u = userPath(environment: environment), u != systemPath { list.append(Candidate(path: u, required: false)) }
        return list
    }

    public enum FileText: Sendable, Equatable {
        case text(String)
        case missing
        case unreadable(String)
    }

    /// Reads a whole text file. Thread: control.
    public static func read(_ path: String) -> FileText {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let e = errno
            return e == ENOENT ? .missing : .unreadable(String(cString: strerror(e)))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .unreadable(String(cString: strerror(errno)))
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
            if bytes.count > 1 << 20 { return .unreadable("larger than 1 MB: not a config file") }
        }
        guard let s = String(validating: bytes, as: UTF8.self) else { return .unreadable("not UTF-8 text") }
        return .text(s)
    }
}

/// Puts the layers together: config files < environment < command line, then (once the
/// rack is known) built-in defaults < the rack's `io` section < those.
/// Every problem of every layer is reported at once. Thread: control.
public struct SettingsResolution: Sendable {
    public var reader: SettingsReader
    public var environment: [String: String]
    public var readFile: @Sendable (String) -> ConfigFiles.FileText

    public init(
        reader: SettingsReader, environment: [String: String],
        readFile: @escaping @Sendable (String) -> ConfigFiles.FileText = ConfigFiles.read
    ) {
        self.reader = reader
        self.environment = environment
        self.readFile = readFile
    }

    /// What the person running `play` asked for, with the config files that were read.
    public func userSettings(
        commandLine: () throws(SettingsError) -> PlaySettings, candidates: [ConfigFiles.Candidate]
    ) throws(SettingsError) -> (settings: PlaySettings, files: [String]) {
        var problems: [String] = []
        var onlyCommandLine = true
        var layers: [PlaySettings] = []
        var files: [String] = []
        for c in candidates {
            switch readFile(c.path) {
            case .text(let t):
                files.append(c.path)
                do { layers.append(try reader.fromFile(text: t, path: c.path)) } catch {
                    problems += error.problems
                    onlyCommandLine = false
                }
            case .missing:
                if c.required {
                    problems.append("\(c.path): no such config file")
                    onlyCommandLine = false
                }
            case .unreadable(let why):
                problems.append("\(c.path): cannot be read: \(why)")
                onlyCommandLine = false
            }
        }
        do { layers.append(try reader.fromEnvironment(environment)) } catch {
            problems += error.problems
            onlyCommandLine = false
        }
        do { layers.append(try commandLine()) } catch { problems += error.problems }
        if !problems.isEmpty { throw SettingsError(problems, onCommandLine: onlyCommandLine) }
        return (PlaySettings.stacked(layers), files)
    }

    /// The message when no layer names a rack.
    public static let noRackMessage =
        "no rack to play: give one (stagerack play RACK), set $STAGERACK_RACK, or name it as "
        + "\"rack\" in \(ConfigFiles.systemPath) or ~/.config/stagerack/stagerack.json"

    /// Everything `play` needs: defaults < the rack's io section < `user`.
    public static func final(user: PlaySettings, rack: PlaySettings, underSystemd: Bool) -> PlaySettings {
        PlaySettings.stacked([.builtIn(underSystemd: underSystemd), rack, user])
    }
}
