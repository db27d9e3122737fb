/// What `stagerack install-service` does, as a list of steps computed before anything is
/// touched: `--dry-run` prints them, a real run performs them in order. Pure: the caller
/// lists the repository's files and reads the unit file. Thread: control.
public struct InstallOptions: Sendable, Equatable {
    /// The binary to install (normally the running one).
    public var executable: String
    /// The repository folder holding racks/, soundfonts/ and packaging/.
    public var sourceDirectory: String
    /// A staging root (like DESTDIR): every path is put under it, and no user is created
    /// and systemctl is not run. Empty: the live system.
    public var root: String = ""
    public var prefix: String = "/usr/local"
    public var configDirectory: String = "/etc/stagerack"
    public var unitDirectory: String = "/etc/systemd/system"
    public var user: String = "stagerack"
    /// The rack or setlist the service plays (nil: the installed default rack).
    public var rack: String?
    /// Replace an existing config file (the old one is kept as `.bak`).
    public var replaceConfig: Bool = false
    /// Run `systemctl enable` (and `--now`: start or restart it too).
    public var enable: Bool = true
    public var startNow: Bool = false
    /// Whether systemd is the running init (`/run/systemd/system` exists).
    public var systemdRunning: Bool = true

    public init(executable: String, sourceDirectory: String) {
        self.executable = executable
        self.sourceDirectory = sourceDirectory
    }

    public var binaryPath: String { prefix + "/bin/stagerack" }
    public var shareDirectory: String { prefix + "/share/stagerack" }
    public var configPath: String { configDirectory + "/stagerack.json" }
    public var unitPath: String { unitDirectory + "/stagerack.service" }
    public static let defaultRackName = "default.json"
}

public enum InstallStep: Sendable, Equatable, CustomStringConvertible {
    case makeDirectory(String)
    case copy(from: String, to: String, mode: Int)
    /// Writes `contents`; when `keepExisting`, an existing file is left alone.
    case write(path: String, contents: String, mode: Int, keepExisting: Bool, backup: Bool)
    /// Creates the system user in the `audio` group, or adds an existing one to it.
    case ensureUser(name: String, group: String, home: String)
    case run([String])
    /// A step left out, and why.
    case skip(String)

    public var description: String {
        switch self {
        case .makeDirectory(let p): return "mkdir -p \(p)"
        case .copy(let from, let to, let mode): return "install -m \(String(mode, radix: 8)) \(from) \(to)"
        case .write(let p, _, let mode, let keep, let backup):
            return "write \(p) (mode \(String(mode, radix: 8))\(keep ? ", only if missing" : backup ? ", old one kept as .bak" : ""))"
        case .ensureUser(let name, let group, let home):
            return "create system user \(name) in group \(group) (home \(home), no login), or add it to \(group)"
        case .run(let args): return args.joined(separator: " ")
        case .skip(let why): return "skip: \(why)"
        }
    }
}

public enum InstallPlan {
    /// The files of the repository to install, relative to `sourceDirectory`.
    public struct Sources: Sendable, Equatable {
        public var racks: [String]
        public var soundfonts: [String]
        /// packaging/stagerack.service as written in the repository.
        public var unitText: String
        /// The web page's files (web/), served by `play --web` from PREFIX/share/stagerack/web.
        public var web: [String]
        public init(racks: [String], soundfonts: [String], unitText: String, web: [String] = []) {
            self.racks = racks
            self.soundfonts = soundfonts
            self.unitText = unitText
            self.web = web
        }
    }

    /// The rack path the config will name: a rack of the repository's racks/ becomes its
    /// installed copy; any other path is used where it is (made absolute by the caller).
    public static func rackPath(_ o: InstallOptions, _ sources: Sources) -> String {
        let installedRacks = o.shareDirectory + "/racks/"
        guard let rack = o.rack else { return installedRacks + InstallOptions.defaultRackName }
        let repoRacks = o.sourceDirectory + "/racks/"
        if rack.hasPrefix(repoRacks), sources.racks.contains("racks/" + rack.dropFirst(repoRacks.count)) {
            return installedRacks + rack.dropFirst(repoRacks.count)
        }
        return rack
    }

