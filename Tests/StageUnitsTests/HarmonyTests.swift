import StageCore
import StageTestSupport
import StageUnits
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The `harmony` unit, by measurement: each voice's fundamental against the note it must
/// sing (notes, chord, scale, intervals modes), formants, unvoiced sound, latency, timing of
/// note events. The shared contract (block sizes, reset, silence, extremes, allocation) is
/// in `UnitContractTests`, which covers every registered type.
final class HarmonyTests: XCTestCase {
    let sr = 48000.0

    /// A JSON list of numbers, for the `intervals` setting.
    func list(_ numbers: Double...) -> JSONValue {
        .array(numbers.map { JSONNode(.number($0), at: SourceLocation(line: 0, column: 0)) })
    }

    static func hz(_ note: Double) -> Double { 440 * pow(2, (note - 69) / 12) }

    func harness(
        _ settings: [String: JSONValue], _ parameters: [String: Float] = [:], rate: Double = 48000
    ) throws -> UnitHarness {
        try UnitHarness(type: HarmonyUnitType(), settings: settings, parameters: parameters, sampleRate: rate, maxFrames: 512)
    }

    /// Renders `input` with `notes` held from frame 0; returns left and right.
    func render(
        _ h: UnitHarness, _ input: [Float], notes: [Int] = [], blockSize: Int = 256
    ) -> (left: [Float], right: [Float]) {
        for n in notes { h.send(.noteOn(channel: 0, note: n, velocity: 100), atFrame: 0) }
        let out = h.render(input: [input], frames: input.count, blockSize: blockSize)
        return (out[0], out[1])
    }

    func assertPitch(
        _ x: ArraySlice<Float>, note: Double, tolerance: Double = 5, _ what: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let measured = PitchMeasure.fundamental(x, sampleRate: sr, low: 80, high: 1200)
        let error = Measure.cents(measured, from: Self.hz(note))
        print("harmony \(what): \(String(format: "%.2f", measured)) Hz, error \(String(format: "%+.2f", error)) cents")
        XCTAssertLessThanOrEqual(abs(error), tolerance, what, file: file, line: line)
    }

    /// The mean pitch (in log frequency) of a 20 ms-frame pitch track, in Hz. Frames more
    /// than a semitone from the median are left out and counted (the track's YIN takes an
    /// octave on a rare frame of PSOLA output with vibrato; the pitch unit's output shows
    /// the same frame); at most 5 % may be.
    func meanPitch(_ x: ArraySlice<Float>, file: StaticString = #filePath, line: UInt = #line) -> Double {
        let track = PitchMeasure.pitchTrack(Array(x), sampleRate: sr, frame: 960, hop: 240, low: 80, high: 1200)
            .compactMap { $0 }.map { log2($0) }
        let median = track.sorted()[track.count / 2]
        let kept = track.filter { abs($0 - median) < 1.0 / 12 }
        XCTAssertGreaterThanOrEqual(Double(kept.count), 0.95 * Double(track.count), "outlying frames", file: file, line: line)
        if kept.count < track.count { print("harmony pitch track: \(track.count - kept.count) of \(track.count) frames left out") }
        return pow(2, kept.reduce(0, +) / Double(max(kept.count, 1)))
    }

    /// For voices that follow the singer (chord, scale, intervals: the vibrato carries
    /// over), the output's mean pitch over four vibrato cycles against the input's over the
    /// same cycles (shifted by the latency), times the interval to `note` from the sung `from`.
    func assertFollows(
        _ out: [Float], _ input: [Float], from: Double, note: Double, latency: Int, _ what: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let start = 9600
        let cycles = Int(4 / 5.5 * sr)
        let sung = meanPitch(input[(start - latency)..<(start - latency + cycles)])
        let measured = meanPitch(out[start..<(start + cycles)])
        let expected = sung * pow(2, (note - from) / 12)
        let error = Measure.cents(measured, from: expected)
        print("harmony \(what): sung \(String(format: "%.2f", sung)) Hz, voice \(String(format: "%.2f", measured)) Hz, error \(String(format: "%+.2f", error)) cents against the interval")
        XCTAssertLessThanOrEqual(abs(error), 5, what, file: file, line: line)
        XCTAssertLessThanOrEqual(abs(Measure.cents(measured, from: Self.hz(note))), 5, "\(what): the note", file: file, line: line)
    }

