import Foundation
import StageCore
import StageLV2
import StageTestSupport
import StageUnits
import XCTest

/// "Save rack" from the remote page writes a playing LV2 unit's state into its `"state"`
/// (`RenderPlan.savedUnitStates`, `RackTextEditor.settingUnitStates`), with x42's convolver:
/// the rack on disk names one impulse response, the unit playing has loaded another (through
/// the worker, on the render thread); after the save the file validates, keeps its other
/// text, and reloading it gives the playing unit's impulse response, measured.
final class LV2StateSaveTests: XCTestCase {
    static let irKey = "http://gareus.org/oss/lv2/zeroconvolv#ir"

    static func rackText(state: String?) -> String {
        """
        {
          "format": 2,
          // the vocal chain
          "units": {
            "mic": { "type": "input" },
            "zc": {
              "type": "lv2", "plugin": "\(LV2WorkerTests.convolver)"\(state.map { ",\n      \"state\": \($0)" } ?? "")
            },
            "out": { "type": "output" }
          },
          "connections": [ "mic -> zc -> out" ]
        }
        """
    }

    static func irState(_ path: String) -> String {
        "{ \"\(irKey)\": { \"type\": \"http://lv2plug.in/ns/ext/atom#Path\", \"value\": \"\(path)\" } }"
    }

    func testSaveWritesThePlayingStateAndReloadGivesTheSameResponse() throws {
        try LV2Testing.require(LV2WorkerTests.convolver, package: "x42-plugins")
        let dir = LV2Testing.temporaryDirectory("save-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: dir + "/ir", withIntermediateDirectories: true)
        try LV2StateTests.impulseFile(dir + "/ir/spike.wav", at: 10, gain: 0.25)
        try LV2StateTests.impulseFile(dir + "/ir/late.wav", at: 20, gain: 0.5)
        let file = dir + "/rack.json"

        // Playing: the convolver loaded late.wav through its worker while rendering.
        let playing = try LV2WorkerTests.plan(Self.rackText(state: Self.irState(dir + "/ir/late.wav")), settle: false)
        let live = LV2WorkerTests.renderLive(playing)
        XCTAssertGreaterThanOrEqual(live.silentFirst, 0, "the convolver answers once its worker loaded the IR")
        XCTAssertEqual(Measure.onset(live.blocks.last!, threshold: 0.05), 64 + 20)
        let states = try playing.savedUnitStates()
        XCTAssertEqual(states.map(\.unit), ["zc"], "only the unit with state:interface")

        for (name, onDisk) in [("replaced", Self.rackText(state: Self.irState("ir/spike.wav"))), ("added", Self.rackText(state: nil))] {
            let saved = try RackTextEditor.settingUnitStates(states, in: onDisk)
            try saved.write(toFile: file, atomically: true, encoding: .utf8)
            print("\(name): the rack file after the save:\n\(saved)")
            XCTAssertNoThrow(try RackReader(registry: LV2Testing.registry).read(text: saved, file: file), "\(name): still a valid rack")
            XCTAssertTrue(saved.contains("  // the vocal chain\n"), "\(name): comments kept")
            XCTAssertTrue(saved.contains("\n    \"mic\": { \"type\": \"input\" },\n"), "\(name): other units kept as written")
            XCTAssertTrue(saved.contains("\n      \"state\": {\n        \"\(Self.irKey)\": "), "\(name): indented under the unit:\n\(saved)")
            XCTAssertFalse(saved.contains("spike.wav"), "\(name): the state on disk replaced")
            XCTAssertEqual(try RackTextEditor.settingUnitStates(states, in: saved), saved, "\(name): saving again changes nothing")

            let reloaded = try LV2StateTests.impulseResponse(saved, file: file)
            XCTAssertEqual(Measure.onset(reloaded, threshold: 0.05), 64 + 20, name)
            XCTAssertEqual(reloaded[84], 0.25, accuracy: 1e-4, "\(name): 0.5 through the IR's 0.5")
            let playedText = Self.rackText(state: Self.irState(dir + "/ir/late.wav"))
            let played = try LV2StateTests.impulseResponse(playedText, file: file)
            XCTAssertEqual(Measure.peak(zip(played, reloaded).map { $0 - $1 }), 0, "\(name): the playing unit's response")
        }
    }

    /// A plugin without `state:interface` keeps nothing; a unit missing from the text is a
    /// clear error.
    func testPluginsWithoutStateAndMissingUnits() throws {
        try LV2Testing.require(LV2Testing.deEss, package: "mda-lv2")
        let text = """
            { "format": 2, "units": { "mic": { "type": "input" }, "d": { "type": "lv2", "plugin": "\(LV2Testing.deEss)" },
              "out": { "type": "output" } }, "connections": [ "mic -> d -> out" ] }
            """
        XCTAssertTrue(try LV2Testing.plan(text, maxFrames: 256, inputChannels: 1).savedUnitStates().isEmpty)
        XCTAssertThrowsError(try RackTextEditor.settingUnitStates([("nope", "{}")], in: text)) {
            XCTAssertTrue("\($0)".contains("no unit \"nope\""), "\($0)")
        }
    }
}
