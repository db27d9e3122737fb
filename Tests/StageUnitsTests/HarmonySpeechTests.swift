import Foundation
import StageCore
import StageTestSupport
import StageUnits
import XCTest

/// The harmony and tune units on real speech: espeak-ng's voice (the benchmark's text),
/// resampled to 48 kHz by sox (both in scripts/install-deps.sh --test). Speech is harder
/// than the synthetic vowels of `HarmonyTests`: its pitch glides over an octave, voicing
/// starts and stops every syllable, and its consonants are real fricatives.
final class HarmonySpeechTests: XCTestCase {
    let sr = 48000.0
    static let text = "The singer steps up to the microphone and the band starts to play. "
        + "Every note goes through the rack: pitch, delay and reverb, then the mixer and the speakers."

    /// espeak-ng's speech at 48 kHz, peak −1 dBFS (once per run).
    static let speech: [Float]? = {
        let folder = NSTemporaryDirectory() + "stagerack-speech-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func run(_ tool: String, _ args: [String]) -> Bool {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: tool)
            p.arguments = args
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            guard (try? p.run()) != nil else { return false }
            p.waitUntilExit()
            return p.terminationStatus == 0
        }
        guard run("/usr/bin/espeak-ng", ["-s", "150", "-w", folder + "/speech.wav", text]),
            run("/usr/bin/sox", [folder + "/speech.wav", "-r", "48000", "-c", "1", "-e", "floating-point", "-b", "32", "-t", "raw",
                                 folder + "/speech.f32", "norm", "-1"]),
            let data = FileManager.default.contents(atPath: folder + "/speech.f32")
        else { return nil }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }()

    func speech() throws -> [Float] {
        try XCTUnwrap(Self.speech, "espeak-ng or sox failed (scripts/install-deps.sh --test installs them)")
    }

    /// Notes mode, lead off, D3 or A3 held (the speech sits around 104 Hz and moves over
    /// five semitones): on the 20 ms frames where the speech is voiced, the voice sings
    /// (on at least 70 % of them: it starts a few periods into each voiced stretch, once
    /// the pitch marks are found, and the unit's detector is stricter than the measuring
    /// one at the ends) and where it sings it is at the held note whatever the speech does.
    ///
    /// Tolerance: the median frame within ±5 cents (the issue's bound for the vowel), and
    /// 90 % of frames within ±10 cents (measured: 5.1). Frame by frame, speech is not a held vowel: a grain
    /// is two periods of the input, and where the voice's formants and level move within a
    /// grain (every syllable) the 20 ms frame's period estimate moves by a few cents; the
    /// 10 % allowed off are the frames at voicing onsets and ends, where a frame holds one
    /// or two grains and the measuring YIN has little to go on. A quarter semitone is still
    /// far inside what the ear hears as the note, while the speech itself spans more than
    /// an octave (printed), so the test fails if the voice followed the speech.
    func testNotesModeOnSpeechHoldsTheNote() throws {
        let input = try speech()
        let sung = VoicedPitchTrack.track(input, sampleRate: sr)
        let voiced = sung.compactMap { $0 }.sorted()
        let span = 1200 * log2(voiced[voiced.count * 95 / 100] / voiced[voiced.count * 5 / 100])
        print("speech: \(voiced.count) of \(sung.count) frames voiced, median \(String(format: "%.1f", voiced[voiced.count / 2])) Hz, 5–95 % span \(Int(span)) cents")
        XCTAssertGreaterThan(span, 300, "the speech moves (else the test proves nothing)")
        for note in [50, 57] {
            let h = try UnitHarness(
                type: HarmonyUnitType(), settings: ["voices": .number(1)], parameters: ["leadLevel": -96, "pan1": 0],
                sampleRate: sr, maxFrames: 256)
            h.send(.noteOn(channel: 0, note: note, velocity: 100), atFrame: 0)
            let out = h.render(input: [input], frames: input.count, blockSize: 256)[0]
            let voice = VoicedPitchTrack.track(Array(out[h.unit.latencyFrames...]), sampleRate: sr, gateDecibels: 60)
            let target = 440 * pow(2, Double(note - 69) / 12)
            var errors: [Double] = []
            var silent = 0
            for (s, v) in zip(sung, voice) where s != nil {
                if let v { errors.append(Measure.cents(v, from: target)) } else { silent += 1 }
            }
            let sorted = errors.map(abs).sorted()
            func percentile(_ p: Int) -> String { String(format: "%.1f", sorted[sorted.count * p / 100]) }
            let within = Double(sorted.filter { $0 <= 10 }.count) / Double(sorted.count)
            let sings = Double(errors.count) / Double(errors.count + silent)
            print(
                "harmony on speech, note \(note): the voice sings on \(String(format: "%.1f", 100 * sings)) % of the voiced frames; "
                    + "its error there: median \(percentile(50)), 90 % \(percentile(90)), 99 % \(percentile(99)) cents, "
                    + "\(String(format: "%.1f", 100 * within)) % within 10 cents")
            XCTAssertGreaterThanOrEqual(sings, 0.7, "note \(note): the voice sings on the speech's voiced frames")
            XCTAssertLessThanOrEqual(sorted[sorted.count / 2], 5, "note \(note)")
            XCTAssertGreaterThanOrEqual(within, 0.9, "note \(note)")
        }
    }

    /// Unvoiced speech (the fricatives and breath: frames with no pitch and energy above
    /// 4 kHz, away from voiced frames by 30 ms) keeps its energy above 4 kHz within 2 dB
    /// through the harmony with four voices on (scale mode: they sing on every vowel) and
    /// through tune (aligned by its 4.5 ms latency).
    func testUnvoicedSpeechKeepsItsEnergyAbove4kHz() throws {
        let input = try speech()
        let harmony = try UnitHarness(
            type: HarmonyUnitType(), settings: ["voices": .number(4), "source": .string("scale"), "intervals": list(3, 5, -3, 8)],
            sampleRate: sr, maxFrames: 256)
        let harmonyOut = harmony.render(input: [input], frames: input.count, blockSize: 256)[0]
        let tune = try UnitHarness(type: TuneUnitType(), parameters: ["speed": 0], sampleRate: sr, maxFrames: 256)
        let tuneOut = tune.render(input: [input], frames: input.count, blockSize: 256)[0]
        let frame = 960
        let pitch = VoicedPitchTrack.track(input, sampleRate: sr, frame: frame, hop: frame, gateDecibels: 200)
        let high = highPassed(input)
        // Unvoiced frames with at least 1 % of the loudest frame's high-band energy, whose
        // neighbours within 30 ms (the voices' grains reach 14.5 ms + a period) are unvoiced.
        let energies = (0..<pitch.count).map { energy(high, $0 * frame, frame) }
        let loudest = energies.max() ?? 0
        let frames = (2..<max(2, pitch.count - 2)).filter { f in
            (f - 2...f + 2).allSatisfy { pitch[$0] == nil } && energies[f] > 0.01 * loudest
        }
        XCTAssertGreaterThan(frames.count, 20, "the speech has fricatives")
        func ratio(_ out: [Float], delay: Int) -> Double {
            let y = highPassed(out)
            let a = frames.reduce(0.0) { $0 + energy(y, $1 * frame + delay, frame) }
            let b = frames.reduce(0.0) { $0 + energy(high, $1 * frame, frame) }
            return 10 * log10(a / b)
        }
        let h = ratio(harmonyOut, delay: 0)
        let t = ratio(tuneOut, delay: tune.unit.latencyFrames)
        print("speech unvoiced energy above 4 kHz (\(frames.count) frames of 20 ms): harmony \(String(format: "%+.2f", h)) dB, tune \(String(format: "%+.2f", t)) dB")
        XCTAssertLessThanOrEqual(abs(h), 2)
        XCTAssertLessThanOrEqual(abs(t), 2)
    }

    func list(_ numbers: Double...) -> JSONValue {
        .array(numbers.map { JSONNode(.number($0), at: SourceLocation(line: 0, column: 0)) })
    }

    func energy(_ x: [Double], _ start: Int, _ count: Int) -> Double {
        guard start >= 0, start + count <= x.count else { return 0 }
        return x[start..<(start + count)].reduce(0) { $0 + $1 * $1 }
    }

    func highPassed(_ x: [Float]) -> [Double] { SpectrumMeasure.highPassed(x, sampleRate: sr) }
}