    // MARK: Notes mode

    /// A vowel with vibrato at 220 Hz, E4 held: the voice sings 329.63 Hz.
    func testNotesModeVoiceSingsTheHeldNote() throws {
        let vowel = PitchMeasure.vowel(f0: 220, frames: 48000, vibratoCents: 30)
        let h = try harness(["voices": .number(1)], ["leadLevel": -96, "pan1": 0])
        let out = render(h, vowel, notes: [64])
        assertPitch(out.left[9600...], note: 64, "notes E4 over a 220 Hz vowel")
        XCTAssertLessThan(zip(out.left, out.right).map { abs($0 - $1) }.max() ?? 1, 1e-5, "voice 1 centred")
    }

    /// C4 and G4 held, voice 1 hard left, voice 2 hard right, lead off.
    func testNotesModeTwoVoicesPannedApart() throws {
        let vowel = PitchMeasure.vowel(f0: 220, frames: 48000, vibratoCents: 30)
        let h = try harness(["voices": .number(2)], ["leadLevel": -96, "pan1": -1, "pan2": 1])
        let out = render(h, vowel, notes: [67, 60])
        assertPitch(out.left[9600...], note: 60, "notes C4 left")
        assertPitch(out.right[9600...], note: 67, "notes G4 right")
    }

    /// More notes than voices: the newest win, sung in order of pitch.
    func testNotesModeNewestNotesWin() throws {
        let vowel = PitchMeasure.vowel(f0: 220, frames: 48000)
        let h = try harness(["voices": .number(2)], ["leadLevel": -96, "pan1": -1, "pan2": 1])
        h.send(.noteOn(channel: 0, note: 72, velocity: 100), atFrame: 0)
        h.send(.noteOn(channel: 0, note: 64, velocity: 100), atFrame: 10)
        h.send(.noteOn(channel: 0, note: 55, velocity: 100), atFrame: 20)
        let out = h.render(input: [vowel], frames: vowel.count, blockSize: 128)
        assertPitch(out[0][9600...], note: 55, "newest two: G3 left")
        assertPitch(out[1][9600...], note: 64, "newest two: E4 right")
    }

    /// The frame (after `from`) where a short-frame pitch track of `x` first sits within
    /// 20 cents of `note` for 20 ms.
    func arrival(_ x: [Float], at note: Double, from: Int) -> Int? {
        let hop = 48
        let track = PitchMeasure.pitchTrack(Array(x[from...]), sampleRate: sr, frame: 480, hop: hop, low: 100, high: 800)
        var run = 0
        for (i, f) in track.enumerated() {
            if let f, abs(Measure.cents(f, from: Self.hz(note))) < 20 { run += 1 } else { run = 0 }
            // The frame that completes the run ends at this index's frame end.
            if run == 20 { return from + (i - 19) * hop + 480 }
        }
        return nil
    }

    /// A note change moves the voice within one period (plus the latency) with no glide,
    /// and over `glide` ms with one.
    func testNoteChangeMovesTheVoiceWithinAPeriodPlusGlide() throws {
        let vowel = PitchMeasure.vowel(f0: 220, frames: 72000)
        let change = 30011
        for glide: Float in [0, 100] {
            let h = try harness(["voices": .number(1)], ["leadLevel": -96, "glide": glide])
            h.send(.noteOn(channel: 0, note: 64, velocity: 100), atFrame: 0)
            h.send(.noteOn(channel: 0, note: 67, velocity: 100), atFrame: Int64(change))
            h.send(.noteOff(channel: 0, note: 64), atFrame: Int64(change))
            let out = h.render(input: [vowel], frames: vowel.count, blockSize: 256)[0]
            let latency = h.unit.latencyFrames
            guard let reached = arrival(out, at: 67, from: change - 4800) else {
                XCTFail("glide \(glide): never reached G4")
                continue
            }
            // The track's frame (10 ms) must lie wholly at the new pitch: allow that frame.
            let bound = change + latency + Int(sr / Self.hz(67)) + Int(Double(glide) * sr / 1000) + 480
            print("harmony note change glide \(glide) ms: at the new note \(reached - change) frames after the event (bound \(bound - change))")
            XCTAssertLessThanOrEqual(reached, bound, "glide \(glide)")
            if glide > 0 {
                XCTAssertGreaterThan(reached, change + Int(Double(glide) * sr / 1000 * 0.5), "the glide takes time")
            }
        }
    }

