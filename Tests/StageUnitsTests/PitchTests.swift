import CAllocCounter
import StageCore
import StageTestSupport
import StageUnits
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The `pitch` unit, by measurement: output frequency, formants, latency, clicks, block-size
/// invariance, reset, allocation.
final class PitchTests: XCTestCase {
    let sr = 48000.0
    let shifts: [Float] = [100, -100, 700, -700, 1200, -1200]

    func harness(
        mode: String, pitch: Float, mix: Float = 100, maxFrames: Int = 512, channels: Int = 1
    ) throws -> UnitHarness {
        try UnitHarness(
            type: PitchUnitType(),
            parameters: ["pitch": pitch, "wetDryMix": mix, "mode": mode == "voice" ? 0 : 1],
            sampleRate: sr, maxFrames: maxFrames, inputChannels: [channels])
    }

    func render(_ input: [Float], mode: String, pitch: Float, blockSize: Int = 256) throws -> (out: [Float], latency: Int) {
        let h = try harness(mode: mode, pitch: pitch)
        let out = h.render(input: [input], frames: input.count, blockSize: blockSize)[0]
        return (out, h.unit.latencyFrames)
    }

    func ratio(_ cents: Float) -> Double { pow(2, Double(cents) / 1200) }

    // MARK: Parameters and latency

    func testParametersFollowNewTimePitch() {
        let specs = PitchUnitType().parameters(UnitSettings())
        XCTAssertEqual(specs.map(\.id), ["pitch", "wetDryMix", "mode"])
        XCTAssertEqual(specs[0].range, -2400...2400)
        XCTAssertEqual(specs[0].unit, .cents)
        XCTAssertEqual(specs[0].defaultValue, 0)
        XCTAssertEqual(specs[1].range, 0...100)
        XCTAssertEqual(specs[1].defaultValue, 100)
        XCTAssertEqual(specs[2].choices, ["voice", "any"])
        XCTAssertEqual(specs[2].defaultValue, 0)
        XCTAssertNotNil(UnitRegistry(StandardUnits.types).type(named: "pitch"))
    }

    func testLatencyIsReportedAndWithinTargets() throws {
        for rate in [44100.0, 48000, 96000] {
            let h = try UnitHarness(type: PitchUnitType(), sampleRate: rate, maxFrames: 64)
            let latency = h.unit.latencyFrames
            XCTAssertGreaterThan(latency, 0)
            // ≤ 15 ms serves both targets (voice ≤ 15 ms, any ≤ 25 ms).
            XCTAssertLessThanOrEqual(Double(latency) / rate, 0.015, "at \(rate) Hz")
        }
    }

    /// At 0 cents both modes are a pure delay of exactly the reported latency: the parked
    /// granular path, and complementary PSOLA grains on voiced input.
    func testZeroShiftIsExactlyTheReportedDelay() throws {
        let vowel = PitchMeasure.vowel(f0: 150, frames: 24000)
        let noise = PitchMeasure.noise(frames: 12000, amplitude: 0.2)
        let input = vowel + noise + vowel
        for mode in ["voice", "any"] {
            let (out, latency) = try render(input, mode: mode, pitch: 0)
            var worst: Float = 0
            for i in latency..<input.count { worst = max(worst, abs(out[i] - input[i - latency])) }
            XCTAssertLessThan(worst, 1e-4, "\(mode): output differs from input delayed by \(latency)")
            XCTAssertEqual(PitchMeasure.delay(of: out, relativeTo: input, maxLag: 1000), latency, mode)
        }
    }

