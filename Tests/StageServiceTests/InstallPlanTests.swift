import StageCore
import StageService
import XCTest

/// The steps of `stagerack install-service`, computed without touching anything.
final class InstallPlanTests: XCTestCase {
    let sources = InstallPlan.Sources(
        racks: ["racks/README.md", "racks/default.json", "racks/vocal.json"],
        soundfonts: ["soundfonts/README.md", "soundfonts/stagerack-basic.sf2"],
        unitText: "[Service]\nUser=stagerack\nEnvironment=STAGERACK_CONFIG=/etc/stagerack/stagerack.json\nExecStart=/usr/local/bin/stagerack play\n")

    func options() -> InstallOptions {
        InstallOptions(executable: "/src/.build/release/stagerack", sourceDirectory: "/src")
    }

    func testTheDefaultInstall() {
        let steps = InstallPlan.make(options(), sources)
        let text = steps.map(\.description)
        XCTAssertEqual(Array(text.prefix(2)), ["mkdir -p /usr/local/bin", "install -m 755 /src/.build/release/stagerack /usr/local/bin/stagerack"])
        XCTAssertTrue(text.contains("install -m 644 /src/racks/default.json /usr/local/share/stagerack/racks/default.json"))
        XCTAssertTrue(text.contains("install -m 644 /src/soundfonts/stagerack-basic.sf2 /usr/local/share/stagerack/soundfonts/stagerack-basic.sf2"))
        XCTAssertTrue(text.contains("install -m 644 /src/soundfonts/README.md /usr/local/share/stagerack/soundfonts/README.md"), "the SoundFont's licence goes with it")
        XCTAssertTrue(steps.contains(.ensureUser(name: "stagerack", group: "audio", home: "/var/lib/stagerack")))
        XCTAssertTrue(text.contains("write /etc/stagerack/stagerack.json (mode 644, only if missing)"))
        XCTAssertTrue(text.contains("write /etc/systemd/system/stagerack.service (mode 644)"))
        XCTAssertEqual(Array(text.suffix(3)), [
            "runuser -u stagerack -- /usr/local/bin/stagerack validate /usr/local/share/stagerack/racks/default.json",
            "systemctl daemon-reload", "systemctl enable stagerack.service",
        ])
        // The user exists before its config and unit, and the unit before systemctl.
        let user = text.firstIndex { $0.hasPrefix("create system user") }!
        let unit = text.firstIndex { $0.hasPrefix("write /etc/systemd") }!
        let reload = text.firstIndex(of: "systemctl daemon-reload")!
        XCTAssertLessThan(user, unit)
        XCTAssertLessThan(unit, reload)
    }

    func testOptionsChangePathsUserRackAndUnit() throws {
        var o = options()
        o.prefix = "/opt/stage"
        o.user = "singer"
        o.rack = "/src/racks/vocal.json"
        o.startNow = true
        let steps = InstallPlan.make(o, sources)
        let text = steps.map(\.description)
        XCTAssertTrue(text.contains("install -m 755 /src/.build/release/stagerack /opt/stage/bin/stagerack"))
        XCTAssertTrue(text.contains("systemctl restart stagerack.service"))
        XCTAssertEqual(InstallPlan.rackPath(o, sources), "/opt/stage/share/stagerack/racks/vocal.json", "a repository rack is named by its installed copy")
        guard case .write(_, let unit, _, _, _)? = steps.first(where: { $0.description.hasPrefix("write /etc/systemd") }) else {
            return XCTFail("no unit step")
        }
        XCTAssertTrue(unit.contains("User=singer\n"))
        XCTAssertTrue(unit.contains("ExecStart=/opt/stage/bin/stagerack play\n"))
        guard case .write(_, let config, _, _, _)? = steps.first(where: { $0.description.hasPrefix("write /etc/stagerack") }) else {
            return XCTFail("no config step")
        }
        // The written config is valid for the settings reader and names the rack.
        let s = try SettingsReader(sampleFormats: ["S32_LE"]).fromFile(text: config, path: "/etc/stagerack/stagerack.json")
        XCTAssertEqual(s.text(.rack), "/opt/stage/share/stagerack/racks/vocal.json")
        XCTAssertEqual(s.wait(.deviceWait), .some(nil), "the service waits for its devices for ever")
        XCTAssertNil(s.text(.playback), "devices are left to the rack and the defaults until the user sets them")

        o.rack = "/home/pi/gig/setlist.json"
        XCTAssertEqual(InstallPlan.rackPath(o, sources), "/home/pi/gig/setlist.json", "other racks stay where they are")
    }

