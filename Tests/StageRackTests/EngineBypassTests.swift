import CAllocCounter
import StageCore
import StageTestSupport
import XCTest

/// `unit.bypass`: a 10 ms crossfade from the unit's output to its input, at the event's
/// sample, the same for every block size, allocation-free.
final class EngineBypassTests: XCTestCase {
    /// vox at −96 dB is silence: bypassing it lets the input through.
    let rack = """
        { "format": 1, "units": { "mic": { "type": "input" }, "vox": { "type": "gain", "params": { "gain": -96 } },
            "mix": { "type": "mixer", "inputs": 1 }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> mix -> out" ],
          "midi": { "map": [ { "cc": 80, "button": "toggle", "to": "vox.bypass" } ] } }
        """
    let on = 2400
    let off = 7200

    func signal(_ frames: Int) -> [Float] {
        (0..<frames).map { i in 0.4 * sinf(Float(i) * 0.05) + 0.05 }
    }

    var midi: [StandardMIDIFile.TimedMessage] {
        [
            .init(seconds: Double(on) / 48000, message: .controlChange(channel: 0, controller: 80, value: 127)),
            .init(seconds: Double(on + 100) / 48000, message: .controlChange(channel: 0, controller: 80, value: 0)),
            .init(seconds: Double(off) / 48000, message: .controlChange(channel: 0, controller: 80, value: 127)),
        ]
    }

    func testBypassCrossfadesToTheInputAndBack() throws {
        let frames = 9600
        let input = signal(frames)
        let out = try RackBuilding.render(rack, input: [input], midi: midi, frames: frames, block: 64)[0]
        let ramp = 480  // 10 ms
        XCTAssertEqual(Measure.peak(Array(out[0..<on])), 0, "silent before the bypass")
        XCTAssertGreaterThan(abs(out[on + 1]), 0, "fading in from the event's sample")
        XCTAssertLessThan(abs(out[on + ramp / 2] - input[on + ramp / 2] * 0.5), 2e-3, "half way through the 10 ms fade")
        for i in (on + ramp)..<off { XCTAssertEqual(out[i], input[i], accuracy: 1e-6, "frame \(i): the input passes") }
        XCTAssertEqual(Measure.peak(Array(out[(off + ramp)...])), 0, "silent again after the second press")
        XCTAssertLessThan(Measure.maxJump(out), 0.4 * 0.05 + 0.4 / 480 * 2, "no click")
    }

    func testBlockSizeInvariance() throws {
        let frames = 9600
        let input = [signal(frames)]
        let reference = try RackBuilding.render(rack, input: input, midi: midi, frames: frames, block: 1)
        for block in [17, 64, 512] {
            let out = try RackBuilding.render(rack, input: input, midi: midi, frames: frames, block: block)
            let diff = zip(out[0], reference[0]).map { abs($0 - $1) }.max()!
            XCTAssertLessThanOrEqual(diff, 1e-6, "block \(block)")
        }
    }

    func testUnitWithoutInputFadesToSilence() throws {
        let plan = try RackBuilding.plan(rack, maxFrames: 64)
        let driver = EngineDriver(engine: RenderEngine(plan: plan))
        let mic = try XCTUnwrap(plan.unitIndex("mic"))
        let vox = try XCTUnwrap(plan.address(of: "vox.gain"))
        driver.push(.setParameter(vox, 0, at: 0))
        driver.push(.setParameter(ParameterAddress(unit: mic, parameter: ParameterAddress.bypassIndex), 1, at: 640))
        var last: [Float] = []
        for _ in 0..<30 {
            plan.hostInput[0].update(repeating: 0.25, count: 64)
            driver.render(frameCount: 64)
            last = Array(UnsafeBufferPointer(start: plan.hostOutput[0], count: 64))
        }
        XCTAssertEqual(driver.engine.bypassTarget(unit: mic), 1)
        XCTAssertEqual(Measure.peak(last), 0, "the input unit bypassed is silent")
    }

    func testLiveEventsAtNowApplyAtTheNextBlock() throws {
        // Live MIDI sends events for `EngineEvent.now` (Int64.min): long after time 0 too.
        let plan = try RackBuilding.plan(rack, maxFrames: 64)
        let engine = RenderEngine(plan: plan)
        let vox = try XCTUnwrap(plan.unitIndex("vox"))
        for _ in 0..<100 {
            plan.hostInput[0].update(repeating: 0.25, count: 64)
            engine.render(frameCount: 64)
        }
        engine.inject(.setParameter(ParameterAddress(unit: vox, parameter: ParameterAddress.bypassIndex), 1))
        var last: [Float] = []
        for _ in 0..<10 {
            plan.hostInput[0].update(repeating: 0.25, count: 64)
            engine.render(frameCount: 64)
            last = Array(UnsafeBufferPointer(start: plan.hostOutput[0], count: 64))
        }
        XCTAssertEqual(Measure.peak(last), 0.25, accuracy: 1e-6, "bypassed: the input passes")
    }

    func testNoAllocationWhileBypassing() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter needs glibc") }
        #if DEBUG
        throw XCTSkip("counts are for release builds")
        #endif
        let plan = try RackBuilding.plan(rack, maxFrames: 128)
        let driver = EngineDriver(engine: RenderEngine(plan: plan))
        let mapper = MIDIMapper(plan: plan)
        driver.render(frameCount: 128)
        alloc_counter_start()
        for block in 0..<3000 {
            if block % 5 == 0 {
                mapper.handle(.controlChange(channel: 0, controller: 80, value: block % 10 == 0 ? 127 : 0), at: driver.engine.sampleTime + 7) {
                    driver.push($0)
                }
            }
            plan.hostInput[0].update(repeating: 0.1, count: 128)
            driver.render(frameCount: block % 3 == 0 ? 128 : 41)
        }
        let allocations = alloc_counter_stop()
        XCTAssertEqual(allocations, 0)
    }
}