    /// With a shift, the mean delay (envelope cross-correlation over a train of syllables)
    /// matches the reported latency. Grains read at delays that vary around it: PSOLA by
    /// up to half a period, the granular taps across their grain.
    func testShiftedSyllablesArriveAfterTheReportedLatency() throws {
        let input = PitchMeasure.syllables(frames: 240000)
        for mode in ["voice", "any"] {
            for cents: Float in [700, -700, 300, -300] {
                let (out, latency) = try render(input, mode: mode, pitch: cents)
                let measured = PitchMeasure.envelopeDelay(of: out, relativeTo: input, maxLag: 2400)
                print("pitch latency \(mode) \(cents): measured \(measured), reported \(latency)")
                XCTAssertLessThanOrEqual(abs(measured - Double(latency)), 96, "\(mode) \(cents)")
            }
        }
    }

    // MARK: Frequency

    func assertFrequency(
        _ input: [Float], f0: Double, mode: String, cents: Float, skip: Int = 14400, tolerance: Double = 5,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let (out, _) = try render(input, mode: mode, pitch: cents)
        let measured = PitchMeasure.fundamental(out[skip...], sampleRate: sr, low: 50, high: 2000)
        let error = Measure.cents(measured, from: f0 * ratio(cents))
        print("pitch frequency \(mode) \(cents): \(measured) Hz, error \(error) cents")
        XCTAssertLessThanOrEqual(abs(error), tolerance, "\(mode) \(cents) cents", file: file, line: line)
    }

    func testSineComesOutAtTheShiftedFrequencyInAnyMode() throws {
        let sine = Measure.sine(frequency: 330, sampleRate: sr, frames: 48000)
        for cents in shifts { try assertFrequency(sine, f0: 330, mode: "any", cents: cents) }
    }

    func testVowelComesOutAtTheShiftedFrequency() throws {
        let vowel = PitchMeasure.vowel(f0: 150, frames: 48000)
        for mode in ["voice", "any"] {
            for cents in shifts { try assertFrequency(vowel, f0: 150, mode: mode, cents: cents) }
        }
    }

    /// `any` mode on a chord (an A minor triad in just intonation, whose common period is
    /// far longer than a grain, so no jump can match the phase of every note): each note's
    /// energy moves to its shifted frequency. Granular shifting spreads each note into
    /// sidebands at the jump rate (tens of Hz), so the measure is the power-weighted mean
    /// frequency within ±1 semitone of the target (measured: within ±21 cents; a single
    /// sideband can be off by 50), and what remains at the original pitch.
    func testAnyModeShiftsEachNoteOfAChord() throws {
        let notes = [220.0, 264.0, 330.0]
        var chord = [Float](repeating: 0, count: 72000)
        for f in notes {
            let s = Measure.sine(frequency: f, sampleRate: sr, frames: chord.count, amplitude: 0.25)
            for i in chord.indices { chord[i] += s[i] }
        }
        for cents: Float in [700, -500, 1200, -1200] {
            let (out, _) = try render(chord, mode: "any", pitch: cents)
            let steady = out[14400...]
            for f in notes {
                let target = f * ratio(cents)
                let (centroid, power) = PitchMeasure.bandCentroid(
                    steady, from: target * pow(2, -100.0 / 1200), to: target * pow(2, 100.0 / 1200), sampleRate: sr)
                let left = Measure.magnitude(at: f, in: steady, sampleRate: sr)
                let error = Measure.cents(centroid, from: target)
                print("pitch chord \(cents): \(f) → centroid \(centroid) Hz (\(error) cents), band rms \(power.squareRoot()), left at \(f): \(left)")
                XCTAssertLessThanOrEqual(abs(error), 30, "\(cents): note \(f)")
                XCTAssertGreaterThan(power.squareRoot(), 0.1, "\(cents): note \(f)")
                // (Unless a shifted note lands there: +700 cents takes 220 Hz to 330 Hz.)
                if !notes.contains(where: { abs(Measure.cents($0 * ratio(cents), from: f)) < 100 }) {
                    XCTAssertLessThan(left, 0.02, "\(cents): note \(f) still sounds unshifted")
                }
            }
        }
    }

