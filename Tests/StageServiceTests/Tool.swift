import Foundation
import XCTest

/// Running the built `stagerack` binary and other programs from the tests.
enum Tool {
    /// The repository (three folders above this file).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// `stagerack` next to the test bundle (`swift test` builds every product into the same folder).
    static var stagerack: String {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent().appendingPathComponent("stagerack").path
    }

    /// A fresh temporary folder for one test.
    static func temporaryDirectory(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stagerack-service-\(getpid())-\(name)").path
        try? FileManager.default.removeItem(atPath: dir)
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The full path of a program on PATH, or nil.
    static func which(_ name: String) -> String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
        for dir in path.split(separator: ":") {
            let p = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var seconds: Double
    }

    /// A minimal environment: no STAGERACK_* from the caller, no terminal.
    static func environment(_ extra: [String: String] = [:], home: String) -> [String: String] {
        var env = ["PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": home, "LANG": "C.UTF-8"]
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Runs a program to its end (SIGTERM after `timeout` seconds, then SIGKILL);
    /// `whileRunning` is called with its pid once it started (to signal it, say).
    /// posix_spawn and waitpid, not Foundation's Process: that one waits for every inheritor
    /// of a pipe to exit, which never happens with a program that daemonizes (tmux).
    static func run(
        _ program: String, _ args: [String], environment: [String: String], timeout: Double = 60,
        journal: Bool = false, whileRunning: ((pid_t) -> Void)? = nil
    ) throws -> Result {
        let outFile = temporaryDirectory("out-\(UUID().uuidString)") + "/out"
        var environment = environment
        if journal {
            // As systemd does for a service whose stderr is the journal: $JOURNAL_STREAM names
            // stderr's device and inode (the file is made first; O_TRUNC keeps its inode).
            _ = FileManager.default.createFile(atPath: outFile + ".err", contents: nil)
            var st = stat()
            stat(outFile + ".err", &st)
            environment["JOURNAL_STREAM"] = "\(st.st_dev):\(st.st_ino)"
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, outFile + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + args).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let start = Date()
        let rc = posix_spawn(&pid, program, &actions, nil, argv, envp)
        guard rc == 0 else { throw NSError(domain: "spawn \(program)", code: Int(rc)) }
        whileRunning?(pid)
        var status: Int32 = 0
        var signalled = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            let t = Date().timeIntervalSince(start)
            if t > timeout && signalled == 0 {
                kill(pid, SIGTERM)
                signalled = 1
            } else if t > timeout + 2 && signalled == 1 {
                kill(pid, SIGKILL)
                signalled = 2
            }
            usleep(5_000)
        }
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(
            status: code,
            stdout: (try? String(contentsOfFile: outFile, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: outFile + ".err", encoding: .utf8)) ?? "",
            seconds: Date().timeIntervalSince(start))
    }
}