    /// Notes outside the unit's `keys` or on another channel do not play it.
    func testChannelAndKeysFilterTheNotes() throws {
        let vowel = PitchMeasure.vowel(f0: 220, frames: 24000)
        let h = try harness(["voices": .number(1), "channel": .number(2), "keys": .string("C4..C6")], ["leadLevel": -96])
        h.send(.noteOn(channel: 1, note: 48, velocity: 100), atFrame: 0)  // below the range
        h.send(.noteOn(channel: 0, note: 64, velocity: 100), atFrame: 0)  // other channel
        let silent = h.render(input: [vowel], frames: vowel.count)[0]
        XCTAssertLessThan(Measure.peak(silent), 1e-6)
        h.send(.noteOn(channel: 1, note: 64, velocity: 100))
        let out = h.render(input: [vowel], frames: vowel.count)[0]
        assertPitch(out[9600...], note: 64, "channel 2, E4 in C4..C6")
    }

    /// No notes held: the voices fade out over `release`; the lead stays.
    func testVoicesReleaseWhenNoNotesAreHeld() throws {
        let vowel = PitchMeasure.vowel(f0: 220, frames: 48000)
        let h = try harness(["voices": .number(1), "release": .number(100)], ["leadLevel": -96])
        h.send(.noteOn(channel: 0, note: 64, velocity: 100), atFrame: 0)
        h.send(.noteOff(channel: 0, note: 64), atFrame: 24000)
        let out = h.render(input: [vowel], frames: vowel.count)[0]
        XCTAssertGreaterThan(Measure.rms(out[12000..<24000]), 0.02)
        XCTAssertGreaterThan(Measure.rms(out[24000..<25000]), 0.01, "still fading")
        XCTAssertLessThan(Measure.peak(out[(24000 + 4800 + 100)...]), 1e-6, "silent after the release")
        let lead = try harness(["voices": .number(1)], ["leadLevel": 0])
        let dry = lead.render(input: [vowel], frames: vowel.count)
        XCTAssertEqual(dry[0], vowel, "no notes: the lead is the input, undelayed")
    }

    // MARK: Chord, scale, intervals

    /// C–E–G held, the lead sings D4: "above" sings E4, "below" sings C4.
    func testChordModeTakesTheChordTonesAroundTheSungNote() throws {
        let vowel = PitchMeasure.vowel(f0: Self.hz(62), frames: 48000, vibratoCents: 20)
        let h = try harness(
            ["voices": .number(2), "source": .string("chord"), "position1": .string("above"), "position2": .string("below")],
            ["leadLevel": -96, "pan1": -1, "pan2": 1])
        let out = render(h, vowel, notes: [60, 64, 67])
        let d = h.unit.latencyFrames
        assertFollows(out.left, vowel, from: 62, note: 64, latency: d, "chord above D4")
        assertFollows(out.right, vowel, from: 62, note: 60, latency: d, "chord below D4")
    }

    /// A lead on a chord tone gets the next one; above2 is the second chord tone above.
    func testChordModeOnAChordToneAndSecondPositions() throws {
        let vowel = PitchMeasure.vowel(f0: Self.hz(64), frames: 48000)
        let h = try harness(
            ["voices": .number(2), "source": .string("chord"), "position1": .string("above"), "position2": .string("above2")],
            ["leadLevel": -96, "pan1": -1, "pan2": 1])
        let out = render(h, vowel, notes: [48, 52, 55])  // C3 E3 G3: pitch classes count
        assertPitch(out.left[9600...], note: 67, "chord above E4")
        assertPitch(out.right[9600...], note: 72, "chord above2 E4")
    }

    /// C major, a third above: C4 → E4, D4 → F4, E4 → G4, B3 → D4.
    func testScaleModeSingsDiatonicThirds() throws {
        for (sung, third) in [(60, 64), (62, 65), (64, 67), (59, 62)] {
            let vowel = PitchMeasure.vowel(f0: Self.hz(Double(sung)), frames: 48000, vibratoCents: 20)
            let h = try harness(
                ["voices": .number(1), "source": .string("scale"), "key": .string("C"), "scale": .string("major"),
                 "intervals": list(3)],
                ["leadLevel": -96])
            let out = render(h, vowel)
            assertFollows(
                out.left, vowel, from: Double(sung), note: Double(third), latency: h.unit.latencyFrames,
                "scale third above \(sung)")
        }
    }

