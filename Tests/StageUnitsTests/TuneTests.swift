import StageCore
import StageTestSupport
import StageUnits
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The `tune` unit, by measurement: a sharp vowel corrected to the note within the retune
/// time, a glide turned into steps of the scale, `amount`, `humanize`, held notes, unvoiced
/// sound untouched, the latency. The shared contract is in `UnitContractTests`.
///
/// Sung range over which these hold: tested at 150 Hz, 440 Hz and 1 kHz (the sharp-vowel
/// test runs at all three).
final class TuneTests: XCTestCase {
    let sr = 48000.0

    func harness(_ settings: [String: JSONValue] = [:], _ parameters: [String: Float] = [:]) throws -> UnitHarness {
        try UnitHarness(type: TuneUnitType(), settings: settings, parameters: parameters, sampleRate: sr, maxFrames: 512)
    }

    func run(_ h: UnitHarness, _ input: [Float], blockSize: Int = 256) -> [Float] {
        h.render(input: [input], frames: input.count, blockSize: blockSize)[0]
    }

    func pitch(_ x: ArraySlice<Float>) -> Double { PitchMeasure.fundamental(x, sampleRate: sr, low: 80, high: 1500) }

    /// A vowel 40 cents sharp comes out within ±5 cents of the note after the retune time,
    /// within 20 ms of the onset at speed 0; from 150 Hz to 1 kHz.
    func testSharpVowelIsCorrectedWithinTheRetuneTime() throws {
        for (note, hz) in [(69.0, 440.0), (50.0, 146.83), (83.0, 987.77)] {
            let sharp = hz * pow(2, 40.0 / 1200)
            let silence = [Float](repeating: 0, count: 4800)
            let vowel = silence + PitchMeasure.vowel(f0: sharp, frames: 48000)
            for speed: Float in [0, 50] {
                let h = try harness([:], ["speed": speed])
                let out = run(h, vowel)
                // From the onset plus the retune time (20 ms at speed 0), on the output's time line.
                let settle = 4800 + Int((speed == 0 ? 0.020 : Double(speed) / 1000) * sr)
                let early = pitch(out[settle..<(settle + 4800)])
                let late = pitch(out[(settle + 4800)...])
                let e1 = Measure.cents(early, from: hz), e2 = Measure.cents(late, from: hz)
                print("tune note \(note) 40 cents sharp, speed \(speed): \(String(format: "%+.2f", e1)) cents over the 100 ms after the retune time, \(String(format: "%+.2f", e2)) after")
                XCTAssertLessThanOrEqual(abs(e1), 5, "note \(note) speed \(speed), just after the retune time")
                XCTAssertLessThanOrEqual(abs(e2), 5, "note \(note) speed \(speed)")
            }
        }
    }

    /// `amount` 50 % halves the correction: 40 cents sharp comes out 20 cents sharp.
    func testAmountScalesTheCorrection() throws {
        let vowel = PitchMeasure.vowel(f0: 440 * pow(2, 40.0 / 1200), frames: 48000)
        for (amount, expected) in [(Float(50), 20.0), (0, 40)] {
            let out = run(try harness([:], ["speed": 0, "amount": amount]), vowel)
            let error = Measure.cents(pitch(out[9600...]), from: 440)
            print("tune amount \(amount): \(String(format: "%+.2f", error)) cents from A4")
            XCTAssertEqual(error, expected, accuracy: 3, "amount \(amount)")
        }
    }

    /// A glide from A4 to B4 at speed 0, C major: the output sits on A4 or B4 (steps), where
    /// the input passes through everything between.
    func testGlideComesOutAsStepsOnTheScale() throws {
        let frames = 96000
        var x = [Double](repeating: 0, count: frames)
        var phase = 1.0
        for i in 0..<frames {
            if phase >= 1 {
                x[i] = 1
                phase -= 1
            }
            let f = 440 * pow(2, Double(i) / Double(frames) / 6)  // A4 → B4 (200 cents) over 2 s
            phase += f / sr
        }
        // Formants as the synthetic vowel's (one resonator is enough for the detector).
        let r = exp(-Double.pi * 90 / sr), c = 2 * r * cos(2 * Double.pi * 800 / sr)
        var y1 = 0.0, y2 = 0.0
        let input: [Float] = x.map { v in
            let y = (1 - c + r * r) * v + c * y1 - r * r * y2
            y2 = y1
            y1 = y
            return Float(y * 0.3)
        }
        let h = try harness(["key": .string("C"), "scale": .string("major")], ["speed": 0])
        let out = run(h, input)
        func onScale(_ x: [Float]) -> (share: Double, a: Int, b: Int) {
            let track = PitchMeasure.pitchTrack(x, sampleRate: sr, frame: 960, hop: 480, low: 200, high: 800).compactMap { $0 }
            let a = track.filter { abs(Measure.cents($0, from: 440)) < 15 }.count
            let b = track.filter { abs(Measure.cents($0, from: 493.88)) < 15 }.count
            return (Double(a + b) / Double(max(track.count, 1)), a, b)
        }
        let (share, a, b) = onScale(Array(out[4800...]))
        let (inShare, _, _) = onScale(input)
        print("tune glide A4→B4: \(String(format: "%.0f", share * 100)) % of frames within 15 cents of A4 (\(a)) or B4 (\(b)); the input \(String(format: "%.0f", inShare * 100)) %")
        XCTAssertGreaterThan(share, 0.9)
        XCTAssertGreaterThan(a, 20)
        XCTAssertGreaterThan(b, 20)
        XCTAssertLessThan(inShare, 0.4)
    }

