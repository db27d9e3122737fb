import StageCore
import StageDrivers
import StageLV2
import StageTestSupport
import XCTest

/// Talk and LV2 units: an LV2 unit the rack names in `"talk"` (it colours the voice) is
/// bypassed by Talk, through the engine's one Talk state; measured by level: with Talk on
/// the output is the input (the detuned copies gone), with Talk off the plugin is back.
final class LV2TalkTests: XCTestCase {
    func testAnLV2UnitNamedInTalkIsBypassed() throws {
        try LV2Testing.require(LV2Testing.detune, package: "mda-lv2")
        let text = """
            { "format": 2, "units": { "mic": { "type": "input" }, "det": { "type": "lv2", "plugin": "\(LV2Testing.detune)" },
                "out": { "type": "output" } },
              "connections": [ "mic -> det -> out" ], "talk": [ "det" ] }
            """
        let plan = try LV2Testing.plan(text, maxFrames: 256, inputChannels: 1)
        let det = try XCTUnwrap(plan.unitIndex("det"))
        XCTAssertEqual(Talk.targets(in: plan).map(\.address), [ParameterAddress(unit: det, parameter: ParameterAddress.bypassIndex)])
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let input = BusStorage(bufferCount: 1, maxFrames: 256), output = BusStorage(bufferCount: 2, maxFrames: 256)
        let tone = Measure.sine(frequency: 440, frames: 256, amplitude: 0.25)
        /// The output's difference from the input over `blocks` blocks (dB relative to the input), after one settling second.
        func difference(blocks: Int = 40) -> Float {
            var diff: Double = 0, power: Double = 0
            for b in 0..<(blocks + 190) {
                input.buffer(0).update(from: tone, count: 256)
                player.render(frameCount: 256, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
                guard b >= 190 else { continue }
                for i in 0..<256 {
                    let d = Double(output.buffer(0)[i] - tone[i])
                    diff += d * d
                    power += Double(tone[i] * tone[i])
                }
            }
            return Float(10 * log10(max(diff, 1e-20) / power))
        }
        let coloured = difference()
        XCTAssertTrue(player.controlEvents.push(.talk(.on)))
        let talking = difference()
        XCTAssertTrue(player.current.talkIsOn)
        XCTAssertEqual(player.current.bypassTarget(unit: det), 1)
        XCTAssertTrue(player.controlEvents.push(.talk(.off)))
        let back = difference()
        XCTAssertLessThan(talking, -60, "Talk on: the input passes (difference \(talking) dB)")
        XCTAssertGreaterThan(coloured, -20, "the plugin colours the tone (difference \(coloured) dB)")
        XCTAssertGreaterThan(back, -20, "Talk off: the plugin is back (difference \(back) dB; its delay lines move, so not the same figure)")
    }
}
