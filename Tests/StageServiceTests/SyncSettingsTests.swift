import StageCore
import StageService
import XCTest

/// `play --sync`'s settings (a band's boxes in step): `syncRole`, `syncKey`, `syncFollowers`,
/// `syncPort` from a config file, the environment and flags; the key never on the command
/// line nor in the log; their errors with their place.
final class SyncSettingsTests: XCTestCase {
    let reader = SettingsReader(sampleFormats: ["FLOAT_LE"], home: "/home/pi")

    func testRoleKeyFollowersAndPortFromEachLayer() throws {
        let file = try reader.fromFile(
            text: #"{ "syncRole": "Leader", "syncKey": "our band's long shared secret", "syncFollowers": "192.168.1.21:9720, keys.local:9720", "syncPort": 9730 }"#,
            path: "/etc/stagerack/stagerack.json")
        XCTAssertEqual(file.text(.syncRole), "leader", "lower-cased")
        XCTAssertEqual(file.text(.syncKey), "our band's long shared secret")
        XCTAssertEqual(file.text(.syncFollowers), "192.168.1.21:9720, keys.local:9720")
        XCTAssertEqual(file.integer(.syncPort), 9730)
        let env = try reader.fromEnvironment(["STAGERACK_SYNC": "follower", "STAGERACK_SYNC_KEY": "another long shared secret"])
        XCTAssertEqual(env[.syncKey]?.origin, .environment("STAGERACK_SYNC_KEY"))
        let flags = try reader.fromCommandLine(options: ["--sync": "leader", "--sync-port": "9731", "--sync-followers": "10.0.0.2:9720"], flags: [], rack: nil)
        XCTAssertEqual(flags[.syncPort]?.origin, .flag("--sync-port"))
        let stacked = PlaySettings.stacked([file, env, flags])
        XCTAssertEqual(stacked.text(.syncRole), "leader")
        XCTAssertEqual(stacked.text(.syncKey), "another long shared secret")
        XCTAssertEqual(stacked.text(.syncFollowers), "10.0.0.2:9720")
        XCTAssertEqual(stacked.integer(.syncPort), 9731)
        XCTAssertNil(PlaySettingKey.syncKey.flag, "a secret is never a flag (it would show in ps)")
        XCTAssertTrue(stacked.originSummary.contains("syncKey set ($STAGERACK_SYNC_KEY)"))
        XCTAssertFalse(stacked.originSummary.contains("long shared secret"), "the key is never logged")
    }

    func testBadRoleAndPortSayWhere() {
        XCTAssertThrowsError(try reader.fromFile(text: "{\n  \"syncRole\": \"boss\",\n  \"syncPort\": 70000 }", path: "/c.json")) { error in
            let problems = (error as? SettingsError)?.problems ?? []
            XCTAssertEqual(problems, [
                "/c.json:2:15: syncRole: must be leader or follower, not \"boss\"",
                "/c.json:3:15: syncPort: 70000 is outside 1…65535",
            ])
        }
        XCTAssertThrowsError(try reader.fromCommandLine(options: ["--sync": "drummer"], flags: [], rack: nil)) { error in
            XCTAssertEqual((error as? SettingsError)?.problems, ["--sync: must be leader or follower, not \"drummer\""])
        }
    }
}
