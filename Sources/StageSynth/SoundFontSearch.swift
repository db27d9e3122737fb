import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// Where a `soundfont` setting led: the file, why it was picked, and every place looked at.
public struct SoundFontChoice: Sendable, Equatable, CustomStringConvertible {
    /// The file that will be loaded.
    public var path: String
    /// How it was chosen, for the app's log: "named in the rack", "default: General MIDI font
    /// FluidR3_GM.sf2", "default: bundled stagerack-basic.sf2 (no General MIDI font installed)".
    public var reason: String
    /// Every candidate path tried, in order, up to and including the one found.
    public var searched: [String]

    public var description: String { "\(path) (\(reason))" }
}

/// Finds SoundFonts by name on the search path. Pure: the environment, the executable's
/// path and the current directory are passed in (tests give their own). Thread: any.
///
/// Search path, in order (the same from any working directory: the current directory only
/// turns a relative rack folder into an absolute one, and every path shown is absolute):
/// 1. the rack file's folder (`UnitSettings.rackDirectory`);
/// 2. the folders in `$STAGERACK_SOUNDFONTS` (colon-separated);
/// 3. `soundfonts/` beside the rack's folder (`racks/../soundfonts`: a checkout's racks, and
///    the installed `share/stagerack/racks` beside `share/stagerack/soundfonts`);
/// 4. the executable's: `soundfonts/` next to it, the installed share folder
///    `../share/stagerack/soundfonts` from it, and the `soundfonts/` of the nearest folder
///    above it that holds `Package.swift` (a checkout running its `.build` products);
/// 5. `$XDG_DATA_HOME/soundfonts` (default `~/.local/share/soundfonts`);
/// 6. `/usr/share/sounds/sf2` (Debian's fluid-soundfont-gm, timgm6mb-soundfont);
/// 7. `/usr/share/soundfonts`.
///
/// A name without an extension also matches `name.sf2` and `name.sf3`. An absolute path (or
/// `~/...`) is used as it is. With no setting, the default is the first of
/// `defaultNames` found: a General MIDI font if one is installed, else the bundled one.
public struct SoundFontSearch: Sendable {
    /// General MIDI fonts first (best first), then the font the repository ships.
    public static let defaultNames = ["FluidR3_GM.sf2", "TimGM6mb.sf2", bundledName]
    /// The SoundFont the repository makes itself (soundfonts/stagerack-basic.sf2).
    public static let bundledName = "stagerack-basic.sf2"
    /// The environment variable naming extra SoundFont folders.
    public static let environmentVariable = "STAGERACK_SOUNDFONTS"

    public var rackDirectory: String
    public var environment: [String: String]
    public var executablePath: String
    public var currentDirectory: String

    public init(
        rackDirectory: String, environment: [String: String]? = nil, executablePath: String? = nil,
        currentDirectory: String? = nil
    ) {
        self.environment = environment ?? Self.processEnvironment()
        self.executablePath = executablePath ?? Self.processExecutablePath()
        self.currentDirectory = currentDirectory ?? Self.processCurrentDirectory()
        self.rackDirectory = Self.absolute(rackDirectory, from: self.currentDirectory)
    }

    /// `path` made absolute against `directory` (an empty path stays empty).
    static func absolute(_ path: String, from directory: String) -> String {
        guard !path.isEmpty, !path.hasPrefix("/"), !directory.isEmpty else { return path.isEmpty ? path : normalize(path) }
        return normalize(directory + "/" + path)
    }

