import StageCore
import StageService
import XCTest

/// Where `stagerack play` takes each setting from: built-in defaults < the rack's io section <
/// /etc/stagerack < ~/.config/stagerack < STAGERACK_* variables < flags; and the errors.
final class SettingsPrecedenceTests: XCTestCase {
    let reader = SettingsReader(sampleFormats: ["FLOAT_LE", "S32_LE", "S24_LE", "S24_3LE", "S16_LE"], home: "/home/pi")

    /// Config files held in memory, by path.
    func resolution(_ files: [String: String], environment: [String: String] = [:]) -> SettingsResolution {
        SettingsResolution(reader: reader, environment: environment) { path in
            files[path].map { .text($0) } ?? .missing
        }
    }

    func user(
        files: [String: String] = [:], environment: [String: String] = [:], options: [String: String] = [:],
        flags: Set<String> = [], rack: String? = nil, explicit: String? = nil
    ) throws -> (settings: PlaySettings, files: [String]) {
        let candidates = ConfigFiles.candidates(explicit: explicit, noConfig: false, environment: environment, systemPath: "/etc/stagerack/stagerack.json")
        return try resolution(files, environment: environment).userSettings(
            commandLine: { () throws(SettingsError) in try reader.fromCommandLine(options: options, flags: flags, rack: rack) },
            candidates: candidates)
    }

    let systemFile = """
        // the service's settings
        {
          "rack": "racks/live.json",   // relative to /etc/stagerack
          "playback": "hw:CARD=Pi,DEV=0",
          "capture": "hw:CARD=Pi,DEV=0",
          "sampleRate": 44100,
          "period": 256,
          "periods": 3,
          "captureChannels": 1,
          "sampleFormat": "s16_le",
          "deviceWait": 30,
          "status": true,
        }
        """

    func testFileThenEnvironmentThenFlagsForEveryKey() throws {
        let files = ["/etc/stagerack/stagerack.json": systemFile]
        let env = [
            "STAGERACK_RACK": "/srv/env.json", "STAGERACK_PLAYBACK": "hw:CARD=USB,DEV=0", "STAGERACK_CAPTURE": "plughw:USB",
            "STAGERACK_RATE": "48000", "STAGERACK_PERIOD": "128", "STAGERACK_PERIODS": "2", "STAGERACK_CAPTURE_CHANNELS": "2",
            "STAGERACK_FORMAT": "S32_LE", "STAGERACK_DEVICE_WAIT": "forever", "STAGERACK_STATUS": "0",
        ]
        let options = [
            "--playback": "plughw:Flag", "--capture": "hw:Flag", "--rate": "96000", "--period": "64", "--periods": "4",
            "--capture-channels": "8", "--format": "FLOAT_LE", "--device-wait": "5s",
        ]

        // The file alone.
        let f = try user(files: files).settings
        XCTAssertEqual(f.text(.rack), "/etc/stagerack/racks/live.json", "a relative rack is taken from the config's folder")
        XCTAssertEqual(f.text(.playback), "hw:CARD=Pi,DEV=0")
        XCTAssertEqual(f.integer(.sampleRate), 44100)
        XCTAssertEqual(f.integer(.period), 256)
        XCTAssertEqual(f.integer(.periods), 3)
        XCTAssertEqual(f.integer(.captureChannels), 1)
        XCTAssertEqual(f.text(.sampleFormat), "S16_LE")
        XCTAssertEqual(f.wait(.deviceWait), .some(30))
        XCTAssertEqual(f.flag(.status), true)
        XCTAssertEqual(f[.period]?.origin, .file("/etc/stagerack/stagerack.json", SourceLocation(line: 7, column: 13)))

        // The environment over the file, key by key.
        let e = try user(files: files, environment: env).settings
        XCTAssertEqual(e.text(.rack), "/srv/env.json")
        XCTAssertEqual(e.text(.playback), "hw:CARD=USB,DEV=0")
        XCTAssertEqual(e.text(.capture), "plughw:USB")
        XCTAssertEqual(e.integer(.sampleRate), 48000)
        XCTAssertEqual(e.integer(.period), 128)
        XCTAssertEqual(e.integer(.periods), 2)
        XCTAssertEqual(e.integer(.captureChannels), 2)
        XCTAssertEqual(e.text(.sampleFormat), "S32_LE")
        XCTAssertEqual(e.wait(.deviceWait), .some(nil), "forever")
        XCTAssertEqual(e.flag(.status), false)
        XCTAssertEqual(e[.period]?.origin, .environment("STAGERACK_PERIOD"))

        // Flags over both.
        let c = try user(files: files, environment: env, options: options, flags: ["--status"], rack: "mine.json").settings
        XCTAssertEqual(c.text(.rack), "mine.json")
        XCTAssertEqual(c.text(.playback), "plughw:Flag")
        XCTAssertEqual(c.text(.capture), "hw:Flag")
        XCTAssertEqual(c.integer(.sampleRate), 96000)
        XCTAssertEqual(c.integer(.period), 64)
        XCTAssertEqual(c.integer(.periods), 4)
        XCTAssertEqual(c.integer(.captureChannels), 8)
        XCTAssertEqual(c.text(.sampleFormat), "FLOAT_LE")
        XCTAssertEqual(c.wait(.deviceWait), .some(5))
        XCTAssertEqual(c.flag(.status), true)
        XCTAssertEqual(c[.period]?.origin, .flag("--period"))

        // A flag for one key leaves the others to the lower layers.
        let mixed = try user(files: files, environment: ["STAGERACK_PERIOD": "512"], options: ["--rate": "32000"]).settings
        XCTAssertEqual(mixed.integer(.sampleRate), 32000)
        XCTAssertEqual(mixed.integer(.period), 512)
        XCTAssertEqual(mixed.integer(.periods), 3)
        XCTAssertEqual(mixed.text(.playback), "hw:CARD=Pi,DEV=0")
    }