    /// Every time constant scales with the sample rate.
    func testOtherSampleRates() throws {
        for rate in [44100.0, 96000] {
            let vowel = PitchMeasure.vowel(f0: 150, sampleRate: rate, frames: Int(rate))
            for mode in ["voice", "any"] {
                for cents: Float in [700, -500] {
                    let h = try UnitHarness(
                        type: PitchUnitType(), parameters: ["pitch": cents, "mode": mode == "voice" ? 0 : 1],
                        sampleRate: rate, maxFrames: 256)
                    let out = h.render(input: [vowel], frames: vowel.count)[0]
                    let f = PitchMeasure.fundamental(out[Int(rate * 0.3)...], sampleRate: rate)
                    let error = Measure.cents(f, from: 150 * ratio(cents))
                    XCTAssertLessThanOrEqual(abs(error), 5, "\(rate) Hz \(mode) \(cents)")
                }
            }
            let h = try UnitHarness(type: PitchUnitType(), parameters: ["pitch": 0], sampleRate: rate, maxFrames: 256)
            let out = h.render(input: [vowel], frames: vowel.count)[0]
            let latency = h.unit.latencyFrames
            let worst = (latency..<vowel.count).map { abs(out[$0] - vowel[$0 - latency]) }.max() ?? 1
            XCTAssertLessThan(worst, 1e-4, "\(rate) Hz: 0 cents is a pure delay")
        }
    }

    /// A sung vowel with vibrato (±50 cents at 5.5 Hz): the output's pitch contour follows
    /// the input's, times the ratio, frame by frame (25 ms frames every 20 ms).
    func testVibratoIsFollowed() throws {
        let vowel = PitchMeasure.vowel(f0: 180, frames: 96000, vibratoCents: 50)
        let inputTrack = PitchMeasure.pitchTrack(vowel, frame: 1200, hop: 960, low: 100)
        for cents: Float in [700, -500] {
            let (out, latency) = try render(vowel, mode: "voice", pitch: cents)
            let outputTrack = PitchMeasure.pitchTrack(Array(out[latency...]), frame: 1200, hop: 960, low: 100)
            var errors: [Double] = []
            for (i, o) in outputTrack.enumerated() where i >= 15 {
                guard let o, i < inputTrack.count, let f = inputTrack[i] else { continue }
                errors.append(abs(Measure.cents(o, from: f * ratio(cents))))
            }
            errors.sort()
            let median = errors[errors.count / 2]
            let p90 = errors[errors.count * 9 / 10]
            print("pitch vibrato \(cents): \(errors.count) frames, median error \(median), 90th percentile \(p90) cents")
            XCTAssertGreaterThan(errors.count, 60)
            XCTAssertLessThan(median, 5, "\(cents)")
            XCTAssertLessThan(p90, 15, "\(cents)")
        }
    }

    /// A bass voice (85 Hz: periods longer than fit two-period grains in the latency, so
    /// the grain edges shorten) keeps its frequency and formants.
    func testLowVoice() throws {
        let vowel = PitchMeasure.vowel(f0: 85, frames: 72000)
        let reference = PitchMeasure.formants(vowel[14400...])
        for cents: Float in [700, -700, 300, -300] {
            try assertFrequency(vowel, f0: 85, mode: "voice", cents: cents)
            if abs(cents) <= 500 {
                let (out, _) = try render(vowel, mode: "voice", pitch: cents)
                let measured = PitchMeasure.formants(out[14400...])
                print("pitch formants low voice \(cents): \(measured) vs \(reference)")
                for (m, r) in zip(measured, reference) {
                    XCTAssertLessThanOrEqual(abs(m / r - 1), 0.10, "\(cents): \(measured) vs \(reference)")
                }
            }
        }
    }

    /// Two octaves either way (the parameter's limits).
    func testTwoOctaveShiftsKeepTheirFrequency() throws {
        for mode in ["voice", "any"] {
            try assertFrequency(PitchMeasure.vowel(f0: 400, frames: 48000), f0: 400, mode: mode, cents: -2400)
            try assertFrequency(PitchMeasure.vowel(f0: 150, frames: 48000), f0: 150, mode: mode, cents: 2400)
        }
    }

