import CAllocCounter
import StageCore
import StageTestSupport
import XCTest

/// The engine as a whole: block-size invariance, events at their frame, smoothing, no allocation.
final class EngineTests: XCTestCase {
    /// input → gain → mixer (+ a second, panned input) → output, with MIDI CCs on both gains.
    let rack = """
        { "format": 1,
          "units": {
            "mic": { "type": "input" },
            "vox": { "type": "gain", "params": { "gain": -3 } },
            "mix": { "type": "mixer", "inputs": 2, "params": { "pan2": -0.4, "gain2": -9 } },
            "out": { "type": "output" } },
          "connections": [ "mic -> vox -> mix:1", "mic -> mix:2", "mix -> out" ],
          "midi": { "map": [ { "cc": 7, "to": "vox.gain", "min": -40, "max": 6 },
                             { "cc": 10, "to": "mix.pan1" }, { "cc": 20, "to": "mix.mute2" } ] } }
        """

    func signal(_ frames: Int) -> [Float] {
        (0..<frames).map { i in 0.3 * sinf(Float(i) * 0.031) + 0.1 * sinf(Float(i) * 0.37) }
    }

    var events: [StandardMIDIFile.TimedMessage] {
        [
            .init(seconds: 0.0101, message: .controlChange(channel: 0, controller: 7, value: 20)),
            .init(seconds: 0.0312, message: .controlChange(channel: 0, controller: 10, value: 127)),
            .init(seconds: 0.0313, message: .controlChange(channel: 0, controller: 20, value: 127)),
            .init(seconds: 0.0560, message: .controlChange(channel: 0, controller: 7, value: 127)),
            .init(seconds: 0.0561, message: .controlChange(channel: 0, controller: 20, value: 0)),
        ]
    }

    func testBlockSizeInvariance() throws {
        let frames = 4800
        let input = [signal(frames)]
        let reference = try RackBuilding.render(rack, input: input, midi: events, frames: frames, block: 1)
        for block in [17, 64, 512] {
            let out = try RackBuilding.render(rack, input: input, midi: events, frames: frames, block: block)
            for c in 0..<2 {
                let diff = zip(out[c], reference[c]).map { abs($0 - $1) }.max()!
                XCTAssertLessThanOrEqual(diff, 1e-6, "block \(block) channel \(c)")
            }
        }
        XCTAssertGreaterThan(Measure.rms(reference[0]), 0.01, "the comparison is not of silence")
    }

    func testCCChangesGainAtItsSampleWithoutAClick() throws {
        // A DC input makes the level easy to read: 0.5 through vox; the CC moves vox.gain.
        let rack = """
            { "format": 1, "units": { "mic": { "type": "input" }, "vox": { "type": "gain" },
                "mix": { "type": "mixer", "inputs": 1 }, "out": { "type": "output" } },
              "connections": [ "mic -> vox -> mix -> out" ],
              "midi": { "map": [ { "cc": 7, "to": "vox.gain", "min": -40, "max": 0 } ] } }
            """
        let ccFrame = 2400
        let out = try RackBuilding.render(
            rack, input: [[Float](repeating: 0.5, count: 9600)],
            midi: [.init(seconds: Double(ccFrame) / 48000, message: .controlChange(channel: 0, controller: 7, value: 0))],
            frames: 9600, block: 256)
        let l = out[0]
        XCTAssertEqual(l[ccFrame - 1], 0.5, accuracy: 1e-6, "unchanged before the CC's sample")
        XCTAssertLessThan(l[ccFrame], 0.5, "moving from the CC's sample")
        XCTAssertEqual(l[ccFrame + 2000], 0.005, accuracy: 1e-5, "−40 dB after the 20 ms ramp")
        // Smoothing: the step spreads over 20 ms, so no jump larger than the ramp allows.
        let maxStep = Measure.maxJump(l)
        XCTAssertLessThan(maxStep, 0.5 / 960 * 12, "a 40 dB step must not click (max jump \(maxStep))")
    }

