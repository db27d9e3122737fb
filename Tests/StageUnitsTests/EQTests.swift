import StageCore
import StageTestSupport
import StageUnits
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The `eq` unit, by measurement: every type's magnitude response against the exact
/// |H(e^jω)| of its cookbook design in Double, at three sample rates; the bandwidth's
/// meaning; the default vocal EQ; knob sweeps at full speed (no zipper, no clicks, no
/// instability); bypass.
final class EQTests: XCTestCase {
    func harness(_ parameters: [String: Float], bands: Int = 1, sampleRate: Double = 48000) throws -> UnitHarness {
        try UnitHarness(
            type: EQUnitType(), settings: ["bands": .number(Double(bands))], parameters: parameters,
            sampleRate: sampleRate, maxFrames: 512)
    }

    /// The unit's impulse response (one band), `frames` long.
    func impulseResponse(_ parameters: [String: Float], sampleRate: Double, frames: Int) throws -> [Float] {
        let h = try harness(parameters, sampleRate: sampleRate)
        var x = [Float](repeating: 0, count: frames)
        x[0] = 1
        return h.render(input: [x], frames: frames)[0]
    }

    /// |DFT| of `x` at `frequency` (exact evaluation of the truncated response's transform).
    func response(_ x: [Float], at frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        var re = 0.0, im = 0.0
        // Rotating phasor, renormalised every 1024 samples.
        var c = 1.0, s = 0.0
        let dc = cos(w), ds = sin(w)
        for (i, v) in x.enumerated() {
            re += Double(v) * c
            im -= Double(v) * s
            let nc = c * dc - s * ds
            s = s * dc + c * ds
            c = nc
            if i & 1023 == 1023 {
                let r = (c * c + s * s).squareRoot()
                c /= r
                s /= r
            }
        }
        return (re * re + im * im).squareRoot()
    }

    /// Frequencies 20 Hz…20 kHz, 12 per octave.
    let probeFrequencies: [Double] = (0..<120).map { 20 * pow(2, Double($0) / 12) }.filter { $0 <= 20000 }

    func db(_ x: Double) -> Double { 20 * log10(max(x, 1e-30)) }

    // MARK: Magnitude against the design

    func testEveryTypeMatchesItsCookbookDesignWithinATenthOfADecibel() throws {
        let settings: [(frequency: Double, gain: Double, bandwidth: Double)] = [
            (90, 9, 0.5), (1000, -12, 1), (3500, 6, 0.1), (12000, -9, 3), (40, 12, 2),
        ]
        for rate in [44100.0, 48000, 96000] {
            for type in EQFilterType.allCases {
                for s in settings {
                    let design = EQBandDesign(type: type, frequency: s.frequency, gain: s.gain, bandwidth: s.bandwidth)
                    let biquad = design.cookbook(sampleRate: rate)
                    let ir = try impulseResponse(
                        [
                            "type1": Float(type.rawValue), "frequency1": Float(s.frequency), "gain1": Float(s.gain),
                            "bandwidth1": Float(s.bandwidth),
                        ], sampleRate: rate, frames: Int(rate))
                    // The response must have died out well inside the window.
                    XCTAssertLessThan(Measure.peak(ir[(ir.count - 1000)...]), 1e-7, "\(type) \(s) at \(rate): still ringing")
                    var worst = 0.0
                    var worstAt = 0.0
                    for f in probeFrequencies where f < 0.5 * rate {
                        let target = db(biquad.magnitude(at: f, sampleRate: rate))
                        if target < -60 { continue }
                        let measured = db(response(ir, at: f, sampleRate: rate))
                        if abs(measured - target) > worst {
                            worst = abs(measured - target)
                            worstAt = f
                        }
                    }
                    XCTAssertLessThan(
                        worst, 0.1, "\(type) f=\(s.frequency) gain=\(s.gain) bw=\(s.bandwidth) at \(rate) Hz: "
                            + "off by \(formatNumber(worst)) dB at \(formatNumber(worstAt)) Hz")
                }
            }
        }
    }

