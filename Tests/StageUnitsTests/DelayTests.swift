import CAllocCounter
import StageCore
import StageTestSupport
import StageUnits
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The `delay` unit, by measurement: timing of repeats, feedback scaling and sign, the
/// low-pass in the loop, tempo sync, click-free time changes, bounds, allocation and
/// block-size invariance.
final class DelayTests: XCTestCase {
    let sr = 48000.0

    func harness(_ parameters: [String: Float], channels: Int = 1, maxFrames: Int = 512) throws -> UnitHarness {
        try UnitHarness(
            type: DelayUnitType(), parameters: parameters, sampleRate: sr, maxFrames: maxFrames,
            inputChannels: [channels])
    }

    func impulse(_ frames: Int, at: Int = 0, amplitude: Float = 1) -> [Float] {
        var x = [Float](repeating: 0, count: frames)
        x[at] = amplitude
        return x
    }

    /// Deterministic white noise in −amplitude…amplitude.
    func noise(_ frames: Int, amplitude: Float = 0.5, seed: UInt32 = 1) -> [Float] {
        var s = seed
        return (0..<frames).map { _ in
            s = s &* 1_664_525 &+ 1_013_904_223
            return amplitude * (Float(s >> 8) / 8_388_608 - 1)
        }
    }

    /// Index of the largest |sample| in `x[range]`.
    func peakIndex(_ x: [Float], _ range: Range<Int>) -> Int {
        var best = range.lowerBound
        for i in range where abs(x[i]) > abs(x[best]) { best = i }
        return best
    }

    // MARK: timing

    func testImpulseReturnsAtDelayTime() throws {
        // Whole and fractional sample times, from about one sample to the 2 s maximum.
        for seconds: Float in [0.000_03, 0.001, 0.012_345_6, 0.1, 0.350_01, 0.777_777, 1.5, 2.0] {
            let h = try harness(["delayTime": seconds, "feedback": 0, "wetDryMix": 100, "lopassCutoff": 24000])
            let expected = Double(seconds) * sr
            let frames = Int(expected) + 200
            let out = h.render(input: [impulse(frames, at: 50)], frames: frames)[0]
            let found = peakIndex(out, 0..<frames) - 50
            XCTAssertLessThanOrEqual(abs(Double(found) - expected), 1, "delayTime \(seconds) s: echo at \(found), expected \(expected)")
            // Nothing before the echo.
            XCTAssertEqual(Measure.peak(out[0..<(50 + found)]), 0, "output before the echo at \(seconds) s")
        }
    }

    func testSyncFollowsTempo() throws {
        let choices = DelayUnitType.syncChoices
        let cases: [(String, Double, Double)] = [
            ("1/8 dotted", 120, 0.375), ("1/4", 100, 0.6), ("1/8 triplet", 120, 1.0 / 6), ("1/16", 140, 60.0 / 140 / 4),
            ("1/2", 90, 4.0 / 3), ("1/4 dotted", 120, 0.75), ("1/16 triplet", 120, 1.0 / 12), ("1/1", 130, 240.0 / 130),
        ]
        for (name, bpm, seconds) in cases {
            let index = Float(choices.firstIndex(of: name)!)
            // delayTime is ignored when synced.
            let h = try harness(["delayTime": 0.05, "feedback": 0, "wetDryMix": 100, "lopassCutoff": 24000, "sync": index])
            h.tempo = bpm
            let frames = Int(seconds * sr) + 400
            let out = h.render(input: [impulse(frames, at: 10)], frames: frames)[0]
            let found = peakIndex(out, 0..<frames) - 10
            XCTAssertLessThanOrEqual(abs(Double(found) - seconds * sr), 1, "\(name) at \(bpm) BPM: \(found) frames")
        }
        // 1/1 at 60 BPM would be 4 s: clamped to the 2 s line.
        let h = try harness(["feedback": 0, "wetDryMix": 100, "lopassCutoff": 24000, "sync": 1])
        h.tempo = 60
        let out = h.render(input: [impulse(100_000)], frames: 100_000)[0]
        XCTAssertEqual(peakIndex(out, 0..<100_000), 96_000)
    }

