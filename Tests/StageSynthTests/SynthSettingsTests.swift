import StageCore
import StageSynth
import XCTest

/// Parsing and checking of the synth's settings.
final class SynthSettingsTests: XCTestCase {
    func testKeyNames() {
        XCTAssertEqual(KeyRange.key("C4"), 60)
        XCTAssertEqual(KeyRange.key("A4"), 69)
        XCTAssertEqual(KeyRange.key("C-1"), 0)
        XCTAssertEqual(KeyRange.key("G9"), 127)
        XCTAssertEqual(KeyRange.key("C#4"), 61)
        XCTAssertEqual(KeyRange.key("Db4"), 61)
        XCTAssertEqual(KeyRange.key("Bb3"), 58)
        XCTAssertEqual(KeyRange.key("B#3"), 60)
        XCTAssertEqual(KeyRange.key("Cb4"), 59)
        XCTAssertEqual(KeyRange.key("f#2"), 42)
        XCTAssertEqual(KeyRange.key("36"), 36)
        XCTAssertNil(KeyRange.key("H3"))
        XCTAssertNil(KeyRange.key("C"))
        XCTAssertNil(KeyRange.key("G#9"), "128 is beyond MIDI")
        XCTAssertNil(KeyRange.key("128"))
        XCTAssertEqual(KeyRange.name(61), "C#4")
    }

    func testKeyRanges() {
        XCTAssertEqual(KeyRange.parse("C2..C6"), 36...84)
        XCTAssertEqual(KeyRange.parse(" F#3 .. Bb5 "), 54...82)
        XCTAssertEqual(KeyRange.parse("36..96"), 36...96)
        XCTAssertEqual(KeyRange.parse("C4"), 60...60)
        XCTAssertEqual(KeyRange.parse("A0…C8"), 21...108)
        XCTAssertNil(KeyRange.parse("C6..C2"), "reversed")
        XCTAssertNil(KeyRange.parse("C2..X6"))
        XCTAssertNil(KeyRange.parse(""))
    }

    func testCheckReportsBadKeysAndChannel() {
        let type = SynthUnitType()
        XCTAssertEqual(type.check(SynthTest.settings(#"{"keys": "C2..C6", "channel": 10}"#)), [])
        XCTAssertEqual(type.check(SynthTest.settings(#"{"channel": "all"}"#)), [])
        XCTAssertEqual(type.check(SynthTest.settings(#"{"channel": "16"}"#)), [])
        let problems = type.check(SynthTest.settings(#"{"keys": "C6..C2", "channel": 17}"#))
        XCTAssertEqual(Set(problems.map(\.key)), ["keys", "channel"])
        XCTAssertTrue(problems.first { $0.key == "keys" }!.message.contains("C2..C6"))
        XCTAssertEqual(type.check(SynthTest.settings(#"{"keys": 5}"#)).map(\.key), ["keys"])
        XCTAssertEqual(type.check(SynthTest.settings(#"{"transpose": 49}"#)).map(\.key), ["transpose"])
        XCTAssertEqual(type.check(SynthTest.settings(#"{"polyphony": 0}"#)).map(\.key), ["polyphony"])
    }

    func testParsedConfiguration() throws {
        let c = try SynthConfiguration.parse(
            SynthTest.settings(
                #"{"soundfont": "x.sf2", "bank": 0, "program": 19, "channel": 3, "keys": "C2..B3", "transpose": -12, "polyphony": 32}"#)
        ).get()
        XCTAssertEqual(
            c,
            SynthConfiguration(
                soundfont: "x.sf2", bank: 0, program: 19, channel: 2, keys: 36...59, transpose: -12, polyphony: 32))
        XCTAssertEqual(try SynthConfiguration.parse(SynthTest.settings("{}")).get(), SynthConfiguration())
    }

    func testTypeDescription() {
        let type = SynthUnitType()
        XCTAssertEqual(type.name, "synth")
        XCTAssertEqual(type.role, .generator)
        XCTAssertTrue(type.receivesMIDI)
        XCTAssertEqual(type.layout(UnitSettings(), UnitBuildContext(sampleRate: 48000, hostInputChannels: 1)),
                       BusLayout(inputs: [], outputs: [.channels(2)]))
        XCTAssertEqual(type.parameters(UnitSettings()).map(\.id), ["gain", "reverb", "chorus", "tune"])
        XCTAssertEqual(SynthUnits.types.map(\.name), ["synth"])
    }
}
