import CAllocCounter
import StageCore
import StageSynth
import StageTestSupport
import XCTest

/// The render-thread contract: no allocation (with FluidSynth's effects off), block-size
/// invariance, reset reproducibility, clean silence, no NaN with extreme parameters.
final class SynthRealtimeTests: XCTestCase {
    /// Notes, chords, controllers, bend, pressure, program changes and pedals at odd frames.
    private func sendBusyMIDI(_ h: UnitHarness, frames: Int) {
        var t: Int64 = 0
        var i = 0
        while t < Int64(frames) {
            let key = 48 + (i * 7) % 36
            h.send(.noteOn(channel: 0, note: key, velocity: 40 + i % 80), atFrame: t)
            h.send(.noteOn(channel: 0, note: key + 4, velocity: 60), atFrame: t)
            h.send(.controlChange(channel: 0, controller: 1, value: i % 128), atFrame: t + 5)
            h.send(.pitchBend(channel: 0, value: (i * 997) % 16384), atFrame: t + 11)
            h.send(.channelPressure(channel: 0, value: i % 128), atFrame: t + 13)
            h.send(.controlChange(channel: 0, controller: 64, value: i % 3 == 0 ? 127 : 0), atFrame: t + 17)
            h.send(.controlChange(channel: 0, controller: 11, value: 64 + i % 64), atFrame: t + 19)
            if i % 5 == 0 { h.send(.programChange(channel: 0, program: (i / 5) % 8), atFrame: t + 23) }
            h.send(.noteOff(channel: 0, note: key), atFrame: t + 1700)
            h.send(.noteOff(channel: 0, note: key + 4), atFrame: t + 2900)
            if i % 7 == 6 { h.send(.controlChange(channel: 0, controller: 123, value: 0), atFrame: t + 31) }
            t += 997
            i += 1
        }
    }

