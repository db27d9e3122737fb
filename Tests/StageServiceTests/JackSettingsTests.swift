import StageCore
import StageService
import XCTest

/// `play --driver jack`'s settings: `driver`, `jackOutputs`, `jackInputs` from a config file,
/// the environment and flags, and their errors with their place.
final class JackSettingsTests: XCTestCase {
    let reader = SettingsReader(sampleFormats: ["FLOAT_LE"], home: "/home/pi")

    func testDriverAndPatternsFromEachLayer() throws {
        let file = try reader.fromFile(
            text: #"{ "driver": "JACK", "jackOutputs": "system:playback_[12]$", "jackInputs": "none" }"#, path: "/etc/stagerack/stagerack.json")
        XCTAssertEqual(file.text(.driver), "jack", "lower-cased")
        XCTAssertEqual(file.text(.jackOutputs), "system:playback_[12]$")
        XCTAssertEqual(file.text(.jackInputs), "none")
        let env = try reader.fromEnvironment(["STAGERACK_DRIVER": "alsa", "STAGERACK_JACK_OUTPUTS": "foh:in_"])
        XCTAssertEqual(env.text(.driver), "alsa")
        XCTAssertEqual(env[.jackOutputs]?.origin, .environment("STAGERACK_JACK_OUTPUTS"))
        let flags = try reader.fromCommandLine(options: ["--driver": "jack", "--jack-inputs": "system:capture_1$"], flags: [], rack: nil)
        XCTAssertEqual(flags.text(.driver), "jack")
        XCTAssertEqual(flags[.jackInputs]?.origin, .flag("--jack-inputs"))
        let stacked = PlaySettings.stacked([file, env, flags])
        XCTAssertEqual(stacked.text(.driver), "jack")
        XCTAssertEqual(stacked.text(.jackOutputs), "foh:in_")
        XCTAssertEqual(stacked.text(.jackInputs), "system:capture_1$")
    }

    func testBadDriverAndEmptyPatternSayWhere() {
        XCTAssertThrowsError(try reader.fromFile(text: "{\n  \"driver\": \"pulse\",\n  \"jackOutputs\": \"\" }", path: "/c.json")) { error in
            XCTAssertEqual((error as? SettingsError)?.problems, [
                "/c.json:2:13: driver: must be alsa or jack, not \"pulse\"",
                "/c.json:3:18: jackOutputs: must be a non-empty string, found \"\"",
            ])
        }
        XCTAssertThrowsError(try reader.fromCommandLine(options: ["--driver": "oss"], flags: [], rack: nil)) { error in
            XCTAssertEqual((error as? SettingsError)?.problems, ["--driver: must be alsa or jack, not \"oss\""])
        }
    }
}
