import StageCore
import XCTest

final class GraphCompilerTests: XCTestCase {
    func testRenderOrderFollowsConnectionsNotFileOrder() throws {
        let plan = try RackBuilding.plan("""
            { "format": 1, "units": {
                "out": { "type": "output" }, "mix": { "type": "mixer" }, "b": { "type": "gain" },
                "a": { "type": "gain" }, "mic": { "type": "input" } },
              "connections": [ "mic -> a -> b -> mix:2", "mic -> mix:1", "mix -> out" ] }
            """)
        let order = plan.steps.map { plan.unitIDs[$0.unit] }
        XCTAssertEqual(order, ["mic", "a", "b", "mix", "out"])
    }

    func testBuffersAreReusedAlongAChain() throws {
        let chain = (1...20).map { "g\($0)" }
        let units = chain.map { "\"\($0)\": { \"type\": \"gain\" }" }.joined(separator: ", ")
        let plan = try RackBuilding.plan("""
            { "format": 1, "units": { "mic": { "type": "input" }, \(units), "out": { "type": "output" } },
              "connections": [ "mic -> \(chain.joined(separator: " -> ")) -> out" ] }
            """)
        // host in (1) + host out (2) + silence (8) + two mono buffers ping-ponging along the
        // chain + one more for the mono-to-stereo copy into the output (the other side reuses
        // a free chain buffer).
        XCTAssertEqual(plan.bufferCount, 1 + 2 + 8 + 2 + 1)
        // Each step's output never aliases its input.
        for step in plan.steps where step.inputs.count > 0 && step.outputs.count > 0 {
            XCTAssertNotEqual(step.inputs[0][0], step.outputs[0][0])
        }
    }

    func testMonoIsCopiedToStereoAndStereoAveragedToMono() throws {
        let plan = try RackBuilding.plan("""
            { "format": 1, "units": { "mic": { "type": "input" }, "mix": { "type": "mixer", "inputs": 1 },
              "g": { "type": "gain" }, "out": { "type": "output" } },
              "connections": [ "mic -> mix -> g -> out" ] }
            """, inputChannels: 2)
        let mixStep = plan.steps.first { plan.unitIDs[$0.unit] == "mix" }!
        XCTAssertEqual(mixStep.adapters.count, 0, "a stereo mic feeds the stereo mixer directly")
        let mono = try RackBuilding.plan("""
            { "format": 1, "units": { "mic": { "type": "input" }, "mix": { "type": "mixer", "inputs": 1 }, "out": { "type": "output" } },
              "connections": [ "mic -> mix -> out" ] }
            """, inputChannels: 1)
        let monoStep = mono.steps.first { mono.unitIDs[$0.unit] == "mix" }!
        XCTAssertEqual(monoStep.adapters.map(\.kind), [.monoToStereo])
        XCTAssertEqual(monoStep.inputs[0].channelCount, 2)

        // Stereo to mono, measured: L=0.5, R=0 into a mono input bus gives 0.25 on both sides.
        let out = try RackBuilding.render("""
            { "format": 1, "units": { "mic": { "type": "input" }, "mono": { "type": "monoPass" }, "out": { "type": "output" } },
              "connections": [ "mic -> mono -> out" ] }
            """, input: [[Float](repeating: 0.5, count: 64), [Float](repeating: 0, count: 64)], frames: 64, block: 64)
        XCTAssertEqual(out[0][10], 0.25, accuracy: 1e-6)
        XCTAssertEqual(out[1][10], 0.25, accuracy: 1e-6)
    }

    func testUnheardUnitsAreDroppedWithAWarning() throws {
        let plan = try RackBuilding.plan("""
            { "format": 1, "units": { "mic": { "type": "input" }, "lost": { "type": "gain" }, "out": { "type": "output" } },
              "connections": [ "mic -> out", "mic -> lost" ] }
            """)
        XCTAssertEqual(plan.unitIDs, ["mic", "out"])
        XCTAssertEqual(plan.warnings, ["unit \"lost\" is not connected to the output and will not be heard"])
    }

    func testUnconnectedInputBusHearsSilence() throws {
        let out = try RackBuilding.render("""
            { "format": 1, "units": { "mic": { "type": "input" }, "mix": { "type": "mixer", "inputs": 3 }, "out": { "type": "output" } },
              "connections": [ "mic -> mix:2", "mix -> out" ] }
            """, input: [[Float](repeating: 0.25, count: 128)], frames: 128, block: 64)
        XCTAssertEqual(out[0][100], 0.25, accuracy: 1e-6)
    }

    func testUsesHostInputOnlyWithAnInputUnit() throws {
        let withMic = try RackBuilding.plan("""
            { "format": 1, "units": { "mic": { "type": "input" }, "out": { "type": "output" } }, "connections": [ "mic -> out" ] }
            """)
        XCTAssertTrue(withMic.usesHostInput)
        let without = try RackBuilding.plan("""
            { "format": 1, "units": { "out": { "type": "output" } } }
            """)
        XCTAssertFalse(without.usesHostInput)
    }
}