    /// The estimator itself: exact on the unshifted signals (the test can tell).
    func testFrequencyEstimatorIsPrecise() {
        let sine = Measure.sine(frequency: 330, sampleRate: sr, frames: 24000)
        XCTAssertLessThan(abs(Measure.cents(PitchMeasure.fundamental(sine[...]), from: 330)), 0.1)
        let vowel = PitchMeasure.vowel(f0: 150, frames: 24000)
        XCTAssertLessThan(abs(Measure.cents(PitchMeasure.fundamental(vowel[...]), from: 150)), 0.1)
        let off = Measure.sine(frequency: 330 * pow(2, 6.0 / 1200), sampleRate: sr, frames: 24000)
        XCTAssertGreaterThan(abs(Measure.cents(PitchMeasure.fundamental(off[...]), from: 330)), 5)
    }

    // MARK: Consonants

    /// An "s" between two vowels: white noise band-passed to 4.5–11 kHz, at a level like
    /// the vowels'. Voice mode passes unvoiced sound with its spectrum intact (shifted
    /// granularly an octave down, it lost 13.6 dB above 4 kHz and the voice lisped): the
    /// energy above 4 kHz in the middle of the "s" stays within 2 dB of the input's, for
    /// shifts up and down, and the vowels are still shifted.
    func testSibilantsKeepTheirSpectrumInVoiceMode() throws {
        let vowelFrames = 24000
        let sFrames = 14400
        let hiss = ReverbMeasure.bandpass(PitchMeasure.noise(frames: sFrames, amplitude: 0.9), low: 4500, high: 11000)
            .map { Float($0) }
        let input = PitchMeasure.vowel(f0: 140, frames: vowelFrames) + hiss + PitchMeasure.vowel(f0: 140, frames: vowelFrames)
        func highEnergy(_ x: ArraySlice<Float>) -> Double {
            ReverbMeasure.bandpass(Array(x), low: 4000, high: 20000).dropFirst(960).reduce(0) { $0 + $1 * $1 }
        }
        // The middle of the "s": 40 ms in from each edge (latency, voicing decisions, ramps).
        let start = vowelFrames + 1920
        let end = vowelFrames + sFrames - 1920
        let reference = highEnergy(input[(start - 960)..<end])
        for cents: Float in [-1200, -700, 700, 1200] {
            let (out, latency) = try render(input, mode: "voice", pitch: cents)
            let measured = highEnergy(out[(start - 960 + latency)..<(end + latency)])
            let difference = 10 * log10(measured / reference)
            print("pitch sibilant voice \(cents): energy above 4 kHz \(difference) dB")
            XCTAssertEqual(difference, 0, accuracy: 2, "voice \(cents)")
            let vowelPitch = PitchMeasure.fundamental(out[(vowelFrames / 2)..<(vowelFrames - 2000)])
            XCTAssertEqual(Measure.cents(vowelPitch, from: 140), Double(cents), accuracy: 15, "voice \(cents): vowel")
        }
    }

    // MARK: Formants

    func testVoiceModeKeepsFormants() throws {
        let vowel = PitchMeasure.vowel(f0: 150, frames: 48000)
        let reference = PitchMeasure.formants(vowel[14400...])
        print("pitch formants in: \(reference)")
        XCTAssertEqual(reference.count, 3)
        for (r, f) in zip(reference, PitchMeasure.vowelFormants) { XCTAssertEqual(r, f.frequency, accuracy: f.frequency * 0.05) }
        for cents: Float in [-500, -300, 300, 500] {
            let (out, _) = try render(vowel, mode: "voice", pitch: cents)
            let measured = PitchMeasure.formants(out[14400...])
            print("pitch formants voice \(cents): \(measured)")
            XCTAssertEqual(measured.count, 3)
            for (m, r) in zip(measured, reference) {
                XCTAssertLessThanOrEqual(abs(m / r - 1), 0.10, "voice \(cents): \(measured) vs \(reference)")
            }
        }
    }