    /// The designs mean what racks/README.md says: a peak reaches its gain at its
    /// frequency, band pass and notch are 3 dB down (and a peak at half its dB gain)
    /// `bandwidth` octaves apart, Butterworth passes are 3 dB down at the corner, shelves
    /// reach their gain far from the corner and half of it at the corner.
    func testDesignsMeanWhatTheTableSays() {
        let rate = 48000.0
        func mag(_ t: EQFilterType, _ f: Double, _ g: Double, _ bw: Double, at x: Double) -> Double {
            20 * log10(EQBandDesign(type: t, frequency: f, gain: g, bandwidth: bw).cookbook(sampleRate: rate).magnitude(at: x, sampleRate: rate))
        }
        XCTAssertEqual(mag(.parametric, 1000, 9, 1, at: 1000), 9, accuracy: 1e-9)
        for bw in [0.3, 1.0, 2.0] {
            let lo = 1000 * pow(2, -bw / 2), hi = 1000 * pow(2, bw / 2)
            // The cookbook's bandwidth is symmetric in the bilinear-warped domain, hence 2 %.
            for x in [lo, hi] {
                XCTAssertEqual(mag(.bandPass, 1000, 0, bw, at: x), -3.0103, accuracy: 0.05 + 0.02 * bw, "band pass bw \(bw)")
                XCTAssertEqual(mag(.bandStop, 1000, 0, bw, at: x), -3.0103, accuracy: 0.05 + 0.02 * bw, "band stop bw \(bw)")
                XCTAssertEqual(mag(.parametric, 1000, 12, bw, at: x), 6, accuracy: 0.05 + 0.02 * bw, "peak bw \(bw)")
            }
        }
        XCTAssertEqual(mag(.lowPass, 2000, 0, 3, at: 2000), -3.0103, accuracy: 1e-6)
        XCTAssertEqual(mag(.highPass, 90, 0, 0.1, at: 90), -3.0103, accuracy: 1e-6)
        XCTAssertEqual(mag(.lowShelf, 200, 8, 0.5, at: 20), 8, accuracy: 0.1)
        XCTAssertEqual(mag(.lowShelf, 200, 8, 0.5, at: 200), 4, accuracy: 1e-6)
        XCTAssertEqual(mag(.highShelf, 8000, -6, 0.5, at: 20000), -6, accuracy: 0.3)
        XCTAssertEqual(mag(.highShelf, 8000, -6, 0.5, at: 8000), -3, accuracy: 1e-6)
        // Resonant shelves overshoot; plain ones never do.
        let resonantPeak = probeFrequencies.map { mag(.resonantLowShelf, 200, 8, 0.5, at: $0) }.max()!
        let plainPeak = probeFrequencies.map { mag(.lowShelf, 200, 8, 0.5, at: $0) }.max()!
        XCTAssertGreaterThan(resonantPeak, 9)
        XCTAssertLessThanOrEqual(plainPeak, 8 + 1e-6)
        // Resonant passes peak above 0 dB near the corner at narrow bandwidths.
        XCTAssertGreaterThan(mag(.resonantLowPass, 1000, 0, 0.5, at: 1000), 8)
    }

    // MARK: Defaults

    func testDefaultsAreAVocalEQWithAHighPassAt90Hz() throws {
        let h = try UnitHarness(type: EQUnitType(), sampleRate: 48000)
        for (f, expected, tolerance) in [(30.0, -19.1, 0.5), (90, -3.01, 0.2), (1000, 0, 0.05), (5000, 0, 0.05), (15000, 0, 0.05)] {
            let x = Measure.sine(frequency: f, frames: 48000, amplitude: 0.5)
            let out = h.render(input: [x], frames: 48000)[0]
            h.reset()
            let gain = Measure.decibels(Measure.rms(out[24000...]) / Measure.rms(x[24000...]))
            XCTAssertEqual(Double(gain), expected, accuracy: tolerance, "default EQ at \(f) Hz")
        }
    }

    // MARK: Sweeps

    /// Energy above 6 kHz (an 8th-order Butterworth high-pass in Double) relative to the whole.
    func highBandRatio(_ x: [Float], rate: Double) -> Double {
        var y = x.map(Double.init)
        let bq = EQBandDesign(type: .highPass, frequency: 6000, gain: 0, bandwidth: 1).cookbook(sampleRate: rate)
        for _ in 0..<4 {
            var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
            for i in y.indices {
                let v = (bq.b0 * y[i] + bq.b1 * x1 + bq.b2 * x2 - bq.a1 * y1 - bq.a2 * y2) / bq.a0
                x2 = x1
                x1 = y[i]
                y2 = y1
                y1 = v
                y[i] = v
            }
        }
        let high = y.dropFirst(4800).reduce(0) { $0 + $1 * $1 }
        let all = x.dropFirst(4800).reduce(0.0) { $0 + Double($1) * Double($1) }
        return high / all
    }

    /// A MIDI knob turned end to end and back in 100 ms, 128 steps each way, for 2 s.
    func knobSweep(_ h: UnitHarness, _ id: String, from a: Float, to b: Float, logarithmic: Bool, frames: Int) {
        let stepFrames = 4800 / 128 / 2
        var frame: Int64 = 0
        var step = 0
        while frame < Int64(frames) {
            let phase = step % 256
            let position = Float(phase < 128 ? phase : 255 - phase) / 127
            let v = logarithmic ? a * powf(b / a, position) : a + (b - a) * position
            h.set(id, v, atFrame: frame)
            frame += Int64(stepFrames)
            step += 1
        }
    }