    /// A third below in A minor, and an off-scale sung note taking its nearest degree.
    func testScaleModeThirdBelowAndOffScaleNotes() throws {
        let cases = [(69, 65, "natural minor A4 → F4"), (61, 57, "C#4 (off C major) → C4 → A3")]
        for (i, (sung, target, what)) in cases.enumerated() {
            let vowel = PitchMeasure.vowel(f0: Self.hz(Double(sung)), frames: 36000)
            let settings: [String: JSONValue] = [
                "voices": .number(1), "source": .string("scale"), "key": .string(i == 0 ? "A" : "C"),
                "scale": .string(i == 0 ? "naturalMinor" : "major"), "intervals": list(-3),
            ]
            let out = render(try harness(settings, ["leadLevel": -96]), vowel)
            // Off the scale, the interval counts from the nearest degree (a tie takes the
            // lower), and the voice lands on the scale.
            assertPitch(out.left[9600...], note: Double(target), what)
        }
    }

    /// Intervals mode: fixed semitones, and just tuning makes a major third pure (5/4).
    func testIntervalsModeAndJustTuning() throws {
        let vowel = PitchMeasure.vowel(f0: 200, frames: 36000)
        for (tuning, cents) in [("equal", 400.0), ("just", 386.31)] {
            let h = try harness(
                ["voices": .number(1), "source": .string("intervals"), "intervals": list(4),
                 "tuning": .string(tuning)],
                ["leadLevel": -96])
            let out = render(h, vowel)
            let measured = PitchMeasure.fundamental(out.left[9600...], sampleRate: sr, low: 80, high: 1200)
            let error = Measure.cents(measured, from: 200 * pow(2, cents / 1200))
            print("harmony intervals +4 \(tuning): \(measured) Hz, error \(error) cents")
            XCTAssertLessThanOrEqual(abs(error), 3, tuning)
        }
    }

    /// Hold latches the chord after the keys are released; holdRelease lets it go.
    func testHoldLatchesTheLastChord() throws {
        let vowel = PitchMeasure.vowel(f0: 220, frames: 72000)
        let h = try harness(
            ["voices": .number(1), "hold": .bool(true), "holdRelease": .number(500), "release": .number(50)],
            ["leadLevel": -96])
        h.send(.noteOn(channel: 0, note: 64, velocity: 100), atFrame: 0)
        h.send(.noteOff(channel: 0, note: 64), atFrame: 4800)
        let out = h.render(input: [vowel], frames: vowel.count)[0]
        assertPitch(out[9600..<28800], note: 64, "held after the key is up")
        XCTAssertLessThan(Measure.peak(out[(4800 + 24000 + 2400 + 800)...]), 1e-6, "let go after holdRelease")
    }

    // MARK: Formants, unvoiced sound, latency, timing

    /// With `formant` 0 the output's formants stay within 10 % of the input's for shifts of
    /// ±7 semitones; `formant` +4 moves them (so the measure can fail).
    func testFormantsAreKeptUpToSevenSemitones() throws {
        let vowel = PitchMeasure.vowel(f0: 220, frames: 48000)
        let reference = PitchMeasure.formants(vowel[14400...])
        for note in [64, 50, 57 + 7, 57 - 7] {
            let out = render(try harness(["voices": .number(1)], ["leadLevel": -96]), vowel, notes: [note])
            let measured = PitchMeasure.formants(out.left[14400...])
            print("harmony formants note \(note): \(measured) vs \(reference)")
            XCTAssertEqual(measured.count, 3)
            for (m, r) in zip(measured, reference) {
                XCTAssertLessThanOrEqual(abs(m / r - 1), 0.10, "note \(note): \(measured) vs \(reference)")
            }
        }
        let moved = render(try harness(["voices": .number(1)], ["leadLevel": -96, "formant": 4]), vowel, notes: [64])
        let measured = PitchMeasure.formants(moved.left[14400...])
        print("harmony formants +4 semitones: \(measured)")
        XCTAssertGreaterThan(zip(measured, reference).map { abs($0 / $1 - 1) }.max() ?? 0, 0.15)
    }