    /// The same measurement sees the formants move in `any` mode (so it can fail).
    func testAnyModeMovesFormants() throws {
        let vowel = PitchMeasure.vowel(f0: 150, frames: 48000)
        let reference = PitchMeasure.formants(vowel[14400...])
        let (out, _) = try render(vowel, mode: "any", pitch: 500)
        let measured = PitchMeasure.formants(out[14400...])
        print("pitch formants any 500: \(measured)")
        let moved = zip(measured, reference).map { abs($0 / $1 - 1) }.max() ?? 0
        XCTAssertGreaterThan(moved, 0.15)
    }

    // MARK: Clicks and sweeps

    /// The largest step a sine of `frequency` and amplitude `peak` takes between samples.
    func sineStep(_ frequency: Double, _ peak: Float) -> Float {
        Float(2 * sin(Double.pi * frequency / sr)) * peak
    }

    func testNoClicksOnASteadySine() throws {
        let f = 330.0
        let sine = Measure.sine(frequency: f, sampleRate: sr, frames: 48000)
        for mode in ["any", "voice"] {
            for cents in shifts {
                let (out, latency) = try render(sine, mode: mode, pitch: cents)
                let steady = out[(latency + 4800)...]
                let peak = Measure.peak(steady)
                let fOut = f * ratio(cents)
                // PSOLA output of a pure tone holds energy at both frequencies.
                let fMax = mode == "any" ? fOut : max(f, fOut) * 1.5
                let jump = Measure.maxJump(steady)
                print("pitch clicks \(mode) \(cents): jump \(jump) vs sine \(sineStep(fMax, peak)) peak \(peak)")
                XCTAssertLessThanOrEqual(jump, sineStep(fMax, peak) * 1.1, "\(mode) \(cents)")
                // PSOLA keeps the spectral envelope, and a pure tone's envelope is the tone:
                // an octave up lands on its window's spectral zero and (nearly) vanishes.
                // Voice mode is for voices; `any` mode is for whistles and instruments.
                if mode == "any" || abs(cents) < 1200 {
                    XCTAssertGreaterThan(peak, 0.1, "\(mode) \(cents): output vanished")
                }
            }
        }
    }

    /// The largest second difference |x[n+1] − 2x[n] + x[n−1]|: a step (click) shows here
    /// at its full size, while smooth signals stay small.
    func maxCurvature(_ x: ArraySlice<Float>) -> Float {
        var m: Float = 0
        var i = x.startIndex + 1
        while i < x.endIndex - 1 {
            m = max(m, abs(x[i + 1] - 2 * x[i] + x[i - 1]))
            i += 1
        }
        return m
    }

    /// PSOLA on vowels, low to high voices: no grain starts or ends with a step. Pulses
    /// keep their shape, so the output's curvature stays at the input's.
    func testNoClicksOnVowelsInVoiceMode() throws {
        for f0 in [85.0, 150, 300] {
            let vowel = PitchMeasure.vowel(f0: f0, frames: 48000)
            let reference = maxCurvature(vowel[...])
            for cents in shifts + [300, -300] {
                let (out, latency) = try render(vowel, mode: "voice", pitch: cents)
                let curvature = maxCurvature(out[(latency + 4800)...])
                print("pitch vowel clicks \(f0) \(cents): \(curvature) vs input \(reference)")
                XCTAssertLessThanOrEqual(curvature, reference * 1.5, "\(f0) Hz, \(cents) cents")
            }
        }
    }

