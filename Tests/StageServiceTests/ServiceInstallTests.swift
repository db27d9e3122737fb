import Foundation
import StageService
import XCTest

/// The systemd unit (through `systemd-analyze verify`), `stagerack install-service` (dry run,
/// and a real install into a staging root), and the C shims built for aarch64.
final class ServiceInstallTests: XCTestCase {
    var unitPath: String { Tool.repository + "/packaging/stagerack.service" }

    func unitText() throws -> String { try String(contentsOfFile: unitPath, encoding: .utf8) }

    /// The repository's unit with the binary at `prefix/bin/stagerack` (as install-service
    /// writes it), in `dir`, checked by systemd-analyze: (exit status, everything it said).
    func verify(_ text: String, in dir: String) throws -> (Int32, String) {
        guard let analyze = Tool.which("systemd-analyze") else { throw XCTSkip("systemd-analyze is missing (apt-get install systemd)") }
        let path = dir + "/stagerack.service"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try Tool.run(analyze, ["verify", "--man=no", path], environment: Tool.environment(home: dir))
        return (r.status, (r.stdout + r.stderr).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func testTheUnitPassesSystemdAnalyzeVerify() throws {
        let dir = Tool.temporaryDirectory("verify")
        // ExecStart must name an executable file: install the built binary under a prefix.
        try FileManager.default.createDirectory(atPath: dir + "/prefix/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Tool.stagerack, toPath: dir + "/prefix/bin/stagerack")
        var o = InstallOptions(executable: Tool.stagerack, sourceDirectory: Tool.repository)
        o.prefix = dir + "/prefix"
        let text = InstallPlan.unitText(try unitText(), o)
        XCTAssertTrue(text.contains("ExecStart=\(dir)/prefix/bin/stagerack play\n"))
        let (status, said) = try verify(text, in: dir)
        XCTAssertEqual(status, 0, said)
        XCTAssertEqual(said, "", "systemd-analyze exits 0 even for keys it ignores, so it must say nothing")

        // The check can fail: a misspelt key and a bad value are reported.
        let broken = text.replacingOccurrences(of: "Restart=always", with: "Restart=sometimes")
            .replacingOccurrences(of: "LimitRTPRIO=95", with: "LimitRTPRI0=95")
        let (_, complaint) = try verify(broken, in: dir)
        // systemd 252 (Debian 12) and 257 (Debian 13) word it differently.
        XCTAssertTrue(
            complaint.contains("Failed to parse service restart specifier") || complaint.contains("Failed to parse Restart=sometimes"),
            complaint)
        XCTAssertTrue(complaint.contains("Unknown key 'LimitRTPRI0'"), complaint)
    }

    func testTheUnitAsksForWhatTheServiceNeeds() throws {
        let text = try unitText()
        let lines = Set(text.split(separator: "\n").map(String.init))
        for required in [
            "After=sound.target", "User=stagerack", "SupplementaryGroups=audio", "ExecStart=/usr/local/bin/stagerack play",
            "Restart=always", "RestartSec=2", "RestartPreventExitStatus=78", "LimitRTPRIO=95", "LimitMEMLOCK=infinity",
            "Environment=STAGERACK_CONFIG=/etc/stagerack/stagerack.json", "ExecReload=kill -HUP $MAINPID",
            "WantedBy=multi-user.target", "StartLimitBurst=10",
        ] {
            XCTAssertTrue(lines.contains(required), "packaging/stagerack.service lacks \(required)")
        }
        XCTAssertFalse(text.contains("StandardError=") || text.contains("StandardOutput="), "stderr goes to the journal (the default)")
        XCTAssertFalse(text.contains("\nAmbientCapabilities="), "resource limits, not capabilities (see the comment in the unit)")
    }

    func testDryRunChangesNothing() throws {
        guard FileManager.default.isExecutableFile(atPath: Tool.stagerack) else { throw XCTSkip("stagerack is not built") }
        let dir = Tool.temporaryDirectory("dryrun")
        let r = try Tool.run(Tool.stagerack, ["install-service", "--dry-run", "--user", "singer", "--rack", Tool.repository + "/racks/default.json",
                                              "--source", Tool.repository], environment: Tool.environment(home: dir))
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(lines.first, "stagerack install-service --dry-run: nothing is changed; a real run would do:")
        XCTAssertTrue(lines.contains("install -m 755 \(Tool.stagerack) /usr/local/bin/stagerack"), r.stdout)
        XCTAssertTrue(lines.contains("install -m 644 \(Tool.repository)/racks/default.json /usr/local/share/stagerack/racks/default.json"), r.stdout)
        XCTAssertTrue(lines.contains("install -m 644 \(Tool.repository)/soundfonts/stagerack-basic.sf2 /usr/local/share/stagerack/soundfonts/stagerack-basic.sf2"))
        XCTAssertTrue(lines.contains("create system user singer in group audio (home /var/lib/stagerack, no login), or add it to audio"))
        XCTAssertTrue(lines.contains("write /etc/stagerack/stagerack.json (mode 644, only if missing)"))
        XCTAssertTrue(lines.contains("write /etc/systemd/system/stagerack.service (mode 644)"))
        XCTAssertTrue(lines.contains("the config would name the rack /usr/local/share/stagerack/racks/default.json"))
        XCTAssertTrue(
            lines.contains("systemctl enable stagerack.service") || lines.contains { $0.hasPrefix("skip: systemctl: systemd is not running") },
            r.stdout)
        // Nothing was touched: a dry run into a staging root leaves it absent.
        let root = dir + "/root"
        let staged = try Tool.run(Tool.stagerack, ["install-service", "--dry-run", "--root", root, "--source", Tool.repository],
                                  environment: Tool.environment(home: dir))
        XCTAssertEqual(staged.status, 0, staged.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root))

        // A rack in a folder the service user cannot enter (a private home) is refused, saying why.
        let home = dir + "/private-home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.copyItem(atPath: Tool.repository + "/racks/vocal-clean.json", toPath: home + "/mine.json")
        let refused = try Tool.run(Tool.stagerack, ["install-service", "--dry-run", "--rack", home + "/mine.json", "--source", Tool.repository],
                                   environment: Tool.environment(home: dir))
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("refused: the service user stagerack cannot enter \(home) (mode 700)"), refused.stderr)
    }

    func testInstallIntoAStagingRoot() throws {
        guard FileManager.default.isExecutableFile(atPath: Tool.stagerack) else { throw XCTSkip("stagerack is not built") }
        let dir = Tool.temporaryDirectory("staged")
        let root = dir + "/root"
        let env = Tool.environment(home: dir)
        let r = try Tool.run(Tool.stagerack, ["install-service", "--root", root, "--source", Tool.repository], environment: env)
        XCTAssertEqual(r.status, 0, r.stderr + r.stdout)
        let fm = FileManager.default
        XCTAssertTrue(fm.isExecutableFile(atPath: root + "/usr/local/bin/stagerack"))
        XCTAssertTrue(fm.fileExists(atPath: root + "/usr/local/share/stagerack/racks/default.json"))
        XCTAssertTrue(fm.fileExists(atPath: root + "/usr/local/share/stagerack/soundfonts/stagerack-basic.sf2"))
        let unit = try String(contentsOfFile: root + "/etc/systemd/system/stagerack.service", encoding: .utf8)
        XCTAssertEqual(unit, try unitText(), "default prefix and user: the repository's unit as it is")
        let installed = root + "/usr/local/bin/stagerack"
        XCTAssertEqual(try Tool.run(installed, ["--version"], environment: env).status, 0)

        // The config it wrote is read by the installed binary (the rack it names is the
        // installed copy, which lives under the staging root here: point the env at it).
        let config = root + "/etc/stagerack/stagerack.json"
        let check = try Tool.run(installed, ["validate", root + "/usr/local/share/stagerack/racks/default.json"], environment: env)
        XCTAssertEqual(check.status, 0, check.stderr)
        // Every subfolder of racks/ came along: ktv.json finds its backing track in tracks/,
        // the example setlist (named by the README's phone set-up) and the LV2 rack are there.
        let share = root + "/usr/local/share/stagerack/racks"
        for f in ["tracks/demo-backing.ogg", "setlists/example-gig.json", "lv2/x42-vocal-eq.json", "README.md"] {
            XCTAssertTrue(fm.fileExists(atPath: share + "/" + f), f)
        }
        for rack in ["ktv.json", "setlists/example-gig.json"] {
            let v = try Tool.run(installed, ["validate", share + "/" + rack], environment: env)
            XCTAssertEqual(v.status, 0, rack + ": " + v.stderr + v.stdout)
        }
        let text = try String(contentsOfFile: config, encoding: .utf8)
        XCTAssertTrue(text.contains("\"rack\": \"/usr/local/share/stagerack/racks/default.json\""), text)

        // A second run keeps the edited config, --replace-config keeps it as .bak.
        try (text + "// edited\n").write(toFile: config, atomically: true, encoding: .utf8)
        let again = try Tool.run(Tool.stagerack, ["install-service", "--root", root, "--source", Tool.repository], environment: env)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("kept the existing \(config)"), again.stdout)
        XCTAssertTrue(try String(contentsOfFile: config, encoding: .utf8).hasSuffix("// edited\n"))
        let replaced = try Tool.run(Tool.stagerack, ["install-service", "--root", root, "--source", Tool.repository, "--replace-config"],
                                    environment: env)
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertTrue(try String(contentsOfFile: config + ".bak", encoding: .utf8).hasSuffix("// edited\n"))
        XCTAssertFalse(try String(contentsOfFile: config, encoding: .utf8).contains("// edited"))
    }

    func testCShimsBuildForAArch64() throws {
        guard Tool.which("aarch64-linux-gnu-gcc") != nil else {
            throw XCTSkip("gcc-aarch64-linux-gnu is not installed (scripts/install-deps.sh --test installs it)")
        }
        let r = try Tool.run("/bin/bash", [Tool.repository + "/scripts/check-aarch64.sh"], environment: Tool.environment(home: "/tmp"), timeout: 120)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("ok: Sources/CStageShim/stage_shim.c compiles for aarch64"), r.stdout)
        if Tool.which("qemu-aarch64") != nil {
            XCTAssertTrue(r.stdout.contains("ok: FTZ check under qemu-aarch64 (FPCR.FZ)"), r.stdout)
        }
        XCTAssertTrue(r.stdout.contains(" passed, 0 failed"), r.stdout)
    }
}
