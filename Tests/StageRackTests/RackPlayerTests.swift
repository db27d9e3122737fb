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