    func testPitchSweepsAreSmooth() throws {
        let f = 220.0
        let sine = Measure.sine(frequency: f, sampleRate: sr, frames: 96000)
        for mode in ["any", "voice"] {
            let h = try harness(mode: mode, pitch: -1200)
            // Full-range glides: −1200 → +1200 → −2400 → +2400, each over the engine's ramp.
            h.set("pitch", 1200, atFrame: 12000)
            h.set("pitch", -2400, atFrame: 36000)
            h.set("pitch", 2400, atFrame: 60000)
            let out = h.render(input: [sine], frames: sine.count, blockSize: 64)[0]
            XCTAssertTrue(out.allSatisfy(\.isFinite))
            let steady = out[2000...]
            let jump = Measure.maxJump(steady)
            let bound = sineStep(f * 4 * 1.5, Measure.peak(steady))
            print("pitch sweep \(mode): jump \(jump) bound \(bound)")
            XCTAssertLessThanOrEqual(jump, bound, mode)
        }
    }

    func testModeSwitchIsClickFree() throws {
        let f = 330.0
        let sine = Measure.sine(frequency: f, sampleRate: sr, frames: 72000)
        let h = try harness(mode: "voice", pitch: 300)
        h.set("mode", 1, atFrame: 24000)
        h.set("mode", 0, atFrame: 48000)
        let out = h.render(input: [sine], frames: sine.count, blockSize: 128)[0]
        let around = out[20000..<60000]
        let jump = Measure.maxJump(around)
        let bound = sineStep(f * ratio(300) * 1.5, Measure.peak(around))
        print("pitch mode switch: jump \(jump) bound \(bound)")
        XCTAssertLessThanOrEqual(jump, bound)

        // On a voice, switching hands over between PSOLA grains and granular taps.
        let vowel = PitchMeasure.vowel(f0: 150, frames: 72000)
        for cents: Float in [300, -700] {
            let v = try harness(mode: "voice", pitch: cents)
            for k in 1...8 { v.set("mode", Float(k % 2), atFrame: Int64(k * 7000 + 333 * k)) }
            let out = v.render(input: [vowel], frames: vowel.count, blockSize: 128)[0]
            let curvature = maxCurvature(out[4800...])
            print("pitch mode switch vowel \(cents): \(curvature) vs input \(maxCurvature(vowel[...]))")
            // Granular output is the waveform sped up: its curvature scales with ratio².
            let allowed = maxCurvature(vowel[...]) * Float(max(1, ratio(cents) * ratio(cents))) * 1.2
            XCTAssertLessThanOrEqual(curvature, allowed, "\(cents)")
        }
    }

    // MARK: Contract

    /// Vowel, silence, noise and a shift that moves while the mode flips: the same output
    /// for any block size.
    func testBlockSizeInvariance() throws {
        let input = PitchMeasure.vowel(f0: 190, frames: 9000) + [Float](repeating: 0, count: 3000)
            + PitchMeasure.noise(frames: 6000, amplitude: 0.3) + PitchMeasure.vowel(f0: 120, frames: 9000)
        var reference: [Float]? = nil
        for block in [1, 17, 64, 512] {
            let h = try harness(mode: "voice", pitch: 500)
            h.set("pitch", -700, atFrame: 7000)
            h.set("mode", 1, atFrame: 15000)
            h.set("mode", 0, atFrame: 20000)
            h.set("wetDryMix", 60, atFrame: 21000)
            let out = h.render(input: [input], frames: input.count, blockSize: block)[0]
            if let r = reference {
                let worst = zip(out, r).map { abs($0 - $1) }.max() ?? 0
                XCTAssertLessThanOrEqual(worst, 1e-6, "block \(block)")
            } else {
                reference = out
            }
        }
    }

    func testResetReproducesOutput() throws {
        let input = PitchMeasure.vowel(f0: 170, frames: 12000) + PitchMeasure.noise(frames: 4000)
        for mode in ["voice", "any"] {
            let h = try harness(mode: mode, pitch: 400)
            let first = h.render(input: [input], frames: input.count, blockSize: 100)[0]
            h.reset()
            let second = h.render(input: [input], frames: input.count, blockSize: 100)[0]
            XCTAssertEqual(first, second, mode)
        }
    }

