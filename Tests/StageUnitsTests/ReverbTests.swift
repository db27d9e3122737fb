import CAllocCounter
import StageCore
import StageTestSupport
import StageUnits
import XCTest

/// The `reverb` unit, by measurement: decay times per band (Schroeder), ringing, stereo
/// decorrelation, bypass, levels, smooth parameter changes, determinism, allocations.
final class ReverbTests: XCTestCase {
    let rate = 48000.0

    func harness(_ parameters: [String: Float] = [:], maxFrames: Int = 512) throws -> UnitHarness {
        try UnitHarness(type: ReverbUnitType(), parameters: parameters, sampleRate: rate, maxFrames: maxFrames)
    }

    /// The response of both outputs to a unit impulse, fully wet unless told otherwise.
    func impulseResponse(_ parameters: [String: Float], seconds: Double, blockSize: Int = 256) throws -> [[Float]] {
        var p = parameters
        p["dryWetMix"] = p["dryWetMix"] ?? 100
        let h = try harness(p)
        let n = Int(seconds * rate)
        var x = [Float](repeating: 0, count: n)
        x[0] = 1
        return h.render(input: [x], frames: n, blockSize: blockSize)
    }

    /// Deterministic white noise in −amplitude…amplitude.
    func noise(_ frames: Int, amplitude: Float = 0.5, seed: UInt32 = 1) -> [Float] {
        var state = seed
        return (0..<frames).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(Int32.max) * amplitude
        }
    }

    // MARK: Decay

    func testLowFrequencyRT60IsWithin15PercentOfDecayTimeAt0Hz() throws {
        let settings: [(Float, Float)] = [(0.5, 0.25), (1.5, 0.75), (3.0, 1.5), (1.8, 0.9), (2.0, 0.2), (1.0, 3.0)]
        for (t0, tn) in settings {
            let h = try impulseResponse(
                ["decayTimeAt0Hz": t0, "decayTimeAtNyquist": tn], seconds: Double(max(t0, tn)) * 1.5 + 0.5)
            for side in 0..<2 {
                let rt = try XCTUnwrap(ReverbMeasure.rt60(h[side], octaveAround: 250), "no decay found")
                XCTAssertEqual(rt, Double(t0), accuracy: 0.15 * Double(t0), "250 Hz RT60, T0 \(t0) Tn \(tn), side \(side)")
            }
        }
    }

    func testDecayHoldsAtOtherSampleRates() throws {
        for sampleRate in [44100.0, 96000.0] {
            let h = try UnitHarness(
                type: ReverbUnitType(), parameters: ["dryWetMix": 100, "decayTimeAt0Hz": 1.5, "decayTimeAtNyquist": 0.75],
                sampleRate: sampleRate)
            let n = Int(2.8 * sampleRate)
            var x = [Float](repeating: 0, count: n)
            x[0] = 1
            let y = h.render(input: [x], frames: n)
            let rt = try XCTUnwrap(ReverbMeasure.rt60(y[0], octaveAround: 250, sampleRate: sampleRate))
            XCTAssertEqual(rt, 1.5, accuracy: 0.15 * 1.5, "\(sampleRate) Hz")
            let peak = ReverbMeasure.strongestPeak(Array(y[0][Int(0.2 * sampleRate)..<Int(1.2 * sampleRate)]), sampleRate: sampleRate)
            XCTAssertLessThan(peak.decibels, 10, "\(sampleRate) Hz: peak at \(peak.frequency) Hz")
        }
    }

    /// RT60 in the 8–12 kHz band.
    func highRT60(_ t0: Float, _ tn: Float) throws -> Double {
        let h = try impulseResponse(["decayTimeAt0Hz": t0, "decayTimeAtNyquist": tn], seconds: Double(max(t0, tn)) * 1.5 + 0.5)
        return try XCTUnwrap(ReverbMeasure.rt60(ReverbMeasure.bandpass(h[0], low: 8000, high: 12000)))
    }

    func testHighFrequencyRT60TracksDecayTimeAtNyquist() throws {
        let t0: Float = 2
        let short = try highRT60(t0, 0.5)
        let half = try highRT60(t0, 1)
        let flat = try highRT60(t0, 2)
        let bright = try highRT60(1, 3)
        // Shorter at Nyquist, shorter up high; equal decay times give a flat decay.
        XCTAssertLessThan(short, 0.75 * half, "Tn 0.5 vs 1.0: \(short) vs \(half)")
        XCTAssertLessThan(half, 0.8 * flat, "Tn 1.0 vs 2.0: \(half) vs \(flat)")
        XCTAssertEqual(flat, 2, accuracy: 0.3, "Tn = T0 = 2")
        // Between the two decay times (the band is below Nyquist), and nearer Tn than a
        // filter that barely damps would be.
        XCTAssertGreaterThan(short, 0.5)
        XCTAssertLessThan(short, 1.4, "T0 2, Tn 0.5: 8–12 kHz RT60 \(short)")
        XCTAssertGreaterThan(half, 1)
        XCTAssertLessThan(half, 1.75, "T0 2, Tn 1: 8–12 kHz RT60 \(half)")
        // A Nyquist decay longer than the 0 Hz one makes the top ring longer.
        XCTAssertGreaterThan(bright, 1.15, "T0 1, Tn 3: 8–12 kHz RT60 \(bright)")
    }

    // MARK: Ringing

    func testTailHasNoSpectralPeakMoreThan10dBAboveItsNeighbours() throws {
        for p: [String: Float] in [[:], ["decayTimeAt0Hz": 3, "decayTimeAtNyquist": 3], ["randomizeReflections": 17]] {
            let h = try impulseResponse(p, seconds: 1.3)
            for side in 0..<2 {
                let tail = Array(h[side][Int(0.2 * rate)..<Int(1.2 * rate)])
                let peak = ReverbMeasure.strongestPeak(tail)
                XCTAssertLessThan(peak.decibels, 10, "\(p) side \(side): peak at \(peak.frequency) Hz")
            }
        }
    }

    func testRingingMeasureFindsARingingMode() throws {
        // The same tail with one slowly decaying mode at 1 kHz, 10 dB under the whole
        // tail's level, must be caught: the test above can fail.
        let h = try impulseResponse([:], seconds: 1.3)
        var tail = Array(h[0][Int(0.2 * rate)..<Int(1.2 * rate)])
        let level = Measure.rms(tail) * 0.316 * Float(2).squareRoot()
        for i in tail.indices {
            let t = Double(i) / rate
            tail[i] += level * Float(sin(2 * Double.pi * 1000 * t) * exp(-t / 2))
        }
        let peak = ReverbMeasure.strongestPeak(tail)
        XCTAssertGreaterThan(peak.decibels, 10)
        XCTAssertEqual(peak.frequency, 1000, accuracy: 10)
    }

    // MARK: Stereo, bypass, levels

    func testLeftAndRightAreDecorrelated() throws {
        let h = try impulseResponse([:], seconds: 2)
        let c = ReverbMeasure.correlation(h[0][Int(0.08 * rate)...], h[1][Int(0.08 * rate)...])
        XCTAssertLessThan(abs(c), 0.3, "impulse response tail correlation \(c)")
        let r = try harness(["dryWetMix": 100])
        let y = r.render(input: [noise(96000)], frames: 96000)
        let cn = ReverbMeasure.correlation(y[0][48000...], y[1][48000...])
        XCTAssertLessThan(abs(cn), 0.3, "noise correlation \(cn)")
    }

    func testDryWetMixZeroPassesTheInputBitExact() throws {
        let x = noise(30000)
        for gain: Float in [0, 20, -20] {
            let h = try harness(["dryWetMix": 0, "gain": gain])
            // Other parameters move meanwhile: the dry path must not notice.
            h.set("decayTimeAt0Hz", 5, atFrame: 5000)
            h.set("minDelayTime", 0.3, atFrame: 9000)
            h.set("randomizeReflections", 40, atFrame: 12000)
            let y = h.render(input: [x], frames: x.count, blockSize: 100)
            XCTAssertEqual(y[0], x, "left, gain \(gain)")
            XCTAssertEqual(y[1], x, "right, gain \(gain)")
        }
    }

    func testGainScalesTheReverbOnly() throws {
        let x = noise(24000)
        let at0 = try harness(["dryWetMix": 100]).render(input: [x], frames: x.count)
        let at6 = try harness(["dryWetMix": 100, "gain": 6]).render(input: [x], frames: x.count)
        let ratio = Measure.rms(at6[0]) / Measure.rms(at0[0])
        XCTAssertEqual(Double(ratio), pow(10, 6.0 / 20), accuracy: 1e-3)
        // Half wet: dry·0.5 + wet·0.5.
        let half = try harness(["dryWetMix": 50]).render(input: [x], frames: x.count)
        for i in stride(from: 0, to: x.count, by: 97) {
            XCTAssertEqual(half[0][i], 0.5 * x[i] + 0.5 * at0[0][i], accuracy: 1e-5)
        }
    }

    func testWetLevelOnNoiseIsNearTheInputLevel() throws {
        // At the defaults, fully wet, the reverb of steady noise sits a few dB under it.
        let x = noise(144_000)
        let y = try harness(["dryWetMix": 100]).render(input: [x], frames: x.count)
        let db = Measure.decibels(Measure.rms(y[0][96000...])) - Measure.decibels(Measure.rms(x[96000...]))
        XCTAssertGreaterThan(db, -9)
        XCTAssertLessThan(db, 0)
    }

    func testReflectionsStartAtMinDelayTime() throws {
        let h = try impulseResponse(["minDelayTime": 0.1, "maxDelayTime": 0.3], seconds: 0.5)
        let first = try XCTUnwrap(Measure.onset(h[0], threshold: 1e-3))
        XCTAssertEqual(first, Int(0.1 * rate), accuracy: 2)
        // Swapped min and max mean the same span.
        let s = try impulseResponse(["minDelayTime": 0.3, "maxDelayTime": 0.1], seconds: 0.5)
        XCTAssertEqual(try XCTUnwrap(Measure.onset(s[0], threshold: 1e-3)), first)
    }

    // MARK: Smooth changes

    /// Clicks: the peak of `x` above 4 kHz in `range`, relative to the RMS of `x` there.
    /// A 150 Hz sine through a linear reverb has nothing up there (about −100 dB); a
    /// discontinuity or zipper steps put broadband energy there.
    func clickLevel(_ x: [Float], _ range: Range<Int>) -> Float {
        let high = ReverbMeasure.bandpass(x, low: 4000, high: 20000, sampleRate: rate)
        let peak = high[range].map { abs($0) }.max() ?? 0
        return Measure.decibels(Float(peak)) - Measure.decibels(Measure.rms(x[range]))
    }

    func testParameterChangesDoNotClick() throws {
        let n = 96000
        let x = Measure.sine(frequency: 150, sampleRate: rate, frames: n, amplitude: 0.5)
        let changes: [(String, Float)] = [
            ("minDelayTime", 0.2), ("maxDelayTime", 0.01), ("randomizeReflections", 7), ("decayTimeAt0Hz", 0.3),
            ("decayTimeAtNyquist", 0.1), ("dryWetMix", 90), ("gain", 12),
        ]
        for (id, value) in changes {
            let h = try harness(["dryWetMix": 100])
            h.set(id, value, atFrame: 48000)
            let y = h.render(input: [x], frames: n, blockSize: 64)
            for side in 0..<2 {
                let before = clickLevel(y[side], 36000..<48000)
                let during = clickLevel(y[side], 48000..<60000)
                XCTAssertLessThan(before, -70, "\(id) → \(value), side \(side), before the change")
                XCTAssertLessThan(during, -50, "\(id) → \(value), side \(side)")
            }
        }
    }

    func testClickMeasureFindsAStep() throws {
        // A sine whose phase jumps once, as a delay change without a crossfade would do.
        var x = Measure.sine(frequency: 150, sampleRate: rate, frames: 24000, amplitude: 0.5)
        let jumped = Measure.sine(frequency: 150, sampleRate: rate, frames: 24000 + 100, amplitude: 0.5)
        for i in 12000..<24000 { x[i] = jumped[i + 100] }
        XCTAssertGreaterThan(clickLevel(x, 6000..<18000), -30)
    }

    // MARK: Determinism and real-time rules

    /// One second of a noise burst then silence, with parameter changes along the way.
    func renderScenario(blockSize: Int) throws -> [[Float]] {
        let h = try harness(["dryWetMix": 60])
        var x = noise(24000)
        x += [Float](repeating: 0, count: 48000)
        h.set("minDelayTime", 0.05, atFrame: 3001)
        h.set("maxDelayTime", 0.25, atFrame: 7777)
        h.set("randomizeReflections", 5, atFrame: 10001)
        h.set("decayTimeAtNyquist", 0.3, atFrame: 20000)
        h.set("gain", -6, atFrame: 30001)
        h.set("dryWetMix", 100, atFrame: 40003)
        return h.render(input: [x], frames: x.count, blockSize: blockSize)
    }

    func testOutputDoesNotDependOnBlockSize() throws {
        let reference = try renderScenario(blockSize: 512)
        for block in [1, 17, 64] {
            let y = try renderScenario(blockSize: block)
            for side in 0..<2 {
                var worst: Float = 0
                for i in y[side].indices { worst = max(worst, abs(y[side][i] - reference[side][i])) }
                XCTAssertLessThanOrEqual(worst, 1e-6, "block \(block), side \(side)")
            }
        }
    }

    func testResetReproducesTheOutput() throws {
        let h = try harness(["dryWetMix": 100])
        let x = noise(20000)
        let first = h.render(input: [x], frames: 40000, blockSize: 128)
        h.reset()
        let second = h.render(input: [x], frames: 40000, blockSize: 128)
        XCTAssertEqual(first, second)
    }

    func testTailEndsInExactSilenceWithoutDenormals() throws {
        let h = try impulseResponse([:], seconds: 8)
        for side in 0..<2 {
            XCTAssertFalse(ReverbMeasure.hasSubnormals(h[side]))
            XCTAssertTrue(h[side][Int(7 * rate)...].allSatisfy { $0 == 0 }, "side \(side) not silent after 7 s")
            XCTAssertGreaterThan(Measure.peak(h[side][Int(1 * rate)..<Int(2 * rate)]), 1e-4, "tail too short")
        }
    }

    func testShortDecaysNeverProduceDenormals() throws {
        for (t0, tn): (Float, Float) in [(0.05, 0.02), (0.002, 0.001), (0.01, 5)] {
            let h = try harness(["dryWetMix": 100, "decayTimeAt0Hz": t0, "decayTimeAtNyquist": tn])
            var x = noise(4800)
            x += [Float](repeating: 0, count: 96000)
            let y = h.render(input: [x], frames: x.count)
            for side in 0..<2 { XCTAssertFalse(ReverbMeasure.hasSubnormals(y[side]), "T0 \(t0) Tn \(tn)") }
        }
    }

    func testExtremeParametersAndFastSweepsStayFinite() throws {
        let x = noise(48000, amplitude: 1)
        let specs = ReverbUnit.parameterSpecs
        for corner in [specs.map { ($0.id, $0.range.lowerBound) }, specs.map { ($0.id, $0.range.upperBound) }] {
            let h = try harness(Dictionary(uniqueKeysWithValues: corner))
            let y = h.render(input: [x], frames: 96000, blockSize: 64)
            for side in 0..<2 {
                XCTAssertTrue(y[side].allSatisfy { $0.isFinite }, "\(corner)")
                // Full-scale noise, +20 dB of gain and a 20 s decay: loud, but bounded.
                XCTAssertLessThan(Measure.peak(y[side]), 100, "\(corner)")
            }
        }
        // Every parameter swept across its range every 10 ms.
        let h = try harness()
        for k in 0..<100 {
            for (j, spec) in specs.enumerated() {
                let v = (k + j) % 2 == 0 ? spec.range.lowerBound : spec.range.upperBound
                h.set(spec.id, v, atFrame: Int64(k * 480 + j))
            }
        }
        let y = h.render(input: [x], frames: 48000, blockSize: 37)
        for side in 0..<2 {
            XCTAssertTrue(y[side].allSatisfy { $0.isFinite })
            XCTAssertLessThan(Measure.peak(y[side]), 40)
        }
    }

    func testRenderDoesNotAllocate() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter not active") }
        let h = try harness(["dryWetMix": 50], maxFrames: 256)
        let x = noise(256)
        h.inputs[0][0].update(from: x, count: 256)
        h.renderBlock(frames: 256)  // warm-up
        h.set("minDelayTime", 0.2, atFrame: 300)
        h.set("randomizeReflections", 9, atFrame: 600)
        h.set("decayTimeAt0Hz", 4, atFrame: 900)
        h.set("gain", 5, atFrame: 1000)
        alloc_counter_start()
        for _ in 0..<200 { h.renderBlock(frames: 256) }
        h.reset()
        h.renderBlock(frames: 256)
        let count = alloc_counter_stop()
        XCTAssertEqual(count, 0)
    }

    func testInARackAStereoSourceIsAveragedAndDryPassesUnchanged() throws {
        // Through the real rack reader, graph compiler and engine: a stereo microphone
        // into the reverb's mono input (the engine averages), bypassed by dryWetMix 0.
        let registry = UnitRegistry(StandardUnits.types)
        let text = """
            { format: 1, name: "reverb bypass",
              units: { mic: { type: "input" }, verb: { type: "reverb", params: { dryWetMix: 0, decayTimeAt0Hz: 3 } },
                       out: { type: "output" } },
              connections: [ "mic -> verb -> out" ] }
            """
        let rack = try RackReader(registry: registry).read(text: text)
        let plan = try GraphCompiler(registry: registry).compile(
            rack, options: .init(sampleRate: rate, maxFrames: 128, hostInputChannels: 2))
        XCTAssertEqual(plan.tailSeconds, 1.8 + 0.055, accuracy: 1e-6, "defaults until the unit has rendered")
        let engine = RenderEngine(plan: plan)
        let left = noise(1280, amplitude: 0.4, seed: 3)
        let right = noise(1280, amplitude: 0.4, seed: 4)
        for b in 0..<10 {
            for i in 0..<128 {
                plan.hostInput[0][i] = left[b * 128 + i]
                plan.hostInput[1][i] = right[b * 128 + i]
            }
            engine.render(frameCount: 128)
            for i in 0..<128 {
                let mono = (left[b * 128 + i] + right[b * 128 + i]) * 0.5
                XCTAssertEqual(plan.hostOutput[0][i], mono, accuracy: 1e-7)
                XCTAssertEqual(plan.hostOutput[1][i], mono, accuracy: 1e-7)
            }
        }
        let verb = try XCTUnwrap(plan.unitIDs.firstIndex(of: "verb"))
        XCTAssertEqual(plan.units[verb].tailSeconds, 3 + 0.055, accuracy: 1e-3, "the rack's decay, once rendered")
    }

    func testTailSecondsFollowsTheLongerDecayTime() throws {
        let h = try harness()
        XCTAssertEqual(h.unit.tailSeconds, 1.8 + 0.055, accuracy: 1e-3)
        h.set("decayTimeAtNyquist", 4)
        _ = h.render(frames: 48000)
        XCTAssertEqual(h.unit.tailSeconds, 4 + 0.055, accuracy: 1e-3)
    }
}
