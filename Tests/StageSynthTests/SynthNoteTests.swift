import StageCore
import StageSynth
import StageTestSupport
import XCTest

/// Which notes play and how: key splits, channels, velocity, transposition that never
/// leaves a note hanging, programs.
final class SynthNoteTests: XCTestCase {
    private func level(_ x: [Float], _ from: Double, _ to: Double) -> Float {
        SpectrumMeasure.level(x, from: SynthTest.frames(from), to: SynthTest.frames(to))
    }

    func testKeySplitIgnoresNotesOutside() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["keys": .string("C2..B3")])  // 36…59
        let outside = SynthTest.renderNote(h, key: 69, hold: 0.5, after: 0.2)
        XCTAssertEqual(Measure.peak(outside), 0, "A4 is outside C2..B3")
        let above = SynthTest.renderNote(h, key: 60, hold: 0.5, after: 0.2)
        XCTAssertEqual(Measure.peak(above), 0, "C4 is just above B3")
        let inside = SynthTest.renderNote(h, key: 59, hold: 0.5, after: 0.2)
        XCTAssertGreaterThan(Measure.rms(inside), 1e-3, "B3 is inside")
        let low = SynthTest.renderNote(h, key: 36, hold: 0.5, after: 0.2)
        XCTAssertGreaterThan(Measure.rms(low), 1e-3, "C2 is the lowest key inside")
        let below = SynthTest.renderNote(h, key: 35, hold: 0.5, after: 0.2)
        XCTAssertLessThan(Measure.peak(below[SynthTest.frames(0.69)...]), 1e-4, "B1 is below")
    }

    func testChannelFilter() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["channel": .number(2)])
        h.send(.noteOn(channel: 0, note: 69, velocity: 100), atFrame: 0)
        XCTAssertEqual(Measure.peak(h.render(frames: 9600)[0]), 0, "channel 1 is not listened to")
        h.send(.noteOn(channel: 1, note: 69, velocity: 100))
        XCTAssertGreaterThan(Measure.rms(h.render(frames: 9600)[0]), 1e-3, "channel 2 plays")
    }

    func testVelocityRaisesLevelMonotonically() throws {
        try SynthTest.requireTimGM()
        var levels: [Float] = []
        for v in [8, 24, 40, 56, 72, 88, 104, 120, 127] {
            let h = try SynthTest.harness(["program": .number(0)])
            let x = SynthTest.renderNote(h, key: 60, velocity: v, hold: 0.4)
            levels.append(level(x, 0, 0.4))
        }
        for i in 1..<levels.count {
            XCTAssertGreaterThan(levels[i], levels[i - 1] + 0.1, "levels by velocity: \(levels)")
        }
        XCTAssertGreaterThan(levels.last! - levels.first!, 12, "velocity spans a real dynamic range: \(levels)")
    }

    func testSustainPedalHoldsNotesUntilReleased() throws {
        try SynthTest.requireTimGM()
        // Drawbar organ: it neither decays while held nor rings after release.
        let sustained = try SynthTest.harness(["program": .number(16)])
        sustained.send(.controlChange(channel: 0, controller: 64, value: 127), atFrame: 0)
        sustained.send(.controlChange(channel: 0, controller: 64, value: 0), atFrame: Int64(SynthTest.frames(1.5)))
        let x = SynthTest.renderNote(sustained, key: 60, hold: 0.3, after: 1.7)
        let free = try SynthTest.harness(["program": .number(16)])
        let y = SynthTest.renderNote(free, key: 60, hold: 0.3, after: 1.7)
        let held = level(x, 0.1, 0.3)
        XCTAssertGreaterThan(held, -40, "the organ sounds")
        XCTAssertEqual(level(x, 1.1, 1.4), held, accuracy: 3, "pedal down: still sounding after note-off")
        XCTAssertLessThan(level(y, 1.1, 1.4), held - 60, "no pedal: the note ends at note-off")
        XCTAssertLessThan(level(x, 1.8, 2.0), held - 60, "pedal up: the note ends")
    }

    func testSostenutoHoldsOnlyNotesDownWhenPressed() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["program": .number(16)])
        let f = { (s: Double) in Int64(SynthTest.frames(s)) }
        h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 0)
        h.send(.controlChange(channel: 0, controller: 66, value: 127), atFrame: f(0.1))
        h.send(.noteOff(channel: 0, note: 60), atFrame: f(0.2))
        h.send(.noteOn(channel: 0, note: 67, velocity: 100), atFrame: f(0.3))
        h.send(.noteOff(channel: 0, note: 67), atFrame: f(0.5))
        let x = h.render(frames: SynthTest.frames(1.0))[0]
        let c4 = 261.626
        let g4 = 391.995
        let during = x[SynthTest.frames(0.35)..<SynthTest.frames(0.5)]
        let after = x[SynthTest.frames(0.7)..<SynthTest.frames(0.9)]
        XCTAssertGreaterThan(Measure.magnitude(at: g4, in: during), 1e-3, "G4 sounds while held")
        XCTAssertLessThan(Measure.magnitude(at: g4, in: after), Measure.magnitude(at: g4, in: during) * 0.01, "G4 was not held")
        XCTAssertGreaterThan(Measure.magnitude(at: c4, in: after), 1e-3, "C4 is held by sostenuto")
    }

    func testSoftPedalMakesNotesSofter() throws {
        try SynthTest.requireTimGM()
        let plain = try SynthTest.harness(["program": .number(0)])
        let a = SynthTest.renderNote(plain, key: 60, velocity: 100, hold: 0.4)
        let soft = try SynthTest.harness(["program": .number(0)])
        soft.send(.controlChange(channel: 0, controller: 67, value: 127), atFrame: 0)
        let b = SynthTest.renderNote(soft, key: 60, velocity: 100, hold: 0.4)
        XCTAssertLessThan(level(b, 0, 0.4), level(a, 0, 0.4) - 2)
        // Released, the pedal leaves later notes alone.
        soft.send(.controlChange(channel: 0, controller: 67, value: 0))
        let c = SynthTest.renderNote(soft, key: 60, velocity: 100, hold: 0.4)
        XCTAssertEqual(level(c, 0, 0.4), level(a, 0, 0.4), accuracy: 0.5)
    }

    func testExpressionLowersLevel() throws {
        try SynthTest.requireTimGM()
        let full = try SynthTest.harness(["program": .number(16)])
        let a = SynthTest.renderNote(full, key: 60, hold: 0.4)
        let low = try SynthTest.harness(["program": .number(16)])
        low.send(.controlChange(channel: 0, controller: 11, value: 40), atFrame: 0)
        let b = SynthTest.renderNote(low, key: 60, hold: 0.4)
        XCTAssertLessThan(level(b, 0.1, 0.4), level(a, 0.1, 0.4) - 6)
    }

    func testModulationWheelAddsVibrato() throws {
        try SynthTest.requireTimGM()
        func pitchSpread(_ mod: Int) throws -> Double {
            let h = try SynthTest.harness(["program": .number(16)])
            h.send(.controlChange(channel: 0, controller: 1, value: mod), atFrame: 0)
            let x = SynthTest.renderNote(h, key: 69, hold: 1.2)
            var f: [Double] = []
            var t = 0.3
            while t < 1.15 {
                f.append(SynthTest.pitch(x, from: t, to: t + 0.05, low: 400, high: 480))
                t += 0.05
            }
            return (f.max()! - f.min()!) / 440 * 1200
        }
        let still = try pitchSpread(0)
        let vibrato = try pitchSpread(127)
        XCTAssertGreaterThan(vibrato, still + 10, "pitch swing in cents: \(still) without, \(vibrato) with modulation")
    }

    func testAllNotesOffAndAllSoundOff() throws {
        try SynthTest.requireTimGM()
        for controller in [120, 123] {
            let h = try SynthTest.harness(["program": .number(16)])
            h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 0)
            h.send(.noteOn(channel: 0, note: 64, velocity: 100), atFrame: 0)
            h.send(.controlChange(channel: 0, controller: controller, value: 0), atFrame: Int64(SynthTest.frames(0.3)))
            let x = h.render(frames: SynthTest.frames(1.0))[0]
            XCTAssertGreaterThan(level(x, 0.1, 0.3), -40)
            XCTAssertLessThan(level(x, 0.7, 1.0), level(x, 0.1, 0.3) - 60, "CC \(controller) ends the notes")
        }
    }

    /// What a switch releases (`UnitHeldNotes`): the channels with a key down or the
    /// sustain pedal down, followed through note-offs, repeated note-ons, all-notes-off,
    /// reset-controllers and the unit's channel filter.
    func testChannelsHoldingNotesFollowKeysAndTheSustainPedal() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness()
        let unit = SynthTest.synth(h)
        func after(_ messages: [MIDIMessage]) -> UInt16 {
            for m in messages { h.send(m) }
            _ = h.render(frames: 64)
            return unit.channelsHoldingNotes
        }
        XCTAssertEqual(after([]), 0)
        XCTAssertEqual(after([.noteOn(channel: 0, note: 60, velocity: 90), .noteOn(channel: 0, note: 60, velocity: 90)]), 1)
        XCTAssertEqual(after([.noteOff(channel: 0, note: 60)]), 0, "a repeated note-on is one key: one note-off ends it")
        XCTAssertEqual(after([.noteOn(channel: 4, note: 60, velocity: 90), .noteOn(channel: 4, note: 62, velocity: 90)]), 1 << 4)
        XCTAssertEqual(after([.noteOff(channel: 4, note: 60)]), 1 << 4, "one key still down")
        XCTAssertEqual(after([.controlChange(channel: 4, controller: 123, value: 0)]), 0, "all-notes-off")
        XCTAssertEqual(after([.controlChange(channel: 7, controller: 64, value: 127)]), 1 << 7, "the pedal alone holds")
        XCTAssertEqual(after([.controlChange(channel: 7, controller: 64, value: 63)]), 0, "below 64 is up, as in FluidSynth")
        XCTAssertEqual(after([.controlChange(channel: 9, controller: 64, value: 100)]), 1 << 9)
        XCTAssertEqual(after([.controlChange(channel: 9, controller: 121, value: 0)]), 0, "reset-controllers lifts the pedal")
        _ = after([.noteOn(channel: 2, note: 50, velocity: 90), .controlChange(channel: 3, controller: 64, value: 127)])
        h.reset()
        XCTAssertEqual(unit.channelsHoldingNotes, 0, "reset")
        let only3 = try SynthTest.harness(["channel": .number(3)])
        only3.send(.noteOn(channel: 0, note: 60, velocity: 90))
        only3.send(.noteOn(channel: 2, note: 60, velocity: 90))
        _ = only3.render(frames: 64)
        XCTAssertEqual(SynthTest.synth(only3).channelsHoldingNotes, 1 << 2, "a unit on channel 3 holds nothing elsewhere")
    }

    func testTransposeChangeNeverLeavesANoteHanging() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["program": .number(16), "transpose": .number(5)])
        let unit = SynthTest.synth(h)
        h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 0)
        let on = h.render(frames: SynthTest.frames(0.3))[0]
        XCTAssertGreaterThan(Measure.magnitude(at: 349.228, in: on[4800...]), 1e-3, "C4 + 5 = F4 sounds")
        unit.transpose = -7
        h.send(.noteOff(channel: 0, note: 60))
        let off = h.render(frames: SynthTest.frames(0.6))[0]
        XCTAssertLessThan(level(off, 0.4, 0.6), -100, "the note-off reached F4 although transpose changed")
        XCTAssertEqual(unit.activeVoiceCount, 0)
    }

    func testRepeatedNoteOnAfterTransposeChangeReleasesTheOldNote() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["program": .number(16)])
        let unit = SynthTest.synth(h)
        h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 0)
        _ = h.render(frames: 4800)
        unit.transpose = 12
        h.send(.noteOn(channel: 0, note: 60, velocity: 100))
        _ = h.render(frames: 4800)
        h.send(.noteOff(channel: 0, note: 60))
        let x = h.render(frames: SynthTest.frames(0.5))[0]
        XCTAssertLessThan(level(x, 0.3, 0.5), -100, "both C4 and C5 ended with the one note-off")
    }

    func testNotesTransposedOutOfRangeAreIgnored() throws {
        try SynthTest.requireTimGM()
        let h = try SynthTest.harness(["transpose": .number(48)])
        let x = SynthTest.renderNote(h, key: 100, hold: 0.3)
        XCTAssertEqual(Measure.peak(x), 0, "100 + 48 is above 127")
    }

    func testProgramsAreSpectrallyDistinct() throws {
        try SynthTest.requireTimGM()
        let c4 = 261.626
        let programs = [0, 19, 40, 56, 73]  // piano, church organ, violin, trumpet, flute
        var profiles: [[Double]] = []
        for p in programs {
            let h = try SynthTest.harness(["program": .number(Double(p))])
            let x = SynthTest.renderNote(h, key: 60, hold: 0.8)
            profiles.append(SpectrumMeasure.harmonicProfile(x[SynthTest.frames(0.3)..<SynthTest.frames(0.8)], fundamental: c4))
        }
        for i in 0..<programs.count {
            for j in (i + 1)..<programs.count {
                let d = SpectrumMeasure.profileDistance(profiles[i], profiles[j])
                XCTAssertGreaterThan(d, 6, "programs \(programs[i]) and \(programs[j]): harmonic profiles \(d) dB apart")
            }
        }
    }

    func testProgramChangeMessageSelectsTheInstrument() throws {
        try SynthTest.requireTimGM()
        let c4 = 261.626
        func profile(_ h: UnitHarness) -> [Double] {
            let x = SynthTest.renderNote(h, key: 60, hold: 0.8)
            return SpectrumMeasure.harmonicProfile(x[SynthTest.frames(0.3)..<SynthTest.frames(0.8)], fundamental: c4)
        }
        let piano = profile(try SynthTest.harness())
        let bySetting = profile(try SynthTest.harness(["program": .number(56)]))
        let viaMIDI = try SynthTest.harness()
        viaMIDI.send(.programChange(channel: 0, program: 56), atFrame: 0)
        let byMessage = profile(viaMIDI)
        XCTAssertLessThan(SpectrumMeasure.profileDistance(bySetting, byMessage), 0.5, "same instrument either way")
        XCTAssertGreaterThan(SpectrumMeasure.profileDistance(piano, byMessage), 6, "not the piano any more")
    }

    func testDrumChannelPlaysTheKitWhenListeningToChannel10() throws {
        try SynthTest.requireTimGM()
        // Key 38 on the kit is a snare (noise); on the piano it is D2 (73.4 Hz, harmonic).
        func profile(_ channel: Int) throws -> [Double] {
            let h = try SynthTest.harness(["channel": .number(Double(channel)), "program": .number(0)])
            h.send(.noteOn(channel: channel - 1, note: 38, velocity: 100), atFrame: 0)
            let x = h.render(frames: 9600)[0]
            XCTAssertGreaterThan(Measure.rms(x), 1e-3)
            return SpectrumMeasure.harmonicProfile(x[1000..<9600], fundamental: 73.416)
        }
        XCTAssertGreaterThan(SpectrumMeasure.profileDistance(try profile(10), try profile(1)), 6)
    }
}
