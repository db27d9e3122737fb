import Foundation
import StageService

#if canImport(Glibc)
import Glibc
#endif

/// `stagerack install-service`: puts the binary, the racks, the SoundFonts, a config file
/// and the systemd unit in place, creates the service user and enables the service. The
/// steps come from StageService's `InstallPlan`; `--dry-run` prints them. Thread: main.
enum InstallServiceCommand {
    static let help = """
        usage: stagerack install-service [--rack PATH] [--user NAME] [--prefix DIR] [--now]
                                         [--dry-run] [--root DIR] [--source DIR] [--no-enable]
                                         [--replace-config]

        Installs StageRack as a service that starts at boot (run it as root, e.g. with sudo):
          PREFIX/bin/stagerack                   this binary (PREFIX: /usr/local)
          PREFIX/share/stagerack/racks/          the repository's racks, with tracks/, setlists/, lv2/
          PREFIX/share/stagerack/soundfonts/     the repository's SoundFonts
          /etc/stagerack/stagerack.json          the config (kept if it exists)
          /etc/systemd/system/stagerack.service  the unit (packaging/stagerack.service)
        then creates the system user (in the audio group) and runs systemctl enable.

          --rack PATH         the rack or setlist the service plays (default: the installed
                              racks/default.json; a rack of the repository's racks/ is named by
                              its installed copy, any other path as it is: refused when the
                              service user could not read it, e.g. in a private home folder)
          --user NAME         the user the service runs as (default: stagerack)
          --prefix DIR        where the binary and shared files go (default: /usr/local)
          --now               also (re)start the service now
          --dry-run           print what would be done, change nothing
          --root DIR          install under DIR (a staging root, like DESTDIR): no user is
                              created and systemctl is not run
          --source DIR        the repository to take racks/, soundfonts/ and packaging/ from
                              (default: the one this binary was built in, or the current folder)
          --no-enable         do not enable the service
          --replace-config    write a new config even if one exists (the old one is kept as .bak)
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(
            args, valueOptions: ["--rack", "--user", "--prefix", "--root", "--source"],
            flagOptions: ["--dry-run", "--now", "--no-enable", "--replace-config"])
        guard a.positional.isEmpty else { throw UsageError(message: "install-service takes no arguments\n\n\(help)") }
        let exe = executablePath()
        let source = try a.options["--source"].map(absolute) ?? findSource(from: exe)
        var o = InstallOptions(executable: exe, sourceDirectory: source)
        if let user = a.options["--user"] {
            guard user.range(of: "^[a-z_][a-z0-9_-]{0,31}$", options: .regularExpression) != nil else {
                throw UsageError(message: "--user: \"\(user)\" is not a valid user name (lower case letters, digits, _ and -)")
            }
            o.user = user
        }
        if let prefix = a.options["--prefix"] {
            guard prefix.hasPrefix("/") else { throw UsageError(message: "--prefix takes an absolute path") }
            o.prefix = prefix.count > 1 && prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        }
        if let root = a.options["--root"] { o.root = absolute(root) }
        if let rack = a.options["--rack"] {
            let path = absolute(rack)
            guard FileManager.default.fileExists(atPath: path) else { throw UsageError(message: "--rack: no such file: \(path)") }
            o.rack = path
        }
        o.replaceConfig = a.flags.contains("--replace-config")
        o.enable = !a.flags.contains("--no-enable")
        o.startNow = a.flags.contains("--now")
        o.systemdRunning = FileManager.default.fileExists(atPath: "/run/systemd/system")

        let unitFile = source + "/packaging/stagerack.service"
        guard let unitText = try? String(contentsOfFile: unitFile, encoding: .utf8) else {
            throw UsageError(message: "cannot read \(unitFile) (give the repository with --source DIR)")
        }
        let sources = InstallPlan.Sources(
            racks: list(source, "racks", extensions: ["json", "md", "cho", "ogg", "oga", "opus", "wav", "flac", "mid", "midi", "sf2", "sf3"]),
            soundfonts: list(source, "soundfonts", extensions: ["sf2", "sf3", "md"]),
            unitText: unitText, web: list(source, "web", extensions: ["html", "css", "js", "png", "svg"]))
        // A rack outside the repository stays where it is: the service user must be able to read it.
        let named = InstallPlan.rackPath(o, sources)
        if o.root.isEmpty, named == o.rack,
           let why = InstallPlan.unreadableByService(named, user: o.user, mode: { p in
               var st = stat()
               return stat(p, &st) == 0 ? Int(st.st_mode) : nil
           }) {
            throw UsageError(message: "--rack \(named): refused: \(why)")
        }
        let steps = InstallPlan.make(o, sources)

        if a.flags.contains("--dry-run") {
            Console.out("stagerack install-service --dry-run: nothing is changed; a real run would do:")
            for s in steps { Console.out("  \(s)") }
            Console.out("the config would name the rack \(InstallPlan.rackPath(o, sources))")
            return 0
        }
        guard !o.root.isEmpty || geteuid() == 0 else {
            throw UsageError(message: "install-service changes the system: run it as root (sudo make install), or see what it would do with --dry-run")
        }
        for s in steps { try perform(s) }
        Console.out("installed. Config: \(o.root + o.configPath); logs: journalctl -u stagerack -f")
        return 0
    }

    static func perform(_ step: InstallStep) throws {
        let fm = FileManager.default
        switch step {
        case .makeDirectory(let p):
            Console.out("+ \(step)")
            try fm.createDirectory(atPath: p, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        case .copy(let from, let to, let mode):
            Console.out("+ \(step)")
            // Copy next to the target and rename over it: a running binary is replaced, not rewritten.
            let tmp = to + ".new-\(getpid())"
            try? fm.removeItem(atPath: tmp)
            try fm.copyItem(atPath: from, toPath: tmp)
            try fm.setAttributes([.posixPermissions: mode], ofItemAtPath: tmp)
            guard rename(tmp, to) == 0 else { throw UsageError(message: "cannot replace \(to): \(String(cString: strerror(errno)))") }
        case .write(let path, let contents, let mode, let keepExisting, let backup):
            if fm.fileExists(atPath: path) {
                if keepExisting {
                    Console.out("  kept the existing \(path) (--replace-config writes a new one)")
                    return
                }
                if backup {
                    try? fm.removeItem(atPath: path + ".bak")
                    try fm.moveItem(atPath: path, toPath: path + ".bak")
                }
            }
            Console.out("+ \(step)")
            try contents.write(toFile: path, atomically: true, encoding: .utf8)
            try fm.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        case .ensureUser(let name, let group, let home):
            Console.out("+ \(step)")
            guard getgrnam(group) != nil else { throw UsageError(message: "there is no \(group) group on this system") }
            if getpwnam(name) == nil {
                try command(["useradd", "--system", "--user-group", "--groups", group, "--home-dir", home, "--no-create-home",
                             "--shell", "/usr/sbin/nologin", name])
            } else if !isMember(name, of: group) {
                try command(["usermod", "--append", "--groups", group, name])
            } else {
                Console.out("  user \(name) exists and is in \(group)")
            }
        case .run(let args):
            Console.out("+ \(step)")
            if args.first == "runuser" {
                // Checks that the service user can read the rack; a warning, not a failure.
                if (try? command(args)) == nil {
                    Log.warning("the service user could not read or validate \(args.last ?? ""); the service will log why")
                }
            } else {
                try command(args)
            }
        case .skip:
            Console.out("  \(step)")
        }
    }

    /// Runs a program from PATH and waits; throws when it fails.
    static func command(_ args: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = args
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw UsageError(message: "\(args.joined(separator: " ")) failed with exit status \(p.terminationStatus)")
        }
    }

    static func isMember(_ user: String, of group: String) -> Bool {
        guard let g = getgrnam(group) else { return false }
        if let pw = getpwnam(user), pw.pointee.pw_gid == g.pointee.gr_gid { return true }
        var m = g.pointee.gr_mem
        while let name = m?.pointee {
            if String(cString: name) == user { return true }
            m = m! + 1
        }
        return false
    }

    static func executablePath() -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        return n > 0 ? String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }

    /// The repository holding packaging/stagerack.service: above the binary, or the current folder.
    static func findSource(from exe: String) throws -> String {
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        for _ in 0..<6 {
            if FileManager.default.fileExists(atPath: dir.path + "/packaging/stagerack.service") { return dir.path }
            dir = dir.deletingLastPathComponent()
        }
        let cwd = FileManager.default.currentDirectoryPath
        if FileManager.default.fileExists(atPath: cwd + "/packaging/stagerack.service") { return cwd }
        throw UsageError(message: "cannot find the repository (packaging/stagerack.service): run from it or give --source DIR")
    }

    static func absolute(_ p: String) -> String {
        let path = p.hasPrefix("/") ? p : FileManager.default.currentDirectoryPath + "/" + p
        return URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// Files of `folder` and of its subfolders with one of `extensions`, relative to `source`, sorted.
    static func list(_ source: String, _ folder: String, extensions: [String]) -> [String] {
        let names = FileManager.default.subpaths(atPath: source + "/" + folder) ?? []
        return names.filter { n in extensions.contains { n.hasSuffix("." + $0) } }.sorted().map { folder + "/" + $0 }
    }
}