    func testNoAllocationInRenderOrReset() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter unavailable") }
        try SynthTest.requireTimGM()
        for block in [1, 17, 64, 512] {
            let (h, counter) = try SynthTest.countingHarness()
            _ = h.render(frames: block, blockSize: block)  // warm-up block
            counter.perRender.removeAll(keepingCapacity: true)
            sendBusyMIDI(h, frames: 48000)
            h.set("gain", -12, atFrame: 10000)
            h.set("tune", 30, atFrame: 20000)
            _ = h.render(frames: 48000, blockSize: block)
            h.reset()
            _ = h.render(frames: 4800, blockSize: block)
            XCTAssertEqual(counter.perRender.reduce(0, +), 0, "allocations in render, blocks of \(block)")
            XCTAssertEqual(counter.inReset, 0, "allocations in reset")
        }
    }

    /// The documented figure: with FluidSynth's reverb or chorus on, Debian's libfluidsynth
    /// allocates once per 64 frames it renders (libgomp's team for its OpenMP region).
    func testWithEffectsOnOneAllocationPer64Frames() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter unavailable") }
        try SynthTest.requireTimGM()
        for (reverb, chorus) in [(Float(1), Float(0)), (0, 1)] {
            let (h, counter) = try SynthTest.countingHarness(parameters: ["reverb": reverb, "chorus": chorus])
            h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 0)
            _ = h.render(frames: 64, blockSize: 64)
            counter.perRender.removeAll(keepingCapacity: true)
            _ = h.render(frames: 64 * 100, blockSize: 64)
            XCTAssertEqual(counter.perRender, Array(repeating: 1, count: 100), "reverb \(reverb) chorus \(chorus)")
            counter.perRender.removeAll(keepingCapacity: true)
            _ = h.render(frames: 512 * 10, blockSize: 512)
            XCTAssertTrue(counter.perRender.allSatisfy { $0 >= 1 && $0 <= 8 }, "\(counter.perRender)")
        }
    }

    private func renderScene(blockSize: Int, frames: Int = 60000) throws -> [[Float]] {
        let h = try SynthTest.harness()
        sendBusyMIDI(h, frames: frames - 10000)
        h.set("gain", -20, atFrame: 7001)
        h.set("gain", 6, atFrame: 20003)
        h.set("tune", -60, atFrame: 15011)
        h.set("tune", 45, atFrame: 33333)
        h.set("reverb", 1, atFrame: 25005)
        h.set("chorus", 1, atFrame: 30007)
        h.set("reverb", 0, atFrame: 45000)
        return h.render(frames: frames, blockSize: blockSize)
    }

    func testBlockSizeInvariance() throws {
        try SynthTest.requireTimGM()
        let reference = try renderScene(blockSize: 64)
        XCTAssertGreaterThan(Measure.rms(reference[0]), 1e-3)
        for block in [1, 17, 512] {
            let x = try renderScene(blockSize: block)
            for c in 0..<2 {
                var maxDiff: Float = 0
                for i in 0..<x[c].count { maxDiff = max(maxDiff, abs(x[c][i] - reference[0 + c][i])) }
                XCTAssertLessThanOrEqual(maxDiff, 1e-6, "blocks of \(block), channel \(c)")
            }
        }
    }

    /// After `reset`, a scene sounds as on a fresh unit: controllers, bend range, tuning,
    /// pedals and program are back to their start. FluidSynth fades a never-used voice's
    /// pan gains in over its first 64-frame block but starts a reused voice at the gains it
    /// last had (no API resets them), so the first block of each note differs; the rest is
    /// compared exactly. The notes start at frames 128…256 (FluidSynth's grid), so from
    /// frame 320 on the output must be identical.
    func testResetReturnsToTheStartState() throws {
        try SynthTest.requireTimGM()
        func scene(_ h: UnitHarness) -> [[Float]] {
            let t = h.sampleTime
            for (i, key) in [48, 55, 60, 64, 67].enumerated() {
                h.send(.noteOn(channel: 0, note: key, velocity: 70 + 10 * i), atFrame: t + 100 + Int64(i * 37))
            }
            h.send(.noteOff(channel: 0, note: 60), atFrame: t + 20000)
            return h.render(frames: 30000, blockSize: 100)
        }
        let fresh = scene(try SynthTest.harness(["program": .number(4), "channel": .number(1)]))
        let h = try SynthTest.harness(["program": .number(4), "channel": .number(1)])
        // Disturb everything reset must restore, leave notes sounding, stop at an odd frame.
        let disturb: [MIDIMessage] = [
            .noteOn(channel: 0, note: 72, velocity: 127), .noteOn(channel: 0, note: 50, velocity: 90),
            .controlChange(channel: 0, controller: 64, value: 127), .controlChange(channel: 0, controller: 7, value: 20),
            .controlChange(channel: 0, controller: 11, value: 40), .controlChange(channel: 0, controller: 1, value: 90),
            .controlChange(channel: 0, controller: 10, value: 0), .controlChange(channel: 0, controller: 101, value: 0),
            .controlChange(channel: 0, controller: 100, value: 0), .controlChange(channel: 0, controller: 6, value: 12),
            .controlChange(channel: 0, controller: 101, value: 0), .controlChange(channel: 0, controller: 100, value: 1),
            .controlChange(channel: 0, controller: 6, value: 100), .pitchBend(channel: 0, value: 3000),
            .channelPressure(channel: 0, value: 100), .programChange(channel: 0, program: 40),
            .controlChange(channel: 0, controller: 67, value: 127), .noteOn(channel: 0, note: 76, velocity: 100),
        ]
        for m in disturb { h.send(m, atFrame: 50) }
        _ = h.render(frames: 7777, blockSize: 100)
        h.reset()
        let after = scene(h)
        for c in 0..<2 {
            var maxDiff: Float = 0
            for i in 320..<fresh[c].count { maxDiff = max(maxDiff, abs(fresh[c][i] - after[c][i])) }
            XCTAssertEqual(maxDiff, 0, "channel \(c), from frame 320")
            XCTAssertEqual(
                SpectrumMeasure.level(after[c], from: 0, to: 320), SpectrumMeasure.level(fresh[c], from: 0, to: 320),
                accuracy: 0.5, "channel \(c), first 320 frames")
            XCTAssertEqual(Measure.peak(after[c][0..<128]), 0, "nothing left over from before the reset")
        }
    }

    func testResetOfAnUnplayedUnitReproducesExactly() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness()
        func scene() -> [[Float]] {
            sendBusyMIDI(h, frames: 30000)
            return h.render(frames: 40000, blockSize: 100)
        }
        let h2 = try SynthTest.harness()
        _ = h2.render(frames: 333, blockSize: 111)
        h2.reset()
        let a = scene()
        sendBusyMIDI(h2, frames: 30000)
        let b = h2.render(frames: 40000, blockSize: 100)
        for c in 0..<2 { XCTAssertEqual(a[c], b[c], "channel \(c)") }
    }

    func testSilenceAndNoDenormals() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness()
        XCTAssertEqual(Measure.peak(h.render(frames: 48000)[0]), 0, "no notes, no sound")
        h.send(.noteOn(channel: 0, note: 60, velocity: 127))
        h.send(.noteOff(channel: 0, note: 60), atFrame: h.sampleTime + 4800)
        let x = h.render(frames: 48000 * 6)
        for c in 0..<2 {
            XCTAssertFalse(x[c].contains { $0.isSubnormal }, "channel \(c): no subnormal samples")
            XCTAssertEqual(Measure.peak(x[c][(48000 * 5)...]), 0, "channel \(c): silent once the release ends")
        }
        XCTAssertEqual(SynthTest.synth(h).activeVoiceCount, 0)
    }

    func testExtremeParametersAndFastSweepsStayFinite() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(parameters: ["gain": 12])
        for i in 0..<40 {
            h.send(.noteOn(channel: 0, note: 20 + i * 2, velocity: 127), atFrame: Int64(i * 100))
        }
        for i in 0..<200 {
            let f = Int64(i * 37)
            h.set("tune", i % 2 == 0 ? 100 : -100, atFrame: f)
            h.set("reverb", Float(i % 2), atFrame: f + 3)
            h.set("chorus", Float((i / 2) % 2), atFrame: f + 5)
            h.send(.pitchBend(channel: 0, value: i % 2 == 0 ? 0 : 16383), atFrame: f + 7)
        }
        let x = h.render(frames: 24000, blockSize: 64)
        for c in 0..<2 { XCTAssertTrue(x[c].allSatisfy(\.isFinite), "channel \(c)") }
        let y = h.render(frames: 4800, blockSize: 64)
        XCTAssertTrue(y[0].allSatisfy(\.isFinite))
        h.set("gain", -96)
        let z = h.render(frames: 4800, blockSize: 64)
        XCTAssertEqual(Measure.peak(z[0][2400...]), 0, "-96 dB is silence")
    }
}