    /// `notes`: corrected to the held note's pitch class; none held, untouched.
    func testNotesSourceCorrectsToTheHeldNotes() throws {
        let vowel = PitchMeasure.vowel(f0: 440 * pow(2, 60.0 / 1200), frames: 48000)  // 60 cents over A4
        let h = try harness(["source": .string("notes")], ["speed": 0])
        let free = run(h, vowel)
        XCTAssertEqual(Measure.cents(pitch(free[9600...]), from: 440), 60, accuracy: 3, "no note held: untouched")
        h.reset()
        h.send(.noteOn(channel: 0, note: 45, velocity: 100), atFrame: 0)  // A2: pitch class A
        let out = run(h, vowel)
        let error = Measure.cents(pitch(out[9600...]), from: 440)
        print("tune notes A held, sung 60 cents over A4: \(String(format: "%+.2f", error)) cents")
        XCTAssertLessThanOrEqual(abs(error), 5)
    }

    /// `humanize` keeps the singer's vibrato around the corrected note.
    func testHumanizeKeepsTheVibrato() throws {
        // 10 cents sharp, ±30 cents of vibrato: A4 stays the nearest note throughout.
        let vowel = PitchMeasure.vowel(f0: 440 * pow(2, 10.0 / 1200), frames: 96000, vibratoCents: 30)
        func depth(_ x: [Float]) -> Double {
            let track = PitchMeasure.pitchTrack(x, sampleRate: sr, frame: 960, hop: 240, low: 200, high: 800).compactMap { $0 }
            let cents = track.map { Measure.cents($0, from: 440) }
            return (cents.max()! - cents.min()!) / 2
        }
        let flat = depth(Array(run(try harness([:], ["speed": 0, "humanize": 0]), vowel)[24000...]))
        let kept = depth(Array(run(try harness([:], ["speed": 0, "humanize": 100]), vowel)[24000...]))
        print("tune vibrato depth: input 30 cents, humanize 0 → \(String(format: "%.1f", flat)), humanize 100 → \(String(format: "%.1f", kept))")
        XCTAssertLessThan(flat, 12)
        XCTAssertGreaterThan(kept, 20)
    }

    /// Unvoiced sound passes untouched: noise comes out as the input delayed by the latency.
    func testUnvoicedSoundPassesUntouched() throws {
        let noise = PitchMeasure.noise(frames: 24000, amplitude: 0.3)
        let h = try harness()
        let out = run(h, noise)
        let d = h.unit.latencyFrames
        var worst: Float = 0
        for i in d..<noise.count { worst = max(worst, abs(out[i] - noise[i - d])) }
        XCTAssertLessThan(worst, 1e-5)
    }

    /// Latency: fixed, at most 5 ms, and the measured delay of a corrected vowel matches it.
    func testLatencyIsFixedAndAtMostFiveMilliseconds() throws {
        for rate in [44100.0, 48000, 96000] {
            let h = try UnitHarness(type: TuneUnitType(), sampleRate: rate, maxFrames: 64)
            XCTAssertLessThanOrEqual(Double(h.unit.latencyFrames) / rate, 0.005, "at \(rate) Hz")
        }
        let input = PitchMeasure.syllables(frames: 240000)
        let h = try harness([:], ["speed": 0])
        let out = run(h, input)
        let measured = PitchMeasure.envelopeDelay(of: out, relativeTo: input, maxLag: 2400)
        print("tune latency: measured \(measured) frames, reported \(h.unit.latencyFrames)")
        XCTAssertLessThanOrEqual(abs(measured - Double(h.unit.latencyFrames)), 48)
    }
}