    /// The folders searched, in order, without duplicates (only those that exist).
    public var directories: [String] {
        var dirs: [String] = []
        func add(_ d: String) {
            guard !d.isEmpty else { return }
            let n = Self.normalize(d)
            if !dirs.contains(n) && Self.isDirectory(n) { dirs.append(n) }
        }
        add(rackDirectory)
        for d in (environment[Self.environmentVariable] ?? "").split(separator: ":") {
            add(Self.absolute(String(d), from: currentDirectory))
        }
        if !rackDirectory.isEmpty { add(Self.parent(rackDirectory) + "/soundfonts") }
        let exeDir = Self.parent(executablePath)
        if !exeDir.isEmpty {
            add(exeDir + "/soundfonts")
            add(installedDirectory)
            if let repo = Self.repositoryAbove(exeDir) { add(repo + "/soundfonts") }
        }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            add(xdg + "/soundfonts")
        } else if let home = environment["HOME"], !home.isEmpty {
            add(home + "/.local/share/soundfonts")
        }
        add("/usr/share/sounds/sf2")
        add("/usr/share/soundfonts")
        return dirs
    }

    /// The installed share folder beside the executable (`/usr/local/bin/stagerack` →
    /// `/usr/local/share/stagerack/soundfonts`); empty when the executable is unknown.
    var installedDirectory: String {
        let exeDir = Self.parent(executablePath)
        return exeDir.isEmpty ? "" : Self.normalize(Self.parent(exeDir) + "/share/stagerack/soundfonts")
    }

    /// The folders a message should name: those searched, plus the standard ones that do not
    /// exist on this machine (so the performer learns where a font could go).
    public var describedDirectories: [String] {
        var dirs = directories
        var standard: [String] = []
        if !rackDirectory.isEmpty { standard.append(rackDirectory) }
        let exeDir = Self.parent(executablePath)
        if !exeDir.isEmpty && Self.repositoryAbove(exeDir) == nil { standard.append(installedDirectory) }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            standard.append(xdg + "/soundfonts")
        } else if let home = environment["HOME"], !home.isEmpty {
            standard.append(home + "/.local/share/soundfonts")
        }
        standard += ["/usr/share/sounds/sf2", "/usr/share/soundfonts"]
        for d in standard.map(Self.normalize) where !dirs.contains(d) { dirs.append(d) }
        return dirs
    }

    /// Resolves a `soundfont` setting (nil: the default). Throws a `UnitError` naming every
    /// place searched when nothing is found. Thread: control.
    public func resolve(_ setting: String?) throws -> SoundFontChoice {
        guard let setting, !setting.isEmpty else { return try resolveDefault() }
        var name = setting
        if name.hasPrefix("~/"), let home = environment["HOME"] { name = home + name.dropFirst(1) }
        let variants = Self.variants(of: name)
        var searched: [String] = []
        if name.hasPrefix("/") {
            for v in variants {
                searched.append(v)
                if Self.isFile(v) { return SoundFontChoice(path: v, reason: "named in the rack", searched: searched) }
            }
            throw UnitError("synth: SoundFont \"\(setting)\" not found (searched: \(searched.joined(separator: ", ")))")
        }
        var bases = directories
        if name.contains("/") && rackDirectory.isEmpty && !currentDirectory.isEmpty {
            bases.insert(Self.normalize(currentDirectory), at: 0)  // a relative path, from here
        }
        for dir in bases {
            for v in variants {
                let candidate = Self.normalize(dir + "/" + v)
                searched.append(candidate)
                if Self.isFile(candidate) {
                    return SoundFontChoice(path: candidate, reason: "named in the rack", searched: searched)
                }
            }
        }
        for dir in describedDirectories where !directories.contains(dir) {
            searched.append(Self.normalize(dir + "/" + name) + " (folder missing)")
        }
        throw UnitError(
            "synth: SoundFont \"\(setting)\" not found. Searched: \(searched.joined(separator: ", ")). "
                + "Give a path, put the file in one of these folders, or name a folder in \(Self.environmentVariable)."
        )
    }

    private func resolveDefault() throws -> SoundFontChoice {
        var searched: [String] = []
        let dirs = directories
        for name in Self.defaultNames {
            for dir in dirs {
                let candidate = Self.normalize(dir + "/" + name)
                searched.append(candidate)
                if Self.isFile(candidate) {
                    let reason =
                        name == Self.bundledName
                        ? "default: bundled \(name) (no General MIDI font installed)"
                        : "default: General MIDI font \(name)"
                    return SoundFontChoice(path: candidate, reason: reason, searched: searched)
                }
            }
        }
        throw UnitError(
            "synth: no \"soundfont\" given and none of \(Self.defaultNames.joined(separator: ", ")) was found in "
                + "\(describedDirectories.joined(separator: ", ")). Install fluid-soundfont-gm or "
                + "timgm6mb-soundfont, or name a SoundFont with \"soundfont\".")
    }

    // MARK: - Files (Glibc only: no Foundation in this module)

    static func variants(of name: String) -> [String] {
        let last = name.split(separator: "/").last.map(String.init) ?? name
        return last.contains(".") ? [name] : [name, name + ".sf2", name + ".sf3"]
    }

    static func isFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && access(path, R_OK) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Removes `.` and `..` components and duplicate slashes (textually).
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for p in path.split(separator: "/", omittingEmptySubsequences: true) {
            if p == "." { continue }
            if p == "..", let last = parts.last, last != ".." {
                parts.removeLast()
                continue
            }
            parts.append(p)
        }
        let joined = parts.joined(separator: "/")
        return path.hasPrefix("/") ? "/" + joined : (joined.isEmpty ? "." : joined)
    }

    static func parent(_ path: String) -> String {
        guard let i = path.lastIndex(of: "/") else { return "" }
        return i == path.startIndex ? "/" : String(path[..<i])
    }

    /// The nearest folder at or above `dir` holding `Package.swift` and `soundfonts/`.
    static func repositoryAbove(_ dir: String) -> String? {
        var d = normalize(dir)
        for _ in 0..<8 {
            if isFile(d + "/Package.swift") && isDirectory(d + "/soundfonts") { return d }
            let p = parent(d)
            if p.isEmpty || p == d { return nil }
            d = p
        }
        return nil
    }

    static func processEnvironment() -> [String: String] {
        var env: [String: String] = [:]
        for key in [environmentVariable, "XDG_DATA_HOME", "HOME"] {
            if let v = getenv(key) { env[key] = String(cString: v) }
        }
        return env
    }

    static func processExecutablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return "" }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func processCurrentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        return buffer.withUnsafeMutableBufferPointer { b in
            guard let base = b.baseAddress, getcwd(base, b.count) != nil else { return "" }
            return String(cString: base)
        }
    }
}