    func testTempoChangeMovesSyncedEcho() throws {
        // A tempo change re-targets the tap (crossfaded): repeats after it follow the new tempo.
        let h = try harness(["feedback": 0, "wetDryMix": 100, "lopassCutoff": 24000, "sync": 3])  // 1/4
        h.tempo = 120
        _ = h.render(input: [], frames: 48000)
        h.tempo = 150  // 0.4 s
        let out = h.render(input: [impulse(48000, at: 4800)], frames: 48000)[0]
        XCTAssertEqual(peakIndex(out, 0..<48000) - 4800, 19200)
    }

    // MARK: feedback and the low-pass

    /// Sums of the output over each repeat (the one-pole low-pass has unity DC gain, so the
    /// sum of repeat k is the product of the feedbacks, whatever the filtering).
    func repeatSums(feedback: Float, cutoff: Float, delay: Float = 0.1, repeats: Int = 6) throws -> [Double] {
        let h = try harness(["delayTime": delay, "feedback": feedback, "wetDryMix": 100, "lopassCutoff": cutoff])
        let d = Int(Double(delay) * sr)
        let frames = d * (repeats + 1)
        let out = h.render(input: [impulse(frames)], frames: frames)[0]
        return (1...repeats).map { k in out[(k * d - d / 2)..<(k * d + d / 2)].reduce(0.0) { $0 + Double($1) } }
    }

    func testEachRepeatScaledByFeedback() throws {
        for fb: Float in [30, 50, 80, 100] {
            let sums = try repeatSums(feedback: fb, cutoff: 3000)
            XCTAssertEqual(sums[0], 1, accuracy: 1e-3, "first repeat carries the whole impulse")
            for k in 1..<sums.count {
                XCTAssertEqual(sums[k] / sums[k - 1], Double(fb) / 100, accuracy: 2e-3, "feedback \(fb) %, repeat \(k + 1)")
            }
        }
        // Peaks fall too (by feedback and by further filtering).
        let h = try harness(["delayTime": 0.1, "feedback": 50, "wetDryMix": 100, "lopassCutoff": 3000])
        let out = h.render(input: [impulse(24000)], frames: 24000)[0]
        var last = Float.infinity
        for k in 1...4 {
            let p = Measure.peak(out[(k * 4800 - 100)..<(k * 4800 + 100)])
            XCTAssertLessThan(p, last * 0.5 + 1e-6)
            last = p
        }
    }

    func testNegativeFeedbackInvertsAlternateRepeats() throws {
        let sums = try repeatSums(feedback: -60, cutoff: 5000)
        for k in 0..<sums.count {
            XCTAssertEqual(sums[k], pow(-0.6, Double(k)), accuracy: 2e-3, "repeat \(k + 1)")
        }
        XCTAssertGreaterThan(sums[0], 0)
        XCTAssertLessThan(sums[1], 0)
        XCTAssertGreaterThan(sums[2], 0)
    }

    func testRepeatsAreLowPassedMoreEachTime() throws {
        let cutoff: Float = 2000
        let h = try harness(["delayTime": 0.1, "feedback": 90, "wetDryMix": 100, "lopassCutoff": cutoff])
        let d = 4800
        let out = h.render(input: [impulse(d * 5)], frames: d * 5)[0]
        var lastTilt = 0.0
        for k in 1...4 {
            // Each repeat centred in its window, so the Hann window of `magnitude` sees all of it.
            let window = out[(k * d - d / 2)..<(k * d + d / 2)]
            let low = Measure.magnitude(at: 200, in: window)
            let high = Measure.magnitude(at: 8000, in: window)
            let tilt = 20 * log10(high / low)
            // One pole at 2 kHz: about −12 dB at 8 kHz per pass (the first repeat passes once).
            XCTAssertEqual(tilt, -12.1 * Double(k), accuracy: 1.5 * Double(k), "repeat \(k): 8 kHz vs 200 Hz")
            if k > 1 { XCTAssertLessThan(tilt, lastTilt - 9, "repeat \(k) darker than repeat \(k - 1)") }
            lastTilt = tilt
        }
        // A cutoff at the top of the range leaves the first repeat almost flat up to 8 kHz.
        let open = try harness(["delayTime": 0.1, "feedback": 0, "wetDryMix": 100, "lopassCutoff": 24000])
        let flat = open.render(input: [impulse(d * 2)], frames: d * 2)[0]
        let w = flat[(d - d / 2)..<(d + d / 2)]
        XCTAssertGreaterThan(20 * log10(Measure.magnitude(at: 8000, in: w) / Measure.magnitude(at: 200, in: w)), -1)
    }