    func testZeroHeapAllocationsPerBlock() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter needs glibc") }
        #if DEBUG
        throw XCTSkip("counts are for release builds (debug Swift allocates lazily); `make test` runs release")
        #endif
        let plan = try RackBuilding.plan(rack, maxFrames: 128)
        let engine = RenderEngine(plan: plan)
        let driver = EngineDriver(engine: engine)
        let mapper = MIDIMapper(plan: plan)
        let input = signal(128)
        driver.render(frameCount: 128)  // warm-up block
        alloc_counter_start()
        for block in 0..<5000 {
            if block % 7 == 0 {
                mapper.handle(.controlChange(channel: 0, controller: 7, value: block % 128), at: engine.sampleTime + 5) {
                    driver.push($0)
                }
            }
            input.withUnsafeBufferPointer { plan.hostInput[0].update(from: $0.baseAddress!, count: 128) }
            driver.render(frameCount: block % 3 == 0 ? 128 : 37)
        }
        let allocations = alloc_counter_stop()
        XCTAssertEqual(allocations, 0, "the render loop allocated \(allocations) times in 5000 blocks")
    }

    /// Tempo events (taps, the song, MIDI clock, withdrawals) change the tempo on the render
    /// thread without allocating (a `winner.map(value)` once boxed a partial application of
    /// `value` per event).
    func testTempoEventsAllocateNothing() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter needs glibc") }
        #if DEBUG
        throw XCTSkip("counts are for release builds (debug Swift allocates lazily); `make test` runs release")
        #endif
        let plan = try RackBuilding.plan(rack, maxFrames: 128)
        let engine = RenderEngine(plan: plan)
        let driver = EngineDriver(engine: engine)
        driver.render(frameCount: 128)  // warm-up block
        let sources: [TempoSource] = TempoSource.allCases
        alloc_counter_start()
        for block in 0..<2000 {
            let source: TempoSource = sources[block % sources.count]
            let bpm: Double = block % 5 == 4 ? 0 : 60 + Double(block % 97)
            driver.push(.tempo(bpm, source: source, at: engine.sampleTime + 3))
            driver.render(frameCount: 128)
        }
        let allocations = alloc_counter_stop()
        XCTAssertEqual(allocations, 0, "2000 tempo events allocated \(allocations) times")
        XCTAssertGreaterThan(engine.tempo, 0)
    }

    func testEventsForNowApplyAtTheNextBlockAtAnyTime() throws {
        let plan = try RackBuilding.plan(rack, maxFrames: 64)
        let engine = RenderEngine(plan: plan)
        let driver = EngineDriver(engine: engine)
        let address = try XCTUnwrap(plan.address(of: "vox.gain"))
        for _ in 0..<100 { driver.render(frameCount: 64) }
        driver.push(.setParameter(address, -20))  // EngineEvent.now, queued
        driver.render(frameCount: 64)
        XCTAssertEqual(plan.parameters[address.unit].targetValue(address.parameter), -20)
        engine.inject(.setParameter(address, -30))  // EngineEvent.now, injected
        engine.render(frameCount: 64)
        XCTAssertEqual(plan.parameters[address.unit].targetValue(address.parameter), -30)
    }

    func testQueuedEventsBeyondTheBlockWaitForTheirTime() throws {
        let plan = try RackBuilding.plan(rack, maxFrames: 64)
        let driver = EngineDriver(engine: RenderEngine(plan: plan))
        let address = try XCTUnwrap(plan.address(of: "vox.gain"))
        driver.push(.setParameter(address, -20, at: 1000))
        for _ in 0..<15 { driver.render(frameCount: 64) }  // up to frame 960
        XCTAssertEqual(plan.parameters[address.unit].targetValue(address.parameter), -3)
        driver.render(frameCount: 64)
        XCTAssertEqual(plan.parameters[address.unit].targetValue(address.parameter), -20)
    }
}

#if canImport(Glibc)
import Glibc
#endif
