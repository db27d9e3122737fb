import StageCore
import StageTestSupport
import StageUnits
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The `deesser` unit, by measurement: a vowel passes, a sibilant burst over the threshold
/// is reduced by its range, nothing is reduced below the threshold, in both modes.
final class DeEsserTests: XCTestCase {
    let rate = 48000.0

    func harness(_ parameters: [String: Float]) throws -> UnitHarness {
        try UnitHarness(type: DeEsserUnitType(), parameters: parameters, sampleRate: rate)
    }

    /// A synthetic vowel: harmonics of 150 Hz up to 4 kHz, falling 6 dB per octave with
    /// formant bumps at 700 and 1200 Hz, at `level` dBFS RMS.
    func vowel(frames: Int, level: Double) -> [Float] {
        var x = [Double](repeating: 0, count: frames)
        var h = 1
        while Double(h) * 150 <= 4000 {
            let f = Double(h) * 150
            let formant = 1 + 2 * exp(-pow((f - 700) / 150, 2)) + 1.5 * exp(-pow((f - 1200) / 200, 2))
            let a = formant / Double(h)
            let phase = Double(h * h) * 0.7
            for i in 0..<frames { x[i] += a * sin(2 * Double.pi * f * Double(i) / rate + phase) }
            h += 1
        }
        return scaled(x, to: level)
    }

    /// Sibilant-like noise: 200 sines with fixed pseudo-random phases, 5–10 kHz, at `level` dBFS RMS.
    func sibilant(frames: Int, level: Double) -> [Float] {
        var x = [Double](repeating: 0, count: frames)
        var seed: UInt32 = 99
        for k in 0..<200 {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            let phase = Double(seed >> 8) / Double(1 << 24) * 2 * Double.pi
            let f = 5000 + 25 * Double(k)
            for i in 0..<frames { x[i] += sin(2 * Double.pi * f * Double(i) / rate + phase) }
        }
        return scaled(x, to: level)
    }

    func scaled(_ x: [Double], to level: Double) -> [Float] {
        let rms = (x.reduce(0) { $0 + $1 * $1 } / Double(x.count)).squareRoot()
        let g = pow(10, level / 20) / rms
        return x.map { Float($0 * g) }
    }

    /// Output level minus input level (dB) over the steady part (after 20 ms).
    func change(_ parameters: [String: Float], _ x: [Float]) throws -> Double {
        let y = try harness(parameters).render(input: [x], frames: x.count)[0]
        return Double(Measure.decibels(Measure.rms(y[960...]) / Measure.rms(x[960...])))
    }

    func testAVowelPassesWithinHalfADecibel() throws {
        let x = vowel(frames: 48000, level: -12)
        for mode: Float in [0, 1] {
            XCTAssertEqual(try change(["mode": mode], x), 0, accuracy: 0.5, "mode \(mode)")
        }
    }

    func testASibilantTwelveDecibelsOverTheThresholdIsReducedByTheRange() throws {
        let level = -20.0
        let x = sibilant(frames: 48000, level: level)
        // Wideband at the default 6 kHz split.
        for range: Float in [6, 10] {
            let c = try change(["mode": 1, "threshold": Float(level - 12), "range": range], x)
            XCTAssertLessThanOrEqual(c, -Double(range) + 1, "wideband, range \(range)")
            XCTAssertGreaterThanOrEqual(c, -Double(range) - 0.5, "wideband, range \(range): more than the range")
        }
        // Split mode reduces only above the split, so the split sits under the burst.
        let c = try change(["mode": 0, "frequency": 3000, "threshold": Float(level - 12), "range": 6], x)
        XCTAssertLessThanOrEqual(c, -5, "split at 3 kHz, range 6")
    }

    func testNothingIsReducedBelowTheThreshold() throws {
        let level = -20.0
        let x = sibilant(frames: 48000, level: level)
        for mode: Float in [0, 1] {
            let h = try harness(["mode": mode, "threshold": Float(level + 10), "range": 12])
            let y = h.render(input: [x], frames: x.count)[0]
            let unit = try XCTUnwrap(h.unit as? DeEsserUnit)
            XCTAssertEqual(unit.gainReduction, 0, "mode \(mode)")
            XCTAssertEqual(Double(Measure.decibels(Measure.rms(y[960...]) / Measure.rms(x[960...]))), 0, accuracy: 0.05)
            if mode == 1 { XCTAssertEqual(y, x, "wideband below the threshold passes the input untouched") }
        }
    }
}