    // MARK: mix

    func testDryOnlyPassesInputUnchanged() throws {
        let h = try harness(["delayTime": 0.01, "feedback": 70, "wetDryMix": 0, "lopassCutoff": 4000])
        let x = noise(48000)
        let out = h.render(input: [x], frames: 48000, blockSize: 64)[0]
        XCTAssertNil(Measure.firstDifference(out, x))
    }

    func testMixIsLinear() throws {
        // wet 25 %: dry part 0.75·x (the echo of an impulse arrives later).
        let h = try harness(["delayTime": 0.01, "feedback": 0, "wetDryMix": 25, "lopassCutoff": 24000])
        let out = h.render(input: [impulse(1000, at: 0)], frames: 1000)[0]
        XCTAssertEqual(out[0], 0.75, accuracy: 1e-6)
        XCTAssertEqual(Double(out[480..<700].reduce(0, +)), 0.25, accuracy: 1e-4)
    }

    // MARK: time changes

    /// The largest step a sine of this peak level can make between samples.
    func sineStep(peak: Float, frequency: Double) -> Float {
        peak * Float(2 * sin(Double.pi * frequency / sr))
    }

    func testDelayTimeSweepHasNoClicks() throws {
        let f = 440.0
        let frames = 48000 * 4
        let x = Measure.sine(frequency: f, sampleRate: sr, frames: frames, amplitude: 0.5)
        let h = try harness(["delayTime": 0.2, "feedback": 40, "wetDryMix": 60, "lopassCutoff": 24000])
        // A knob swept up and down at full speed: a new value every 5 ms, plus jumps.
        var t: Int64 = 9600
        var k = 0
        while t < Int64(frames - 4800) {
            let v = 0.2 + 0.6 * Float(0.5 + 0.5 * sin(Double(k) * 0.05))
            h.set("delayTime", k % 97 == 0 ? 1.9 : v, atFrame: t)
            t += 240
            k += 1
        }
        let out = h.render(input: [x], frames: frames, blockSize: 64)[0]
        let peak = Measure.peak(out[9600...])
        let bound = sineStep(peak: peak, frequency: f) * 1.05 + 0.002
        XCTAssertLessThanOrEqual(Measure.maxJump(out[9600...]), bound, "sample-to-sample jump while the time moves")
        XCTAssertFalse(out.contains { !$0.isFinite })
        // The measure can fail: switching the tap at once makes a step of the order of the level.
        let a = try harness(["delayTime": 0.2, "feedback": 0, "wetDryMix": 100, "lopassCutoff": 24000])
            .render(input: [x], frames: 24000)[0]
        let b = try harness(["delayTime": 0.2037, "feedback": 0, "wetDryMix": 100, "lopassCutoff": 24000])
            .render(input: [x], frames: 24000)[0]
        let splice = (20000..<20110).max { abs(b[$0] - a[$0]) < abs(b[$1] - a[$1]) }!
        let spliced = Array(a[0..<splice]) + Array(b[splice...])
        XCTAssertGreaterThan(Measure.maxJump(spliced[10000...]), bound * 5)
    }

    func testSyncAndTempoChangesHaveNoClicks() throws {
        let f = 300.0
        let frames = 48000 * 3
        let x = Measure.sine(frequency: f, sampleRate: sr, frames: frames, amplitude: 0.5)
        let h = try harness(["feedback": 50, "wetDryMix": 50, "lopassCutoff": 24000, "sync": 3])
        h.tempo = 120
        var out = [Float]()
        for (i, choice) in [3, 7, 9, 0, 4, 11, 6].enumerated() {
            h.set("sync", Float(choice))
            h.tempo = 100 + Double(i) * 7
            out += h.render(input: [Array(x[(i * 20000)..<((i + 1) * 20000)])], frames: 20000, blockSize: 64)[0]
        }
        let tail = out[19200...]
        let bound = sineStep(peak: Measure.peak(tail), frequency: f) * 1.05 + 0.002
        XCTAssertLessThanOrEqual(Measure.maxJump(tail), bound)
    }

    func testTimeChangeLandsOnNewTime() throws {
        let h = try harness(["delayTime": 0.3, "feedback": 0, "wetDryMix": 100, "lopassCutoff": 24000])
        _ = h.render(input: [], frames: 24000)
        h.set("delayTime", 0.12)
        // After the 40 ms crossfade, an impulse comes back at the new time.
        let out = h.render(input: [impulse(48000, at: 4800)], frames: 48000)[0]
        XCTAssertEqual(peakIndex(out, 0..<48000) - 4800, 5760)
    }