    func testStagingAndNoSystemd() {
        var o = options()
        o.root = "/tmp/stage"
        let staged = InstallPlan.make(o, sources).map(\.description)
        XCTAssertTrue(staged.contains("install -m 755 /src/.build/release/stagerack /tmp/stage/usr/local/bin/stagerack"))
        XCTAssertTrue(staged.contains("write /tmp/stage/etc/systemd/system/stagerack.service (mode 644)"))
        XCTAssertFalse(staged.contains { $0.hasPrefix("create system user") || $0.hasPrefix("systemctl") || $0.hasPrefix("runuser") })
        XCTAssertTrue(staged.contains { $0.hasPrefix("skip: creating user stagerack") })

        o.root = ""
        o.systemdRunning = false
        let noSystemd = InstallPlan.make(o, sources).map(\.description)
        XCTAssertFalse(noSystemd.contains { $0.hasPrefix("systemctl") })
        XCTAssertEqual(noSystemd.last, "skip: systemctl: systemd is not running here; on the Pi run: systemctl enable --now stagerack")

        o.replaceConfig = true
        XCTAssertTrue(InstallPlan.make(o, sources).map(\.description).contains("write /etc/stagerack/stagerack.json (mode 644, old one kept as .bak)"))
    }

    /// Every subfolder of racks/ goes with it, paths kept (a rack names its backing track
    /// as tracks/..., the example setlist lives in setlists/), each folder made before its files.
    func testSubfoldersOfRacksAreKept() {
        let nested = InstallPlan.Sources(
            racks: ["racks/ktv.json", "racks/lv2/x42-vocal-eq.json", "racks/setlists/example-gig.json", "racks/tracks/demo-backing.ogg"],
            soundfonts: [], unitText: sources.unitText)
        var o = options()
        let text = InstallPlan.make(o, nested).map(\.description)
        for (folder, file) in [("tracks", "demo-backing.ogg"), ("setlists", "example-gig.json"), ("lv2", "x42-vocal-eq.json")] {
            let mkdir = text.firstIndex(of: "mkdir -p /usr/local/share/stagerack/racks/\(folder)")
            let copy = text.firstIndex(of: "install -m 644 /src/racks/\(folder)/\(file) /usr/local/share/stagerack/racks/\(folder)/\(file)")
            XCTAssertNotNil(mkdir, folder)
            XCTAssertNotNil(copy, folder)
            if let mkdir, let copy { XCTAssertLessThan(mkdir, copy) }
        }
        XCTAssertEqual(text.filter { $0 == "mkdir -p /usr/local/share/stagerack/racks" }.count, 1)
        o.rack = "/src/racks/setlists/example-gig.json"
        XCTAssertEqual(InstallPlan.rackPath(o, nested), "/usr/local/share/stagerack/racks/setlists/example-gig.json")
    }

    /// A rack outside the repository must be readable by the service user: the first folder it
    /// cannot enter, or the file it cannot read, is named with the fix.
    func testARackTheServiceUserCannotReadIsNamed() {
        let modes: [String: Int] = [
            "/home": 0o40755, "/home/pi": 0o40700, "/home/pi/gig": 0o40755, "/home/pi/gig/set.json": 0o100644,
            "/srv": 0o40755, "/srv/gig": 0o40755, "/srv/gig/set.json": 0o100644, "/srv/gig/private.json": 0o100600,
        ]
        let mode = { (p: String) -> Int? in modes[p] }
        let home = InstallPlan.unreadableByService("/home/pi/gig/set.json", user: "stagerack", mode: mode)
        XCTAssertEqual(home?.hasPrefix("the service user stagerack cannot enter /home/pi (mode 700)"), true, home ?? "nil")
        XCTAssertEqual(home?.hasSuffix("or chmod o+x /home/pi"), true, home ?? "nil")
        XCTAssertNil(InstallPlan.unreadableByService("/srv/gig/set.json", user: "stagerack", mode: mode))
        XCTAssertEqual(
            InstallPlan.unreadableByService("/srv/gig/private.json", user: "stagerack", mode: mode),
            "the service user stagerack cannot read /srv/gig/private.json (mode 600): chmod o+r /srv/gig/private.json")
        XCTAssertEqual(InstallPlan.unreadableByService("/srv/none/x.json", user: "stagerack", mode: mode), "/srv/none does not exist")
    }
}