    /// Energy above 4 kHz (a 4th-order high-pass), per sample.
    func highBandPower(_ x: ArraySlice<Float>) -> Double {
        let y = SpectrumMeasure.highPassed(x, sampleRate: sr)
        return y.dropFirst(480).reduce(0) { $0 + $1 * $1 } / Double(y.count - 480)
    }

    /// An unvoiced segment (noise, as an "s") between vowels keeps its energy above 4 kHz
    /// within 2 dB with the voices on (scale mode: always on).
    func testSibilantsPassWithTheirSpectrum() throws {
        let vowel = PitchMeasure.vowel(f0: 220, frames: 24000)
        let hiss = PitchMeasure.noise(frames: 14400, amplitude: 0.2)
        let input = vowel + hiss + vowel
        let h = try harness(
            ["voices": .number(4), "source": .string("scale"), "intervals": list(3, 5, -3, 8)],
            ["leadLevel": 0])
        let out = render(h, input)
        let range = (24000 + 2400)..<(24000 + 12000)
        let ratio = 10 * log10(highBandPower(out.left[range]) / highBandPower(input[range]))
        print("harmony unvoiced energy above 4 kHz: \(String(format: "%+.2f", ratio)) dB")
        XCTAssertLessThanOrEqual(abs(ratio), 2)
        // And the voices did sing on the vowels.
        XCTAssertGreaterThan(Measure.rms(out.left[12000..<24000]), 1.5 * Measure.rms(input[12000..<24000]))
    }

    func testLatencyIsReportedAndAtMostFifteenMilliseconds() throws {
        for rate in [44100.0, 48000, 96000] {
            let h = try harness([:], rate: rate)
            XCTAssertGreaterThan(h.unit.latencyFrames, 0)
            XCTAssertLessThanOrEqual(Double(h.unit.latencyFrames) / rate, 0.015, "at \(rate) Hz")
        }
        // With alignLead the lead is the input delayed by that latency.
        let vowel = PitchMeasure.vowel(f0: 220, frames: 9600)
        let h = try harness(["alignLead": .bool(true)])
        let out = h.render(input: [vowel], frames: vowel.count)[0]
        let d = h.unit.latencyFrames
        XCTAssertEqual(Array(out[d...]), Array(vowel[..<(vowel.count - d)]))
    }

    /// A note event plays at its frame, wherever it falls in a block.
    func testNoteEventsTakeEffectAtTheirFrame() throws {
        let vowel = PitchMeasure.vowel(f0: 220, frames: 24000)
        var onsets: [Int] = []
        for frame in [10_000, 10_100, 10_300] {
            let h = try harness(["voices": .number(1), "attack": .number(0)], ["leadLevel": -96])
            h.send(.noteOn(channel: 0, note: 64, velocity: 100), atFrame: Int64(frame))
            let out = h.render(input: [vowel], frames: vowel.count, blockSize: 512)[0]
            guard let onset = Measure.onset(out, threshold: 1e-4) else { return XCTFail("no voice") }
            print("harmony note at \(frame): voice from \(onset)")
            XCTAssertGreaterThanOrEqual(onset, frame)
            XCTAssertLessThanOrEqual(onset, frame + h.unit.latencyFrames + Int(sr / 220) + 8)
            onsets.append(onset)
        }
        XCTAssertLessThan(onsets[0], onsets[2])
    }

    func testSettingsErrorsAreClear() throws {
        func problem(_ s: [String: JSONValue]) -> String {
            do {
                _ = try harness(s)
                return ""
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(problem([:]), "")
        XCTAssertTrue(problem(["key": .string("H")]).hasPrefix("key:"))
        XCTAssertTrue(problem(["intervals": .array([JSONNode(.string("third"), at: SourceLocation(line: 0, column: 0))])]).hasPrefix("intervals:"))
        XCTAssertTrue(problem(["intervals": .number(3)]).hasPrefix("intervals:"))
        XCTAssertTrue(problem(["channel": .number(17)]).hasPrefix("channel:"))
        XCTAssertTrue(problem(["keys": .string("C4..")]).hasPrefix("keys:"))
        XCTAssertTrue(problem(["hold": .string("yes")]).hasPrefix("hold:"))
        XCTAssertTrue(problem(["position2": .string("over")]).hasPrefix("position2:"))
        XCTAssertEqual(
            HarmonyUnitType().parameters(UnitSettings()).map(\.id).prefix(6),
            ["leadLevel", "formant", "glide", "voiceLevel1", "pan1", "detune1"])
    }
}
