import StageCore
import StageTestSupport
import StageUnits
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The `tuner` unit, by measurement: within 0.5 cent of a steady tone from 40 Hz to 2 kHz
/// (a sine and a plucked-string-like tone rich in harmonics) in under 200 ms from its
/// onset; the same readings at any block size; no note on silence, on noise; the sound
/// passes through unchanged (or muted); readout text. The shared contract (block-size
/// invariance of the audio, reset, no allocation) is in `UnitContractTests`.
final class TunerTests: XCTestCase {
    let sr = 48000.0
    static let frequencies: [Double] = [
        40, 41.2, 55, 61.7, 82.41, 98, 110, 146.83, 196, 246.94, 261.63, 329.63, 440, 523.25, 659.26, 880, 1046.5,
        1318.5, 1567.98, 1760, 2000,
    ]

    func harness(_ parameters: [String: Float] = [:]) throws -> UnitHarness {
        try UnitHarness(type: TunerUnitType(), parameters: parameters, sampleRate: sr, maxFrames: 512)
    }

    /// A tone at `hz`: a sine, or six harmonics falling 1/k (a string; a bass or guitar).
    func tone(_ hz: Double, frames: Int, harmonics: Int = 1, amplitude: Double = 0.3) -> [Float] {
        let w = 2 * Double.pi * hz / sr
        var k = harmonics
        while k > 1 && Double(k) * hz > 0.45 * sr { k -= 1 }
        let norm = (1...k).reduce(0.0) { $0 + 1 / Double($1) }
        return (0..<frames).map { i in
            var s = 0.0
            for h in 1...k { s += sin(w * Double(h) * Double(i) + Double(h)) / Double(h) }
            return Float(amplitude * s / norm)
        }
    }

    /// Readings (frequency; 0: none) after each block of `block` frames.
    func readings(_ input: [Float], block: Int = 256, parameters: [String: Float] = [:]) throws -> [(frame: Int, hz: Double)] {
        let h = try harness(parameters)
        let unit = try XCTUnwrap(h.unit as? TunerUnit)
        var out: [(Int, Double)] = []
        var done = 0
        while done < input.count {
            let n = min(block, input.count - done)
            _ = h.render(input: [Array(input[done..<(done + n)])], frames: n, blockSize: n)
            done += n
            out.append((done, Double(unit.reading.frequency)))
        }
        return out
    }

    /// From `onset`: the time (ms) after which every reading is within `cents` of `hz`,
    /// and the worst error over the last 500 ms.
    func settle(_ r: [(frame: Int, hz: Double)], hz: Double, onset: Int, cents: Double = 0.5) -> (ms: Double?, worst: Double) {
        var lastBad = onset
        var worst = 0.0
        for (frame, f) in r where frame > onset {
            let e = f > 0 ? abs(Measure.cents(f, from: hz)) : .infinity
            if e > cents { lastBad = frame }
            if frame > r.last!.frame - Int(0.5 * sr) { worst = max(worst, e) }
        }
        let ms = lastBad >= r.last!.frame - Int(0.5 * sr) ? nil : Double(lastBad - onset) / sr * 1000
        return (ms, worst)
    }

    func testSteadyTonesWithinHalfACentInUnder200ms() throws {
        let onset = 4800
        var worstCents = 0.0, worstMs = 0.0
        for harmonics in [1, 6] {
            for hz in Self.frequencies {
                let input = [Float](repeating: 0, count: onset) + tone(hz, frames: Int(sr), harmonics: harmonics)
                let s = settle(try readings(input), hz: hz, onset: onset)
                let ms = try XCTUnwrap(s.ms, "\(hz) Hz, \(harmonics) harmonics: never settled within 0.5 cent (worst \(s.worst))")
                XCTAssertLessThan(ms, 200, "\(hz) Hz, \(harmonics) harmonics")
                XCTAssertLessThanOrEqual(s.worst, 0.5, "\(hz) Hz, \(harmonics) harmonics")
                worstCents = max(worstCents, s.worst)
                worstMs = max(worstMs, ms)
            }
        }
        print("tuner: 40 Hz-2 kHz, sine and 6 harmonics: worst \(String(format: "%.3f", worstCents)) cents, settled within 0.5 cent in \(String(format: "%.1f", worstMs)) ms at most")
    }

    /// Between two analyses nothing changes, and analyses fall at fixed sample times: the
    /// readings at each analysis are the same whatever the block size.
    func testReadingsDoNotDependOnTheBlockSize() throws {
        let input = [Float](repeating: 0, count: 1000) + tone(196, frames: 24000, harmonics: 6)
        let a = try readings(input, block: 512)
        for block in [1, 37, 64, 500] {
            let b = try readings(input, block: block)
            for frame in stride(from: 4096, to: input.count, by: 4096) {
                // The first reading after the analysis at `frame` (the next is 1,024 frames on).
                let x = a.first { $0.frame >= frame }!.hz
                let y = b.first { $0.frame >= frame }!.hz
                XCTAssertEqual(x, y, "block \(block) at frame \(frame)")
            }
        }
    }

    func testSilenceAndNoiseGiveNoNote() throws {
        XCTAssertTrue(try readings([Float](repeating: 0, count: 48000)).allSatisfy { $0.hz == 0 })
        var seed: UInt32 = 7
        let noise = (0..<48000).map { _ -> Float in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return (Float(seed >> 8) / Float(1 << 24) - 0.5) * 0.6
        }
        let r = try readings(noise)
        XCTAssertEqual(r.filter { $0.hz > 0 }.count, 0, "white noise shows no note")
        // A tone that stops: the note goes within 100 ms.
        let stop = tone(440, frames: 24000) + [Float](repeating: 0, count: 24000)
        let after = try readings(stop).filter { $0.frame > 24000 + 4800 }
        XCTAssertTrue(after.allSatisfy { $0.hz == 0 })
    }

    func testSoundPassesThroughOrIsMuted() throws {
        let x = tone(330, frames: 4800, harmonics: 3)
        let h = try harness()
        XCTAssertEqual(h.render(input: [x], frames: x.count, blockSize: 100)[0], x)
        let m = try harness(["mute": 1])
        XCTAssertEqual(Measure.peak(m.render(input: [x], frames: x.count)[0]), 0)
    }

    func testReadoutTextAndReference() throws {
        let h = try harness(["reference": 442])
        let unit = try XCTUnwrap(h.unit as? TunerUnit)
        XCTAssertEqual(unit.readoutText(unitID: "tuner"), "tuner: no note")
        _ = h.render(input: [tone(440, frames: 24000)], frames: 24000)
        // 440 Hz against A = 442: 7.85 cents flat.
        let text = unit.readoutText(unitID: "tuner")
        XCTAssertEqual(text, "tuner: A4 -7.9 cents (440 Hz)")
        XCTAssertEqual(unit.readouts.map(\.name), ["hz", "note", "cents"])
        XCTAssertEqual(Double(unit.readouts[2].value), 1200 * log2(440.0 / 442), accuracy: 0.3)
    }
}
