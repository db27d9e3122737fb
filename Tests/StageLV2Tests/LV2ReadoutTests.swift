import StageCore
import StageControl
import StageDrivers
import StageLV2
import StageTestSupport
import XCTest

/// A plugin's control outputs shown beside the meters (`play --meters`, `--status`), with
/// x42's tuner (`tuna#one`, Debian's x42-plugins) reading a 440 Hz tone; and the latency
/// port left out (x42's convolver shows nothing).
final class LV2ReadoutTests: XCTestCase {
    static let tuner = "http://gareus.org/oss/lv2/tuna#one"

    func rack(_ extra: String) -> String {
        """
        { "format": 2, "units": { "mic": { "type": "input" },
          "tuna": { "type": "lv2", "plugin": "\(Self.tuner)"\(extra) }, "out": { "type": "output" } },
          "connections": [ "mic -> tuna -> out" ] }
        """
    }

    /// Renders a second of a 440 Hz tone through the rack's engine; returns the readings.
    func readings(_ extra: String) throws -> [UnitReadoutReading] {
        let plan = try LV2Testing.plan(rack(extra), maxFrames: 256, inputChannels: 1)
        let engine = RenderEngine(plan: plan)
        let tone = Measure.sine(frequency: 440, frames: 48000, amplitude: 0.3)
        for b in 0..<(48000 / 256) {
            tone.withUnsafeBufferPointer { plan.hostInput[0].update(from: $0.baseAddress! + b * 256, count: 256) }
            engine.render(frameCount: 256)
        }
        return UnitReadoutReading.all(in: plan)
    }

    func testTunerFrequencyIsShownWithTheMeters() throws {
        try LV2Testing.require(Self.tuner, package: "x42-plugins")
        let all = try readings("")
        XCTAssertEqual(all.map(\.unitID), ["tuna"])
        let freq = try XCTUnwrap(all[0].unit.readouts.first { $0.name == "freq_out" })
        XCTAssertEqual(freq.value, 440, accuracy: 1, "the tuner's frequency output")
        print("lv2 readouts: \(all[0].text)")
        XCTAssertTrue(all[0].text.hasPrefix("tuna: "), all[0].text)

        let chosen = try readings(", \"meters\": [\"freq_out\", \"cent\"]")
        XCTAssertEqual(chosen[0].unit.readouts.map(\.name), ["freq_out", "cent"])
        XCTAssertTrue(try readings(", \"meters\": []").isEmpty, "[] shows none")
        XCTAssertTrue(
            LV2Testing.errors(rack(", \"meters\": [\"freq\"]")).contains {
                $0.contains("units.tuna.meters: the plugin has no control output \"freq\"") && $0.contains("freq_out")
            })
    }

    func testLatencyPortIsNotAReadout() throws {
        try LV2Testing.require(LV2WorkerTests.convolver, package: "x42-plugins")
        let plan = try LV2Testing.plan(LV2WorkerTests.rack(state: LV2WorkerTests.irState), maxFrames: 256, inputChannels: 1)
        XCTAssertTrue(UnitReadoutReading.all(in: plan).isEmpty)
    }
}