    // MARK: bounds, tail, denormals

    func testFullFeedbackStaysBounded() throws {
        for fb: Float in [100, -100] {
            let h = try harness(["delayTime": 0.003, "feedback": fb, "wetDryMix": 100, "lopassCutoff": 24000])
            let x = noise(48000 * 5, amplitude: 1) + Measure.sine(frequency: 50, sampleRate: sr, frames: 48000 * 5, amplitude: 1)
            let out = h.render(input: [x], frames: x.count, blockSize: 256)[0]
            XCTAssertFalse(out.contains { !$0.isFinite })
            // |line| ≤ |input| + 2, and the low-pass averages the line.
            XCTAssertLessThanOrEqual(Measure.peak(out), 4.0)
        }
        // Below 0 dBFS the loop is linear: an impulse at 100 % repeats at full level.
        let sums = try repeatSums(feedback: 100, cutoff: 3000)
        for s in sums { XCTAssertEqual(s, 1, accuracy: 2e-3) }
    }

    func testSilenceAfterTailWithoutDenormals() throws {
        for (fb, cutoff): (Float, Float) in [(50, 6000), (-90, 24000), (95, 10)] {
            let h = try harness(["delayTime": 0.05, "feedback": fb, "wetDryMix": 100, "lopassCutoff": cutoff])
            _ = h.render(input: [noise(4800)], frames: 4800)
            let tail = h.unit.tailSeconds
            XCTAssertGreaterThan(tail, 0.05)
            XCTAssertLessThanOrEqual(tail, 30)
            let frames = Int(tail * sr) + 48000
            let out = h.render(input: [], frames: frames, blockSize: 64)[0]
            let after = out[Int(tail * sr)...]
            // −60 dB under the input's level by the tail's end.
            XCTAssertLessThan(Measure.peak(after), 0.5e-3, "feedback \(fb) %, cutoff \(cutoff) Hz, tail \(tail) s")
            XCTAssertFalse(out.contains { $0 != 0 && abs($0) < Float.leastNormalMagnitude }, "subnormal output")
            // And it reaches true silence: values under one 24-bit step leave the loop.
            let more = h.render(input: [], frames: 48000 * 20, blockSize: 512)[0]
            XCTAssertEqual(Measure.peak(more[(48000 * 19)...]), 0)
        }
    }

    func testTailSeconds() throws {
        let h = try harness(["delayTime": 0.5, "feedback": 50, "wetDryMix": 50, "lopassCutoff": 20000])
        _ = h.render(input: [], frames: 64)
        // −6 dB per repeat: 10 repeats to −60 dB, plus the first.
        XCTAssertEqual(h.unit.tailSeconds, 0.5 + 0.5 * 3 / log10(2) + 0.04, accuracy: 0.01)
        h.set("feedback", 100)
        _ = h.render(input: [], frames: 2000)
        XCTAssertEqual(h.unit.tailSeconds, 30)
        h.set("feedback", 0)
        _ = h.render(input: [], frames: 2000)
        XCTAssertLessThan(h.unit.tailSeconds, 0.6)
    }

    func testNonFiniteInputDoesNotPoisonTheLine() throws {
        let h = try harness(["delayTime": 0.01, "feedback": 80, "wetDryMix": 50, "lopassCutoff": 6000])
        var x = noise(9600)
        x[100] = .nan
        x[200] = .infinity
        x[300] = -.infinity
        let out = h.render(input: [x], frames: 9600)[0]
        XCTAssertFalse(out.contains { !$0.isFinite })
    }

    // MARK: channels

    func testChannelsAreIndependentLines() throws {
        let h = try harness(["delayTime": 0.01, "feedback": 50, "wetDryMix": 100], channels: 2)
        let out = h.render(input: [impulse(4800), []], frames: 4800)
        XCTAssertEqual(Measure.peak(out[1]), 0)
        let mono = try harness(["delayTime": 0.01, "feedback": 50, "wetDryMix": 100])
        XCTAssertNil(Measure.firstDifference(out[0], mono.render(input: [impulse(4800)], frames: 4800)[0]))
        XCTAssertEqual(h.outputChannels, [2])
    }

    // MARK: contract