    func testUserConfigOverridesTheSystemOneAndTheRackAndDefaultsFillTheRest() throws {
        let env = ["HOME": "/home/pi"]
        let files = [
            "/etc/stagerack/stagerack.json": #"{ "rack": "/r/system.json", "playback": "hw:0", "period": 256 }"#,
            "/home/pi/.config/stagerack/stagerack.json": #"{ "period": 64 }"#,
        ]
        let (u, read) = try user(files: files, environment: env)
        XCTAssertEqual(read, ["/etc/stagerack/stagerack.json", "/home/pi/.config/stagerack/stagerack.json"])
        XCTAssertEqual(u.integer(.period), 64)
        XCTAssertEqual(u.text(.playback), "hw:0")
        XCTAssertEqual(u.text(.rack), "/r/system.json")

        var io = IODescription()
        io.playback = "hw:Rack"
        io.capture = "hw:RackIn"
        io.periods = 3
        io.sampleRate = 44100
        let all = SettingsResolution.final(user: u, rack: PlaySettings.fromRack(io, file: "/r/system.json"), underSystemd: true)
        XCTAssertEqual(all.text(.playback), "hw:0", "the machine's config beats the rack's io section")
        XCTAssertEqual(all.text(.capture), "hw:RackIn", "the rack's io section beats the defaults")
        XCTAssertEqual(all.integer(.periods), 3)
        XCTAssertEqual(all.integer(.sampleRate), 44100)
        XCTAssertEqual(all.integer(.captureChannels), 2, "built-in default")
        XCTAssertEqual(all.wait(.deviceWait), .some(nil), "under systemd, wait for devices for ever by default")
        let shell = SettingsResolution.final(user: u, rack: PlaySettings(), underSystemd: false)
        XCTAssertEqual(shell.wait(.deviceWait), .some(0), "from a shell, a missing device fails at once by default")
        XCTAssertTrue(PlaySettings.isUnderSystemd(["INVOCATION_ID": "5f0c3a"]))
        XCTAssertFalse(PlaySettings.isUnderSystemd(["HOME": "/root"]))
        XCTAssertEqual(all[.captureChannels]?.origin, .builtIn)
        XCTAssertTrue(all.originSummary.contains("period 64 (/home/pi/.config/stagerack/stagerack.json:1:13)"), all.originSummary)
        XCTAssertFalse(all.originSummary.contains("captureChannels"), "defaults are not listed")

        // XDG_CONFIG_HOME moves the user's file.
        XCTAssertEqual(ConfigFiles.userPath(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/x"]), "/x/stagerack/stagerack.json")
    }

    func testExplicitConfigAndNoConfig() throws {
        let files = ["/etc/stagerack/stagerack.json": #"{ "period": 256 }"#, "/tmp/mine.json": #"{ "period": 32 }"#]
        XCTAssertEqual(try user(files: files, explicit: "/tmp/mine.json").settings.integer(.period), 32)
        XCTAssertEqual(try user(files: files, environment: ["STAGERACK_CONFIG": "/tmp/mine.json"]).settings.integer(.period), 32)
        XCTAssertEqual(try user(files: files, environment: ["STAGERACK_CONFIG": "none"]).settings.integer(.period), nil)
        XCTAssertEqual(ConfigFiles.candidates(explicit: nil, noConfig: true, environment: [:]), [])
        XCTAssertThrowsError(try user(files: files, explicit: "/tmp/missing.json")) { error in
            XCTAssertEqual((error as? SettingsError)?.problems, ["/tmp/missing.json: no such config file"])
        }
        // The standard places may be missing.
        XCTAssertNoThrow(try user(files: [:], environment: ["HOME": "/nowhere"]))
    }

    func testEveryProblemOfEveryLayerWithItsPlace() {
        let bad = """
            {
              "rack": 5,
              "sampleRate": 4100,
              "period": 12.5,
              "perids": 2,
              "sampleFormat": "S32LE",
              "deviceWait": -1,
              "status": "yes",
            }
            """
        XCTAssertThrowsError(
            try user(files: ["/etc/stagerack/stagerack.json": bad], environment: ["STAGERACK_PERIODS": "many"],
                     options: ["--rate": "x"])
        ) { error in
            guard let e = error as? SettingsError else { return XCTFail("\(error)") }
            let f = "/etc/stagerack/stagerack.json"
            XCTAssertEqual(e.problems, [
                "\(f):2:11: rack: must be a non-empty string, found 5",
                "\(f):3:17: sampleRate: 4100 is outside 8000…384000",
                "\(f):4:13: period: must be a whole number 16…8192, not 12.5",
                "\(f):5:3: perids: unknown key (did you mean \"periods\"?)",
                "\(f):6:19: sampleFormat: \"S32LE\" is not a sample format; use one of FLOAT_LE, S32_LE, S24_LE, S24_3LE, S16_LE (did you mean \"S32_LE\"?)",
                "\(f):7:17: deviceWait: must be 0 or more seconds, or \"forever\"",
                "\(f):8:13: status: must be true or false, found \"yes\"",
                "$STAGERACK_PERIODS: must be a whole number 2…16, not \"many\"",
                "--rate: must be a whole number 8000…384000, not \"x\"",
            ])
            XCTAssertFalse(e.onCommandLine)
        }
        XCTAssertThrowsError(try user(files: ["/etc/stagerack/stagerack.json": "{ \"rack\": \"x.json\"\n  \"period\": 64 }"])) { error in
            XCTAssertEqual((error as? SettingsError)?.problems,
                           ["/etc/stagerack/stagerack.json:1:19: missing ',' after the value of \"rack\" (the next key starts at 2:3)"])
        }
        XCTAssertThrowsError(try user(options: ["--periods": "1"])) { error in
            XCTAssertEqual((error as? SettingsError)?.problems, ["--periods: 1 is outside 2…16"])
            XCTAssertEqual((error as? SettingsError)?.onCommandLine, true, "only the command line is wrong: a usage error")
        }
        XCTAssertThrowsError(try user(files: ["/etc/stagerack/stagerack.json": #"{ "rack": "a.json", "setlist": "b.json" }"#])) { error in
            XCTAssertEqual((error as? SettingsError)?.problems, [#"/etc/stagerack/stagerack.json:1:21: setlist: give "rack" or "setlist", not both"#])
        }
    }

    func testSetlistKeyAndEmptyVariablesAndHome() throws {
        let s = try user(files: ["/etc/stagerack/stagerack.json": #"{ "setlist": "~/gig.json" }"#], environment: ["STAGERACK_PLAYBACK": ""]).settings
        XCTAssertEqual(s.text(.rack), "/home/pi/gig.json")
        XCTAssertNil(s.text(.playback), "an empty variable is as if unset")
        XCTAssertEqual(try user(environment: ["STAGERACK_DEVICE_WAIT": "0"]).settings.wait(.deviceWait), .some(0))
        XCTAssertEqual(try user(environment: ["STAGERACK_STATUS": "on"]).settings.flag(.status), true)
    }

    func testLinkFromTheConfigTheEnvironmentOrTheFlag() throws {
        let file = "/etc/stagerack/stagerack.json"
        XCTAssertEqual(try user(files: [file: #"{ "link": true }"#]).settings.flag(.link), true)
        XCTAssertEqual(try user(files: [file: #"{ "link": true }"#], environment: ["STAGERACK_LINK": "off"]).settings.flag(.link), false)
        let flagged = try user(files: [file: #"{ "link": false }"#], flags: ["--link"]).settings
        XCTAssertEqual(flagged.flag(.link), true)
        XCTAssertEqual(flagged[.link]?.origin, .flag("--link"))
        XCTAssertNil(try user().settings.flag(.link), "off unless set")
        XCTAssertThrowsError(try user(files: [file: "{\n  \"link\": \"band\"\n}"])) { e in
            XCTAssertTrue("\(e)".contains("\(file):2:11: link: must be true or false, found \"band\""), "\(e)")
        }
    }
}