    /// Why the service user (a system user in no group of the file's owner) could not read
    /// `path`, or nil: the first folder on the way that others cannot search (no `o+x`), or
    /// the file itself without `o+r`. `mode` gives a path's permission bits (nil: missing).
    /// A rack in a private home folder (mode 700 or 750) is the usual case.
    public static func unreadableByService(_ path: String, user: String, mode: (String) -> Int?) -> String? {
        var prefix = ""
        let parts = path.split(separator: "/").map(String.init)
        for part in parts.dropLast() {
            prefix += "/" + part
            guard let m = mode(prefix) else { return "\(prefix) does not exist" }
            if m & 0o001 == 0 {
                return "the service user \(user) cannot enter \(prefix) (mode \(String(m & 0o777, radix: 8))): put the rack "
                    + "where it can (its folder copied under /etc/stagerack or /usr/local/share/stagerack), or chmod o+x \(prefix)"
            }
        }
        guard let m = mode(path) else { return "\(path) does not exist" }
        if m & 0o004 == 0 {
            return "the service user \(user) cannot read \(path) (mode \(String(m & 0o777, radix: 8))): chmod o+r \(path)"
        }
        return nil
    }

    public static func make(_ o: InstallOptions, _ sources: Sources) -> [InstallStep] {
        let r = o.root
        var steps: [InstallStep] = []
        steps.append(.makeDirectory(r + o.prefix + "/bin"))
        steps.append(.copy(from: o.executable, to: r + o.binaryPath, mode: 0o755))
        // Subfolders are kept (racks/tracks, racks/setlists, racks/lv2): racks name their
        // backing tracks and setlists their racks by relative paths.
        for (folder, files) in [("racks", sources.racks), ("soundfonts", sources.soundfonts), ("web", sources.web)] where !files.isEmpty {
            var made: Set<String> = []
            for f in files {
                let relative = f.hasPrefix(folder + "/") ? String(f.dropFirst(folder.count + 1)) : f
                let to = r + o.shareDirectory + "/" + folder + "/" + relative
                let parent = String(to[..<(to.lastIndex(of: "/") ?? to.endIndex)])
                if made.insert(parent).inserted { steps.append(.makeDirectory(parent)) }
                steps.append(.copy(from: o.sourceDirectory + "/" + f, to: to, mode: 0o644))
            }
        }
        if r.isEmpty {
            steps.append(.ensureUser(name: o.user, group: "audio", home: "/var/lib/stagerack"))
        } else {
            steps.append(.skip("creating user \(o.user) (staging into \(r); the real install does it)"))
        }
        let rack = rackPath(o, sources)
        steps.append(.makeDirectory(r + o.configDirectory))
        steps.append(
            .write(path: r + o.configPath, contents: defaultConfig(rack: rack), mode: 0o644,
                   keepExisting: !o.replaceConfig, backup: o.replaceConfig))
        steps.append(.makeDirectory(r + o.unitDirectory))
        steps.append(.write(path: r + o.unitPath, contents: unitText(sources.unitText, o), mode: 0o644, keepExisting: false, backup: false))
        if !r.isEmpty {
            steps.append(.skip("systemctl (staging into \(r))"))
        } else if !o.systemdRunning {
            steps.append(.skip("systemctl: systemd is not running here; on the Pi run: systemctl enable --now stagerack"))
        } else {
            steps.append(.run(["runuser", "-u", o.user, "--", o.binaryPath, "validate", rack]))
            steps.append(.run(["systemctl", "daemon-reload"]))
            if o.enable { steps.append(.run(["systemctl", "enable", "stagerack.service"])) }
            if o.startNow { steps.append(.run(["systemctl", "restart", "stagerack.service"])) }
        }
        return steps
    }

    /// The repository's unit file adapted to the options: binary path, user, config file.
    public static func unitText(_ text: String, _ o: InstallOptions) -> String {
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var l = String(line)
            if l.hasPrefix("User=") { l = "User=\(o.user)" }
            l = l.replacing("/usr/local/bin/stagerack", with: o.binaryPath)
            l = l.replacing("/etc/stagerack/stagerack.json", with: o.configPath)
            lines.append(l)
        }
        return lines.joined(separator: "\n")
    }

    /// The config file the installer writes: the rack, waiting for devices for ever, and
    /// the other keys as comments.
    public static func defaultConfig(rack: String) -> String {
        """
        // StageRack settings for `stagerack play` and the stagerack service.
        // Environment variables (STAGERACK_RACK, STAGERACK_PLAYBACK, ...) override this file,
        // command-line flags override both. Device names: `stagerack devices`.
        // After editing: sudo systemctl restart stagerack (logs: journalctl -u stagerack -f)
        {
          // A rack or a setlist file.
          "rack": "\(rack)",
          // "playback": "hw:CARD=USB,DEV=0",
          // "capture": "hw:CARD=USB,DEV=0",
          // "sampleRate": 48000,
          // "period": 128,      // frames per period; 64 on a fast machine, 256 on a slow one
          // "periods": 2,
          // "captureChannels": 2,
          // "sampleFormat": "S32_LE",
          // Wait at boot for devices that appear late (USB): seconds or "forever".
          "deviceWait": "forever",
          // "status": true,     // one status line per second in the journal
        }

        """
    }
}
