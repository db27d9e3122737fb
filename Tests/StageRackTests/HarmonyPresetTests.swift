import Foundation
import StageCore
import StageTestSupport
import XCTest

/// `PresetLibraryTests`, continued: the harmony and tune racks of the preset library, rendered with `--demo` (see
/// `PresetLibraryTests`: the voice sings C4, 261.6 Hz, from 4 to 6 s, and the demo's F chord
/// 41 57 60 65 is held from 4 to 5.9 s) and measured against what their comments promise.
extension PresetLibraryTests {
    /// The split: the right hand's C4 and F4 are sung by the voices, the left hand's F2 is
    /// the piano's (the voices sing no F2, the piano plays no F4).
    func testHarmonyFromTheKeysSingsTheRightHandsNotes() throws {
        let out = try demo("harmony-keys.json").audio
        let off = try variant("harmony-keys.json", [("\"voiceLevel1\": -6, \"voiceLevel2\": -6", "\"voiceLevel1\": -96, \"voiceLevel2\": -96")])
        for c in 0..<2 {
            let f4 = component(out.channels[c], 349.23, 4.2, 5.8), f4Off = component(off.channels[c], 349.23, 4.2, 5.8)
            print("harmony-keys channel \(c): F4 \(formatNumber(f4)) dB with the voices, \(formatNumber(f4Off)) dB without")
            XCTAssertGreaterThan(f4, f4Off + 15, "channel \(c): a voice sings F4")
        }
        let f2 = component(out.channels[0], 87.31, 4.2, 5.8), f2Off = component(off.channels[0], 87.31, 4.2, 5.8)
        XCTAssertEqual(f2, f2Off, accuracy: 1, "F2 (left hand) is the piano's alone")
        XCTAssertGreaterThan(f2, -50, "the piano plays the left hand")
        // After the chord (5.9 s) the voices fade in 300 ms; the sung C4 stops at 6 s.
        XCTAssertLessThan(component(out.channels[0], 349.23, 6.3, 6.9), component(off.channels[0], 349.23, 6.3, 6.9) + 3)
    }

    /// C major thirds: the sung C4 gets E4 above and A3 below.
    func testScaleHarmonySingsThirdsAboveAndBelow() throws {
        let out = try demo("harmony-scale.json").audio.channels[0]
        let reference = try dry().channels[0]
        for (name, f) in [("E4", 329.63), ("A3", 220.0)] {
            let with = component(out, f, 4.2, 5.8), without = component(reference, f, 4.2, 5.8)
            print("harmony-scale \(name): \(formatNumber(with)) dB, dry voice \(formatNumber(without)) dB")
            XCTAssertGreaterThan(with, without + 20, name)
        }
    }

    /// The doubler keeps the pitch (the mix at C4 within 10 cents) and makes the voice
    /// wide: the two sides differ by the detuned doubles (L−R within 12 dB of L), where the
    /// dry voice is the same on both.
    func testDoublerKeepsThePitchAndWidensTheVoice() throws {
        let audio = try demo("doubler.json").audio
        let l = audio.channels[0], r = audio.channels[1]
        let f = PitchMeasure.fundamental(window(l, 4.4, 5.8), sampleRate: rate, low: 80, high: 1000)
        XCTAssertLessThanOrEqual(abs(Measure.cents(f, from: 261.63)), 10, "\(formatNumber(f)) Hz")
        let side = zip(l, r).map { $0 - $1 }
        let width = level(side, 4.2, 5.8) - level(l, 4.2, 5.8)
        print("doubler: \(formatNumber(f)) Hz, side \(formatNumber(width)) dB under the left channel")
        XCTAssertGreaterThan(width, -12)
    }

    /// Hard tune flattens the demo voice's vibrato (depth under half the dry voice's) and
    /// keeps it on C4.
    func testHardTuneFlattensTheVibrato() throws {
        func depth(_ x: [Float]) -> (depth: Double, mean: Double) {
            let track = PitchMeasure.pitchTrack(Array(window(x, 4.3, 5.8)), sampleRate: rate, frame: 960, hop: 240, low: 150, high: 600)
                .compactMap { $0 }.map { Measure.cents($0, from: 261.63) }
            let sorted = track.sorted()
            // 5th to 95th percentile: the swing, without the rare stray frame.
            return ((sorted[sorted.count * 95 / 100] - sorted[sorted.count * 5 / 100]) / 2, track.reduce(0, +) / Double(track.count))
        }
        let tuned = depth(try demo("hard-tune.json").audio.channels[0])
        let dryDepth = depth(try dry().channels[0])
        print("hard-tune: vibrato ±\(formatNumber(tuned.depth)) cents (dry voice ±\(formatNumber(dryDepth.depth))), mean \(formatNumber(tuned.mean)) cents from C4")
        XCTAssertLessThan(tuned.depth, dryDepth.depth / 2)
        XCTAssertLessThanOrEqual(abs(tuned.mean), 5)
    }
}