    func testFullSpeedFrequencyAndGainSweepsGiveNoZipperNoClicksNoInstability() throws {
        let rate = 48000.0
        let frames = 96000
        let sine = Measure.sine(frequency: 1000, sampleRate: rate, frames: frames, amplitude: 0.25)
        // Reference: the same sine through the static band (no sweep): its energy above 6 kHz
        // is the filter's and the test filter's own floor.
        let base: [String: Float] = ["type1": 0, "frequency1": 1000, "gain1": 12, "bandwidth1": 1]
        let still = try harness(base).render(input: [sine], frames: frames)[0]
        let floor = highBandRatio(still, rate: rate)
        for (id, a, b, log) in [("frequency1", Float(100), Float(10000), true), ("gain1", Float(-24), Float(24), false), ("bandwidth1", Float(0.05), Float(5), true)] {
            let h = try harness(base)
            knobSweep(h, id, from: a, to: b, logarithmic: log, frames: frames)
            let out = h.render(input: [sine], frames: frames, blockSize: 256)[0]
            XCTAssertTrue(out.allSatisfy { $0.isFinite }, "\(id): not finite")
            XCTAssertLessThan(Measure.peak(out), 0.25 * 16 * 1.05, "\(id): above the largest gain the band allows")
            let ratio = highBandRatio(out, rate: rate)
            XCTAssertLessThan(
                10 * log10(ratio), -80, "\(id) sweep: energy above 6 kHz \(formatNumber(10 * log10(ratio))) dB "
                    + "(static floor \(formatNumber(10 * log10(floor))) dB): zipper or clicks")
        }
    }

    func testSweepsOnNoiseStayStableAndSettle() throws {
        let rate = 48000.0
        let frames = 96000
        var seed: UInt32 = 7
        let noise: [Float] = (0..<frames).map { i in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return i < frames - 24000 ? 0.3 * (Float(seed >> 8) / 8_388_608 - 1) : 0
        }
        for type in EQFilterType.allCases {
            let h = try harness(["type1": Float(type.rawValue), "frequency1": 1000, "gain1": 18, "bandwidth1": 0.05])
            knobSweep(h, "frequency1", from: 20, to: 20000, logarithmic: true, frames: frames - 24000)
            let out = h.render(input: [noise], frames: frames, blockSize: 128)[0]
            XCTAssertTrue(out.allSatisfy { $0.isFinite }, "\(type): not finite")
            XCTAssertLessThan(Measure.peak(out), 0.3 * 8 * 30, "\(type): runaway")
            XCTAssertLessThan(Measure.peak(out[(frames - 4800)...]), 1e-5, "\(type): did not settle after the input stopped")
        }
    }

    // MARK: Bypass and global gain

    func testBypassPassesTheInputAndGlobalGainScales() throws {
        let x = Measure.sine(frequency: 440, frames: 24000, amplitude: 0.5)
        let h = try harness(["type1": 2, "frequency1": 2000, "bypass1": 1, "globalGain": -6])
        let out = h.render(input: [x], frames: 24000)[0]
        let expected = powf(10, -6.0 / 20)
        for i in 0..<24000 { XCTAssertEqual(out[i], x[i] * expected, accuracy: 1e-6) }
    }
}

extension EQTests {
    /// The contract test runs the defaults (mostly flat bands); here every band works,
    /// including fast-decaying ones near Nyquist, and the output must end in silence
    /// without denormals.
    func testActiveBandsEndInSilenceWithoutDenormals() throws {
        let h = try harness(
            [
                "type1": 2, "frequency1": 90, "type2": 0, "gain2": 9, "frequency2": 20000, "bandwidth2": 5,
                "type3": 10, "gain3": -12, "frequency3": 15000, "bandwidth3": 0.1, "type4": 3, "frequency4": 23000,
                "bandwidth4": 5, "type5": 5, "frequency5": 12000, "bandwidth5": 3,
            ], bands: 5)
        var seed: UInt32 = 3
        let x: [Float] = (0..<96000).map { i in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return i < 24000 ? 0.5 * (Float(seed >> 8) / 8_388_608 - 1) : 0
        }
        let y = h.render(input: [x], frames: x.count, blockSize: 512)[0]
        XCTAssertFalse(y.contains { $0.isSubnormal }, "denormal samples in the output")
        XCTAssertLessThan(Measure.peak(y[90000...]), 1e-5)
        XCTAssertLessThan(h.unit.tailSeconds, 2)
    }
}