    func testSilenceGivesExactSilence() throws {
        for mode in ["voice", "any"] {
            let h = try harness(mode: mode, pitch: 700)
            let loud = PitchMeasure.vowel(f0: 200, frames: 9600)
            _ = h.render(input: [loud], frames: loud.count)
            let out = h.render(input: [], frames: 9600)[0]
            // After the latency and the longest grain, the output is exactly zero.
            XCTAssertTrue(out[4800...].allSatisfy { $0 == 0 }, mode)
        }
    }

    func testExtremeParametersStayFiniteAndBounded() throws {
        let input = PitchMeasure.noise(frames: 24000, amplitude: 1) + PitchMeasure.vowel(f0: 400, frames: 24000, amplitude: 1)
        for mode in ["voice", "any"] {
            for cents: Float in [-2400, 2400] {
                let (out, _) = try render(input, mode: mode, pitch: cents, blockSize: 33)
                XCTAssertTrue(out.allSatisfy(\.isFinite))
                print("pitch extreme \(mode) \(cents): noise peak \(Measure.peak(out[..<24000])) vowel peak \(Measure.peak(out[24000...]))")
                XCTAssertLessThanOrEqual(Measure.peak(out), 4, "\(mode) \(cents)")
            }
            // Full-speed parameter jumps every 50 frames.
            let h = try harness(mode: mode, pitch: 0, maxFrames: 64)
            for k in 0..<400 {
                h.set("pitch", k % 2 == 0 ? 2400 : -2400, atFrame: Int64(k * 50))
                h.set("mode", Float(k % 3 == 0 ? 1 : 0), atFrame: Int64(k * 50 + 25))
            }
            let out = h.render(input: [input], frames: 20000, blockSize: 64)[0]
            XCTAssertTrue(out.allSatisfy(\.isFinite))
            XCTAssertLessThanOrEqual(Measure.peak(out), 4, mode)
        }
    }

    func testWetDryMixZeroPassesTheDelayedInput() throws {
        let input = PitchMeasure.vowel(f0: 150, frames: 12000)
        let h = try harness(mode: "voice", pitch: 700, mix: 0)
        let out = h.render(input: [input], frames: input.count)[0]
        let latency = h.unit.latencyFrames
        for i in latency..<input.count { XCTAssertEqual(out[i], input[i - latency]) }
    }

    func testChannelsAreShiftedIndependently() throws {
        let left = PitchMeasure.vowel(f0: 150, frames: 48000)
        let right = Measure.sine(frequency: 440, sampleRate: sr, frames: 48000)
        let h = try harness(mode: "voice", pitch: 700, channels: 2)
        let out = h.render(input: [left, right], frames: 48000)
        XCTAssertEqual(out.count, 2)
        let mono = try render(left, mode: "voice", pitch: 700).out
        XCTAssertEqual(out[0], mono)
        let f = PitchMeasure.fundamental(out[1][14400...])
        XCTAssertLessThan(abs(Measure.cents(f, from: 440 * ratio(700))), 5)
    }

    func testRenderDoesNotAllocate() throws {
        XCTAssertNotEqual(alloc_counter_available(), 0)
        for mode in ["voice", "any"] {
            let h = try harness(mode: mode, pitch: 700, maxFrames: 256)
            let vowel = PitchMeasure.vowel(f0: 150, frames: 256 * 40)
            func feed(_ block: Int) {
                let dst = h.inputs[0][0]
                for i in 0..<256 { dst[i] = vowel[block * 256 + i] }
            }
            feed(0)
            h.renderBlock(frames: 256)
            alloc_counter_start()
            for b in 1..<40 {
                feed(b)
                h.renderBlock(frames: 256)
            }
            XCTAssertEqual(alloc_counter_stop(), 0, mode)
        }
    }
}
