import StageCore
import StageSynth
import StageTestSupport
import XCTest

/// Pitch by spectral estimate: notes, pitch bend (default range and RPN 0), transposition,
/// fine tuning. TimGM6mb's piano (program 0) is tuned within half a cent at A4 (its A3
/// sample is 2.8 cents flat, so the tests play A4).
final class SynthPitchTests: XCTestCase {
    private func assertPitch(
        _ x: [Float], _ expected: Double, tolerance: Double = 2, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertGreaterThan(Measure.rms(x), 1e-3, "the note should sound", file: file, line: line)
        let f = SynthTest.pitch(x, low: expected * 0.7, high: expected * 1.4)
        let c = Measure.cents(f, from: expected)
        XCTAssertLessThanOrEqual(abs(c), tolerance, "measured \(f) Hz, \(c) cents from \(expected) Hz", file: file, line: line)
    }

    func testA4Is440Hz() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["program": .number(0)])
        let x = SynthTest.renderNote(h, key: 69)
        assertPitch(x, 440)
        // The strongest component of the whole spectrum is the fundamental too.
        XCTAssertEqual(Measure.cents(SynthTest.pitch(x, low: 30, high: 5000), from: 440), 0, accuracy: 2)
    }

    func testBundledFontA4Is440Hz() throws {
        guard let bundled = SynthTest.bundled else { throw XCTSkip("soundfonts/stagerack-basic.sf2 is not in this checkout") }
        let h = try SynthTest.harness(["soundfont": .string(bundled)])
        assertPitch(SynthTest.renderNote(h, key: 69), 440)
    }

    func testPitchBendUpTwoSemitonesIs493_88Hz() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["program": .number(0)])
        h.send(.pitchBend(channel: 0, value: 16383), atFrame: 0)
        assertPitch(SynthTest.renderNote(h, key: 69), 493.883)
    }

    func testPitchBendDownTwoSemitones() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["program": .number(0)])
        h.send(.pitchBend(channel: 0, value: 0), atFrame: 0)
        assertPitch(SynthTest.renderNote(h, key: 69), 391.995)
    }

    func testRPN0SetsTheBendRange() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["program": .number(0)])
        // RPN 0 (pitch bend sensitivity) = 12 semitones, then RPN null, then full bend up.
        for (cc, v) in [(101, 0), (100, 0), (6, 12), (38, 0), (101, 127), (100, 127)] {
            h.send(.controlChange(channel: 0, controller: cc, value: v), atFrame: 0)
        }
        // Half way up (12288 = 8192 + 4096): half of 12 semitones, a tritone: 622.25 Hz.
        // (Whole cents: FluidSynth truncates pitch to whole cents, so a full bend's
        // 1199.85 cents would measure up to a cent lower.)
        h.send(.pitchBend(channel: 0, value: 12288), atFrame: 0)
        assertPitch(SynthTest.renderNote(h, key: 69), 440 * 2.0.squareRoot())
    }

    func testTransposeTwelveIs880Hz() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["program": .number(0), "transpose": .number(12)])
        assertPitch(SynthTest.renderNote(h, key: 69), 880)
    }

    func testLiveTransposeAppliesToNewNotes() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["program": .number(0)])
        SynthTest.synth(h).transpose = -12
        assertPitch(SynthTest.renderNote(h, key: 81), 440)
    }

    /// A transposed synth that plays every channel leaves channel 10 (a General MIDI file's
    /// drums) alone: the kit's cowbell (key 56) is the same sound at +5 as at 0. A synth that
    /// listens to channel 10 alone is moved (the rack asked): key 61 is another instrument.
    func testTransposeLeavesTheDrumChannelOfAnAllChannelSynth() throws {
        try SynthTest.requireTimGM()
        let plain = Self.drumNote(try SynthTest.harness())
        let omni = try SynthTest.harness(["transpose": .number(5)])
        let moved = Self.drumNote(omni)
        let level = Measure.rms(plain)
        XCTAssertGreaterThan(Measure.decibels(level), -70, "the cowbell sounds (not silence)")
        let kept = Measure.decibels(Self.difference(plain, moved) / level)
        XCTAssertLessThan(kept, -80, "channel 10 moved by the transpose of an all-channel synth (difference \(kept) dB)")

        let drumsOnly = Self.drumNote(try SynthTest.harness(["channel": .number(10)]))
        let drumsMoved = Self.drumNote(try SynthTest.harness(["channel": .number(10), "transpose": .number(5)]))
        let changed = Measure.decibels(Self.difference(drumsOnly, drumsMoved) / Measure.rms(drumsOnly))
        XCTAssertGreaterThan(changed, -10, "a synth on channel 10 alone takes its transpose (difference \(changed) dB)")
        XCTAssertTrue(SynthTest.synth(try SynthTest.harness(["channel": .number(10)])).transposesDrums)
        XCTAssertFalse(SynthTest.synth(omni).transposesDrums)
    }

    /// Key 56 on channel 10 held for half a second; the left channel.
    static func drumNote(_ h: UnitHarness) -> [Float] {
        h.send(.noteOn(channel: 9, note: 56, velocity: 100), atFrame: 0)
        h.send(.noteOff(channel: 9, note: 56), atFrame: Int64(SynthTest.frames(0.5)))
        return h.render(frames: SynthTest.frames(0.6))[0]
    }

    /// The RMS of `a − b`.
    static func difference(_ a: [Float], _ b: [Float]) -> Float {
        let d: [Float] = zip(a, b).map { (x: Float, y: Float) -> Float in x - y }
        return Measure.rms(d)
    }

    func testTuneParameterInCents() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["program": .number(0)], parameters: ["tune": 50])
        assertPitch(SynthTest.renderNote(h, key: 69), 440 * pow(2, 50.0 / 1200))
    }

    func testOtherChannelsKeepTheirOwnPitch() throws {
        try SynthTest.requireTimGM()
        // Bend on channel 2 must not bend a note on channel 1.
        let h = try SynthTest.harness(["program": .number(0)])
        h.send(.pitchBend(channel: 1, value: 16383), atFrame: 0)
        assertPitch(SynthTest.renderNote(h, key: 69), 440)
    }
}
