import Foundation
import XCTest

/// `stagerack play` as the service runs it, through alsa-lib's own `file` plugin (no sound
/// hardware): settings precedence seen in what the devices receive, waiting for a device
/// that appears late, the status lines and the meters.
final class PlayCommandTests: XCTestCase {
    var dir = ""
    var env: [String: String] = [:]

    let rack = """
        { "format": 1, "name": "Test Rack",
          "units": { "mic": { "type": "input" }, "vox": { "type": "gain", "params": { "gain": -6 } },
                     "mix": { "type": "mixer", "inputs": 1 }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> mix -> out" ],
          "io": { "period": 512, "sampleRate": 44100 } }
        """

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: Tool.stagerack) else {
            throw XCTSkip("\(Tool.stagerack) is not built (swift test builds it with the tests)")
        }
        dir = Tool.temporaryDirectory(name.filter { $0.isLetter })
        let config = """
            pcm.svc_null { type null }
            pcm.svc_out { type file  slave.pcm "svc_null"  format "raw"  truncate true
              file { @func getenv vars [ SVC_PLAYBACK ] default "/dev/null" } }
            pcm.svc_in { type file  slave.pcm "svc_null"  format "raw"  file "/dev/null"
              infile { @func getenv vars [ SVC_CAPTURE ] default "/dev/zero" } }
            pcm.svc_late { type file  slave.pcm "svc_null"  format "raw"  file "/dev/null"  infile "\(dir)/late/in.raw" }
            """
        try config.write(toFile: dir + "/alsa.conf", atomically: true, encoding: .utf8)
        try rack.write(toFile: dir + "/rack.json", atomically: true, encoding: .utf8)
        env = Tool.environment(
            ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:\(dir)/alsa.conf", "SVC_PLAYBACK": dir + "/out.raw"], home: dir)
    }

    func play(_ args: [String], _ extra: [String: String] = [:], timeout: Double = 60, whileRunning: ((pid_t) -> Void)? = nil) throws -> Tool.Result {
        var e = env
        for (k, v) in extra { e[k] = v }
        return try Tool.run(Tool.stagerack, ["play"] + args, environment: e, timeout: timeout, whileRunning: whileRunning)
    }

    func playbackBytes() -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: dir + "/out.raw"))?[.size] as? Int) ?? -1
    }

    /// Bytes the file plugin receives for 0.1 s at 44.1 kHz in S16 stereo: the pre-fill
    /// (`periods` periods of silence) plus whole periods up to the duration.
    func expectedBytes(period: Int, periods: Int) -> Int {
        let frames = 4410
        return ((frames + period - 1) / period * period + periods * period) * 2 * 2
    }

    func testFileThenEnvironmentThenFlagsReachTheDevice() throws {
        try """
            // as install-service writes it, with devices and a period
            { "rack": "rack.json", "playback": "svc_missing", "capture": "svc_in",
              "period": 256, "periods": 3, "sampleFormat": "S16_LE", "deviceWait": 0 }
            """.write(toFile: dir + "/stagerack.json", atomically: true, encoding: .utf8)
        let base = ["STAGERACK_CONFIG": dir + "/stagerack.json", "STAGERACK_PLAYBACK": "svc_out"]

        // File < environment < flags: --period 64 beats the file's 256 and the rack's 512,
        // $STAGERACK_PERIODS=2 beats the file's 3, the rack's io sets the rate (44.1 kHz).
        let r = try play(["--period", "64", "--duration", "0.1"], base.merging(["STAGERACK_PERIODS": "2"], uniquingKeysWith: { $1 }))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(playbackBytes(), expectedBytes(period: 64, periods: 2), r.stderr)
        for part in [
            "rack \(dir)/rack.json (\(dir)/stagerack.json:2:11)", "playback svc_out ($STAGERACK_PLAYBACK)",
            "sampleRate 44100 (\(dir)/rack.json (io))", "period 64 (--period)", "periods 2 ($STAGERACK_PERIODS)",
            "sampleFormat S16_LE (\(dir)/stagerack.json:3:48)",
        ] {
            XCTAssertTrue(r.stderr.contains(part), "missing \"\(part)\" in\n\(r.stderr)")
        }
        XCTAssertTrue(r.stderr.contains("info: running Test Rack: playback svc_out, capture svc_in, 44100 Hz, 64×2, latency "), r.stderr)

        // Without the flag and the variable: the file's period and periods.
        let f = try play(["--duration", "0.1"], base)
        XCTAssertEqual(f.status, 0, f.stderr)
        XCTAssertEqual(playbackBytes(), expectedBytes(period: 256, periods: 3), f.stderr)

        // Without $STAGERACK_PLAYBACK the file's device is used: it does not exist, and
        // deviceWait 0 fails at once; the flag --device-wait is not needed to see that.
        let missing = try play(["--duration", "0.1"], ["STAGERACK_CONFIG": dir + "/stagerack.json"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("error: stagerack play: cannot open the playback device \"svc_missing\": ALSA has no device of that name"), missing.stderr)
        // alsa-lib's line that names the cause is part of the error, not a warning before it (issue 14).
        XCTAssertTrue(missing.stderr.contains("[svc_missing: snd_pcm_open failed: No such file or directory (-2); alsa-lib: snd_pcm_open_noupdate: Unknown PCM svc_missing]"),
                      missing.stderr)
        XCTAssertFalse(missing.stderr.contains("warning: alsa-lib:"), missing.stderr)
        XCTAssertFalse(missing.stderr.contains("ALSA lib "), missing.stderr)
    }

    func testConfigErrorsExitWith78AndFlagErrorsWith2() throws {
        try #"{ "rack": "rack.json", "period": 100000 }"#.write(toFile: dir + "/stagerack.json", atomically: true, encoding: .utf8)
        let bad = try play([], ["STAGERACK_CONFIG": dir + "/stagerack.json"])
        XCTAssertEqual(bad.status, 78, "EX_CONFIG: systemd's RestartPreventExitStatus=78 does not restart it")
        XCTAssertEqual(bad.stderr, "error: \(dir)/stagerack.json:1:34: period: 100000 is outside 16…8192\n")
        let noRack = try play(["--no-config"])
        XCTAssertEqual(noRack.status, 78)
        XCTAssertTrue(noRack.stderr.hasPrefix("error: no rack to play"), noRack.stderr)
        let flag = try play(["--no-config", dir + "/rack.json", "--periods", "1"])
        XCTAssertEqual(flag.status, 2)
        XCTAssertEqual(flag.stderr, "error: --periods: 1 is outside 2…16\n")
        try "{ \"format\": 1, \"units\": { \"out\": { \"type\": \"outptu\" } } }".write(toFile: dir + "/bad.json", atomically: true, encoding: .utf8)
        let badRack = try play([], ["STAGERACK_RACK": dir + "/bad.json", "STAGERACK_CONFIG": "none"])
        XCTAssertEqual(badRack.status, 78)
        XCTAssertTrue(badRack.stderr.contains("error: \(dir)/bad.json:1:"), badRack.stderr)
        XCTAssertTrue(badRack.stderr.contains("(the rack was named by $STAGERACK_RACK)"), badRack.stderr)
    }

    func testADeviceThatAppearsLateIsWaitedFor() throws {
        // The capture "device" is a file that does not exist yet: alsa-lib's open fails with
        // ENOENT, as for a USB interface the kernel has not found yet. It appears after 1.5 s.
        // Started as systemd starts it ($INVOCATION_ID set): the default is to wait for ever.
        let input = dir + "/late/in.raw"
        let r = try play(["--no-config", dir + "/rack.json", "--playback", "svc_out", "--capture", "svc_late", "--duration", "0.1",
                          "--format", "S16_LE"], ["INVOCATION_ID": "0123456789abcdef"], timeout: 30) { _ in
            usleep(1_500_000)
            try? FileManager.default.createDirectory(atPath: self.dir + "/late", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: input, contents: Data(count: 44100 * 4))
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertGreaterThanOrEqual(r.seconds, 1.5)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        let waiting = lines.filter { $0.hasPrefix("warning: waiting for ") }
        XCTAssertEqual(waiting, [
            "warning: waiting for playback \"svc_out\" and capture \"svc_late\": svc_late: snd_pcm_open failed: No such file or directory (-2); retrying every 1 s until it appears",
        ], r.stderr)
        let ready = lines.filter { $0.contains("ready after") }
        XCTAssertEqual(ready.count, 1, r.stderr)
        XCTAssertTrue(ready.first?.hasPrefix("info: playback \"svc_out\" and capture \"svc_late\": ready after ") ?? false, r.stderr)
        XCTAssertEqual(lines.filter { $0.contains("for reading failed") }.count, 1, "alsa-lib's line is said once, not every retry:\n\(r.stderr)")
        XCTAssertEqual(playbackBytes(), expectedBytes(period: 512, periods: 2), "then it plays")
    }

    func testTheWaitEndsOnSIGTERMOrAtItsLimit() throws {
        let args = ["--no-config", dir + "/rack.json", "--playback", "svc_out", "--capture", "svc_late"]
        let stopped = try play(args + ["--device-wait", "forever"], timeout: 30) { p in
            usleep(1_200_000)
            kill(p, SIGTERM)
        }
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("info: stopped while waiting for playback \"svc_out\" and capture \"svc_late\""), stopped.stderr)
        XCTAssertLessThan(stopped.seconds, 5)

        let limited = try play(args + ["--device-wait", "1"], timeout: 30)
        // From a shell (no $INVOCATION_ID) with no --device-wait: no waiting at all.
        let shell = try play(args, timeout: 30)
        XCTAssertEqual(shell.status, 1)
        XCTAssertTrue(shell.stderr.contains("error: stagerack play: cannot open the capture device \"svc_late\""), shell.stderr)
        XCTAssertTrue(shell.stderr.contains("[svc_late: snd_pcm_open failed"), shell.stderr)
        XCTAssertFalse(shell.stderr.contains("waiting for"), shell.stderr)
        XCTAssertEqual(limited.status, 1)
        XCTAssertTrue(limited.stderr.contains("error: playback \"svc_out\" and capture \"svc_late\": gave up after 1 s: "), limited.stderr)
    }

    func testUnderTheJournalEachLineCarriesItsPriority() throws {
        var e = env
        e["INVOCATION_ID"] = "0123456789abcdef"
        let r = try Tool.run(Tool.stagerack, ["play", "--no-config", dir + "/rack.json", "--playback", "svc_out", "--capture", "svc_in",
                                              "--duration", "0.05"], environment: e, timeout: 30, journal: true)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stderr.split(separator: "\n")
        XCTAssertGreaterThan(lines.count, 5)
        for line in lines {
            XCTAssertTrue(["<6>info: ", "<4>warning: ", "<3>error: ", "<6>status: "].contains { line.hasPrefix($0) }, String(line))
        }
        XCTAssertTrue(r.stderr.contains("<6>info: running Test Rack: "), r.stderr)
        let failed = try Tool.run(Tool.stagerack, ["play", "--no-config", dir + "/rack.json", "--playback", "svc_nothing", "--device-wait", "0"],
                                  environment: e, timeout: 30, journal: true)
        XCTAssertEqual(failed.status, 1)
        XCTAssertTrue(failed.stderr.contains(
            "<3>error: stagerack play: cannot open the playback device \"svc_nothing\": ALSA has no device of that name "
                + "[svc_nothing: snd_pcm_open failed: No such file or directory (-2); alsa-lib: snd_pcm_open_noupdate: Unknown PCM svc_nothing]\n"),
            failed.stderr)
        XCTAssertTrue(failed.stderr.hasSuffix("<6>info: to try play without a sound card: --playback null --capture null (silence in, the sound thrown away), or record what it plays to a file with alsa-lib's file plugin (README.md: \"Play without a sound card\")\n"), failed.stderr)
    }

    func testMetersOffATerminalArePlainStatusLines() throws {
        let r = try play(["--no-config", dir + "/rack.json", "--playback", "svc_out", "--capture", "svc_in", "--meters",
                          "--duration", "1000000"], ["SVC_PLAYBACK": "/dev/null"], timeout: 30) { p in
            usleep(2_600_000)
            kill(p, SIGTERM)
        }
        XCTAssertEqual(r.status, 0, r.stderr)
        let status = r.stderr.split(separator: "\n").filter { $0.hasPrefix("status: ") }
        XCTAssertGreaterThanOrEqual(status.count, 1, r.stderr)
        XCTAssertLessThanOrEqual(status.count, 3, "about one a second: \(r.stderr)")
        XCTAssertTrue(status.allSatisfy { $0.hasPrefix("status: load ") && $0.contains(" | xruns 0 | in ") && $0.contains(" dBFS | midi ") }, r.stderr)
        XCTAssertFalse(r.stderr.contains("\u{1B}"), "no escape sequences when stderr is not a terminal")
        for line in r.stderr.split(separator: "\n") {
            XCTAssertTrue(["info: ", "warning: ", "status: "].contains { line.hasPrefix($0) }, "every line has a level: \(line)")
        }
        XCTAssertTrue(r.stderr.contains("info: stopping"))
    }

    func testMetersInATerminalRedrawInPlace() throws {
        guard let tmux = Tool.which("tmux") else { throw XCTSkip("tmux is not installed (apt-get install tmux)") }
        let session = "stagerack-meters-\(getpid())"
        // The pane runs stagerack itself (exec keeps the pid that the test kills at the end)
        // and stays on screen after it exits.
        let pidFile = dir + "/pid"
        var command = "echo $$ > \(pidFile); exec env -i"
        for (k, v) in env.merging(["SVC_PLAYBACK": "/dev/null", "TERM": "xterm"], uniquingKeysWith: { $1 }) {
            command += " \(k)='\(v)'"
        }
        command += " \(Tool.stagerack) play --no-config \(dir)/rack.json --playback svc_out --capture svc_in --meters --duration 20000"
        let tmuxEnv = Tool.environment(home: dir)
        _ = try Tool.run(tmux, ["kill-session", "-t", session], environment: tmuxEnv)
        let started = try Tool.run(
            tmux, ["new-session", "-d", "-s", session, "-x", "100", "-y", "30", "/bin/sh", "-c", command, ";",
                   "set-option", "-t", session, "remain-on-exit", "on"],
            environment: tmuxEnv, timeout: 10)
        XCTAssertEqual(started.status, 0, started.stderr)
        defer {
            // SIGHUP from a closing pane only reloads the rack: stop it by its pid.
            if let text = try? String(contentsOfFile: pidFile, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)),
               (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?.contains("stagerack") == true {
                kill(pid, SIGKILL)
            }
            _ = try? Tool.run(tmux, ["kill-session", "-t", session], environment: tmuxEnv, timeout: 10)
        }

        func screen() throws -> [String] {
            try Tool.run(tmux, ["capture-pane", "-p", "-t", session], environment: tmuxEnv).stdout.split(separator: "\n").map(String.init)
        }
        // Waits for what each step means, not for a time: the meter block drawn whole, then
        // redrawn with a moved clock, then the stop logged.
        func screen(until done: ([String]) -> Bool, _ what: String) throws -> [String] {
            let deadline = Date().addingTimeInterval(20)
            var s = try screen()
            while !done(s) && Date() < deadline {
                usleep(50_000)
                s = try screen()
            }
            XCTAssertTrue(done(s), "waited 20 s for \(what):\n\(s.joined(separator: "\n"))")
            return s
        }
        let whole: ([String]) -> Bool = { s in
            s.contains { $0.hasPrefix("StageRack  ") } && s.contains { $0.hasPrefix("xruns ") && $0.contains("   MIDI: ") }
        }
        let first = try screen(until: whole, "the meter block")
        let second = try screen(until: { whole($0) && $0 != first }, "the meters redrawn")
        for s in [first, second] {
            XCTAssertEqual(s.filter { $0.hasPrefix("StageRack  Test Rack  ") && $0.contains("  RT  snapshot -  (/tmp/") }.count, 1,
                           "one meter block, redrawn in place:\n\(s.joined(separator: "\n"))")
            XCTAssertEqual(s.filter { $0.hasPrefix("in  ") && $0.contains(" dBFS  max ") }.count, 1)
            XCTAssertEqual(s.filter { $0.hasPrefix("out  ") && $0.contains(" dBFS  max ") }.count, 1)
            XCTAssertEqual(s.filter { $0.hasPrefix("load  ") }.count, 1)
            XCTAssertEqual(s.filter { $0.hasPrefix("xruns ") && $0.contains("   MIDI: ") }.count, 1)
            XCTAssertFalse(s.contains { $0.hasPrefix("status: ") }, "no plain status lines on a terminal")
            XCTAssertTrue(s.allSatisfy { $0.count <= 100 })
        }
        XCTAssertEqual(first.firstIndex { $0.hasPrefix("StageRack  ") }, second.firstIndex { $0.hasPrefix("StageRack  ") },
                       "the block stays where it is")
        XCTAssertNotEqual(first, second, "the clock moved")
        // A log line (SIGINT: "stopping") goes above the meters, which stay on screen.
        _ = try Tool.run(tmux, ["send-keys", "-t", session, "C-c"], environment: tmuxEnv)
        let last = try screen(until: { $0.contains { $0.hasPrefix("info: stopped after ") } }, "the stop logged")
        let stopping = last.firstIndex(of: "info: stopping")
        let block = last.firstIndex { $0.hasPrefix("StageRack  ") }
        XCTAssertNotNil(stopping, last.joined(separator: "\n"))
        XCTAssertNotNil(block)
        if let stopping, let block { XCTAssertLessThan(stopping, block, last.joined(separator: "\n")) }
        XCTAssertTrue(last.contains { $0.hasPrefix("info: stopped after ") }, last.joined(separator: "\n"))
    }
}