    /// Renders a scene with every kind of movement at block size `block`.
    func scene(block: Int, channels: Int = 2) throws -> [[Float]] {
        let h = try harness(["delayTime": 0.02, "feedback": 60, "wetDryMix": 50, "lopassCutoff": 3000], channels: channels)
        h.tempo = 128
        h.set("delayTime", 0.0003, atFrame: 3001)  // shorter than a block
        h.set("feedback", -85, atFrame: 5000)
        h.set("lopassCutoff", 15000, atFrame: 7003)
        h.set("delayTime", 0.013, atFrame: 9000)
        h.set("sync", 9, atFrame: 12_345)
        h.set("wetDryMix", 80, atFrame: 13_000)
        h.set("sync", 0, atFrame: 30_001)
        h.set("delayTime", 0.011, atFrame: 30_500)  // arrives during a crossfade
        let x = noise(48000, seed: 7)
        let y = noise(48000, seed: 9)
        return h.render(input: [x, y], frames: 48000, blockSize: block)
    }

    func testBlockSizeInvariance() throws {
        let reference = try scene(block: 1)
        for block in [17, 64, 512] {
            let out = try scene(block: block)
            for c in 0..<2 {
                var worst: Float = 0
                for i in 0..<out[c].count { worst = max(worst, abs(out[c][i] - reference[c][i])) }
                // Same arithmetic whatever the block size: bit-exact, not just within 1e-6.
                XCTAssertEqual(worst, 0, "block \(block), channel \(c)")
            }
        }
    }

    func testResetReproducesOutput() throws {
        let h = try harness(["delayTime": 0.05, "feedback": 70, "wetDryMix": 50], channels: 1)
        let x = noise(20000, seed: 3)
        h.set("delayTime", 0.02, atFrame: 5000)
        let first = h.render(input: [x], frames: 20000, blockSize: 100)[0]
        h.reset()
        // Parameters keep their values across reset: put delayTime back first.
        h.set("delayTime", 0.05, atFrame: 0)
        h.set("delayTime", 0.02, atFrame: 5000)
        let again = h.render(input: [x], frames: 20000, blockSize: 100)[0]
        XCTAssertNil(Measure.firstDifference(again, first))
    }

    func testRenderDoesNotAllocate() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds (the harness and debug Swift allocate); `make test` runs release")
        #endif
        XCTAssertEqual(alloc_counter_available(), 1)
        let h = try harness(["delayTime": 0.1, "feedback": 50, "wetDryMix": 50], channels: 2, maxFrames: 64)
        for (c, v) in [0.3, -0.2].enumerated() { h.inputs[0][c].update(repeating: Float(v), count: 64) }
        h.renderBlock(frames: 64)  // warm-up
        var allocations: Int64 = 0
        for block in 0..<400 {
            // Steady blocks, crossfades, parameter ramps and sync changes.
            if block % 50 == 10 { h.set("delayTime", Float(block % 7) * 0.05 + 0.01) }
            if block % 50 == 20 { h.set("feedback", Float(block % 5) * 20 - 40) }
            if block % 50 == 30 { h.set("sync", Float(block % 12)) }
            if block % 50 == 40 { h.set("lopassCutoff", Float(block % 9) * 1000 + 500) }
            alloc_counter_start()
            h.renderBlock(frames: 64)
            allocations += alloc_counter_stop()
        }
        XCTAssertEqual(allocations, 0)
    }

    func testExtremeParameterSweepsStayFinite() throws {
        let h = try harness(["delayTime": 0, "feedback": 100, "wetDryMix": 100, "lopassCutoff": 10])
        var t: Int64 = 0
        var k = 0
        while t < 96000 {
            h.set("delayTime", k % 2 == 0 ? 0 : 2, atFrame: t)
            h.set("feedback", k % 3 == 0 ? -100 : 100, atFrame: t)
            h.set("lopassCutoff", k % 2 == 0 ? 10 : 24000, atFrame: t)
            h.set("wetDryMix", Float(k % 2) * 100, atFrame: t)
            h.set("sync", Float(k % 12), atFrame: t)
            t += 97
            k += 1
        }
        let out = h.render(input: [noise(96000, amplitude: 1)], frames: 96000, blockSize: 33)[0]
        XCTAssertFalse(out.contains { !$0.isFinite })
        XCTAssertLessThanOrEqual(Measure.peak(out), 4)
    }
}
