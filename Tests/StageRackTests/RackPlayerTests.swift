import StageCore
import StageTestSupport
import XCTest

final class RackPlayerTests: XCTestCase {
    func rack(gain: Float, pan: Float) -> String {
        """
        { "format": 1, "units": { "mic": { "type": "input" }, "vox": { "type": "gain", "params": { "gain": \(gain) } },
            "mix": { "type": "mixer", "inputs": 1, "params": { "pan1": \(pan) } }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> mix -> out" ] }
        """
    }

    func testSwitchCrossfadesWithoutAClickAndReleasesTheOldRackOffTheRenderThread() throws {
        let block = 64
        var first: RenderEngine? = RenderEngine(plan: try RackBuilding.plan(rack(gain: 0, pan: 0), maxFrames: block))
        let player = RackPlayer(engine: first!, crossfadeSeconds: 0.02)
        weak var weakFirst = first
        first = nil
        let input = BusStorage(bufferCount: 1, maxFrames: block)
        let output = BusStorage(bufferCount: 2, maxFrames: block)
        let sine = Measure.sine(frequency: 220, frames: 48000, amplitude: 0.5)
        var left: [Float] = []
        var switchedAt = 0
        for b in 0..<300 {
            if b == 100 {
                XCTAssertTrue(player.submit(RenderEngine(plan: try RackBuilding.plan(rack(gain: -12, pan: 0.8), maxFrames: block))))
                switchedAt = left.count
            }
            sine.withUnsafeBufferPointer { input.buffer(0).update(from: $0.baseAddress! + b * block, count: block) }
            player.render(frameCount: block, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
            left += UnsafeBufferPointer(start: output.buffer(0), count: block)
        }
        XCTAssertEqual(player.switches.load(ordering: .relaxed), 1)
        // The sine's own largest step at 220 Hz, amplitude 0.5 (plus pan gain up to √2).
        let ownStep: Float = 0.5 * 2 * .pi * 220 / 48000 * 1.42
        XCTAssertLessThan(Measure.maxJump(left), ownStep * 1.05, "no click at the switch")
        // Before: unity; after the 20 ms crossfade: −12 dB and panned right (left quieter).
        let before = Measure.rms(left[(switchedAt - 3000)..<switchedAt])
        let after = Measure.rms(left[(switchedAt + 2400)...])
        let sineRMS: Float = 0.5 / Float(2).squareRoot()
        XCTAssertEqual(before, sineRMS, accuracy: 0.01)
        let panLeft: Float = Float(2).squareRoot() * cosf((0.8 + 1) * Float.pi / 4)
        XCTAssertEqual(after, sineRMS * powf(10, -12.0 / 20) * panLeft, accuracy: 0.01)
        // The first engine is only released when the control thread collects it.
        XCTAssertNotNil(weakFirst)
        player.collectRetired()
        XCTAssertNil(weakFirst, "collected on the control thread")
    }

    func testFadeOutReachesSilence() throws {
        let player = RackPlayer(engine: RenderEngine(plan: try RackBuilding.plan(rack(gain: 0, pan: 0), maxFrames: 64)), fadeOutSeconds: 0.01)
        let input = BusStorage(bufferCount: 1, maxFrames: 64)
        input.buffer(0).update(repeating: 0.5, count: 64)
        let output = BusStorage(bufferCount: 2, maxFrames: 64)
        player.requestFadeOut()
        var blocks = 0
        while !player.isFadedOut && blocks < 100 {
            player.render(frameCount: 64, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
            blocks += 1
        }
        XCTAssertEqual(blocks, 8, "480 frames of fade = 8 blocks of 64")
        XCTAssertEqual(output.buffer(0)[63], 0)
    }
}

#if canImport(Glibc)
import Glibc
#endif

import CAllocCounter

final class RackPlayerSwitchingTests: XCTestCase {
    /// A rack whose delay rings on after its input stops.
    func echoRack(_ gain: Float) -> String {
        """
        { "format": 1, "units": { "mic": { "type": "input" }, "vox": { "type": "gain", "params": { "gain": \(gain) } },
            "echo": { "type": "delay", "params": { "delayTime": 0.05, "feedback": 60, "wetDryMix": 50 } },
            "mix": { "type": "mixer", "inputs": 1 }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> echo -> mix -> out" ] }
        """
    }

    func testTheOldRacksTailRingsOutUnderTheNewRack() throws {
        let block = 128
        let player = RackPlayer(engine: RenderEngine(plan: try RackBuilding.plan(echoRack(0), maxFrames: block)))
        let input = BusStorage(bufferCount: 1, maxFrames: block)
        let output = BusStorage(bufferCount: 2, maxFrames: block)
        var left: [Float] = []
        // A short burst, then silence; switch to a rack whose own echo is muted (gain −96) just after.
        let burst = Measure.sine(frequency: 440, frames: 2400, amplitude: 0.5)
        for b in 0..<200 {
            if b == 20 { player.submit(RenderEngine(plan: try RackBuilding.plan(echoRack(-96), maxFrames: block))) }
            for i in 0..<block { input.buffer(0)[i] = b * block + i < burst.count ? burst[b * block + i] : 0 }
            player.render(frameCount: block, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
            left += UnsafeBufferPointer(start: output.buffer(0), count: block)
        }
        // The new rack is silent (its input is muted by its own gain), so everything after the
        // switch is the old rack's echo: repeats every 50 ms, each 60 % of the one before.
        let switchFrame = 20 * block
        let repeats = (1...4).map { k in Measure.peak(left[(switchFrame + k * 2400 - 600)..<(switchFrame + k * 2400 + 600)]) }
        XCTAssertGreaterThan(repeats[0], 0.01, "the tail is heard after the switch")
        XCTAssertTrue(zip(repeats, repeats.dropFirst()).allSatisfy { $1 < $0 }, "and decays: \(repeats)")
        XCTAssertEqual(player.tailsEnded.load(ordering: .relaxed), 0, "still ringing 0.2 s later")
    }

    func testBurstsOfSwitchesNeverAllocateOnTheRenderThreadAndReleaseEverything() throws {
        final class Weak { weak var engine: RenderEngine? }
        let block = 128
        var weakEngines: [Weak] = []
        func makeEngine(_ k: Int) throws -> RenderEngine {
            let e = RenderEngine(plan: try RackBuilding.plan(echoRack(Float(-k % 12)), maxFrames: block))
            let w = Weak()
            w.engine = e
            weakEngines.append(w)
            return e
        }
        var player: RackPlayer? = RackPlayer(engine: try makeEngine(0))
        let input = BusStorage(bufferCount: 1, maxFrames: block)
        input.buffer(0).update(repeating: 0.1, count: block)
        let output = BusStorage(bufferCount: 2, maxFrames: block)
        player!.render(frameCount: block, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
        var allocations: Int64 = 0
        var allocatingBlocks: [Int: Int64] = [:]
        var next: RenderEngine? = try makeEngine(1)
        for b in 0..<3000 {
            if b % 3 == 0, let e = next, weakEngines.count <= 60 {  // a switch every 3 blocks: faster than tails end
                if player!.submit(e) { next = weakEngines.count < 60 ? try makeEngine(weakEngines.count) : nil }
            }
            alloc_counter_start()
            player!.render(frameCount: block, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
            let a = alloc_counter_stop()
            if a > 0 { allocatingBlocks[b] = a }
            allocations += a
            player!.collectRetired()
        }
        XCTAssertEqual(player!.switches.load(ordering: .relaxed), 59)
        #if !DEBUG
        XCTAssertEqual(allocations, 0, "render allocated while switching, in blocks \(allocatingBlocks)")
        #endif
        XCTAssertTrue(output.buffer(0)[0].isFinite)
        // Every rack but the playing one has ended its tail and been released by collectRetired.
        let alive = weakEngines.filter { $0.engine != nil }.count
        XCTAssertEqual(alive, 1, "only the playing rack is alive")
        player = nil
        XCTAssertEqual(weakEngines.filter { $0.engine != nil }.count, 0, "nothing leaks")
    }
}
