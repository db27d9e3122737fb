import Foundation
import StageCore
import StagePlayer
import StageTestSupport
import XCTest

/// The player plays its file exactly, from the frame of the MIDI event that started it;
/// loops are seamless; a rate change stays within the resampler's tolerance.
final class PlayerPlaybackTests: XCTestCase {
    let rate = 48000.0

    /// A sweep started by a note from a MIDI file comes out equal to the file, sample for
    /// sample, from the note's frame on (same rate: no resampling); silence before it.
    func testMIDITriggeredSweepEqualsTheFileFromTheTriggerFrame() throws {
        let dir = TrackFiles.folder()
        let sweep = TrackFiles.sweep(seconds: 6, rate: rate)
        TrackFiles.write(dir + "/sweep.wav", channels: sweep, rate: Int(rate))
        let trigger = 12345  // not on a block boundary
        let text = PlayerRacks.text(file: dir + "/sweep.wav", settings: "\"preload\": 1, \"buffer\": 1", map: "{ \"note\": 36, \"action\": \"track.play\" }")
        let out = try PlayerRacks.render(
            text, midi: [(Double(trigger) / rate, .noteOn(channel: 0, note: 36, velocity: 100))], frames: trigger + sweep[0].count + 2000)
        XCTAssertEqual(Measure.peak(Array(out[0][0..<trigger])), 0, "sound before the trigger")
        for c in 0..<2 {
            var worst: Float = 0
            for i in 0..<sweep[c].count { worst = max(worst, abs(out[c][trigger + i] - sweep[c][i])) }
            print("player: sweep channel \(c) from the trigger's frame: worst difference \(worst)")
            XCTAssertEqual(worst, 0, "channel \(c) differs from the file")
        }
        XCTAssertEqual(Measure.peak(Array(out[0][(trigger + sweep[0].count)...])), 0, "sound after the end")
    }

    /// A 44.1 kHz sweep played at 48 kHz: equal to the sweep's formula sampled at 48 kHz
    /// within the resampler's tolerance (libsamplerate's medium sinc), on the trigger's frame.
    func testResampledSweepMatchesTheSignalWithinTheResamplersTolerance() throws {
        let dir = TrackFiles.folder()
        let fileRate = 44100.0
        TrackFiles.write(dir + "/sweep.wav", channels: TrackFiles.sweep(seconds: 4, rate: fileRate, f1: 16000), rate: Int(fileRate))
        let expected = TrackFiles.sweep(seconds: 4, rate: rate, f1: 16000)
        let trigger = 4801
        let text = PlayerRacks.text(file: dir + "/sweep.wav", map: "{ \"cc\": 80, \"action\": \"track.play\" }")
        let out = try PlayerRacks.render(
            text, midi: [(Double(trigger) / rate, .controlChange(channel: 0, controller: 80, value: 127))],
            frames: trigger + expected[0].count)
        // Away from the file's two ends (the resampler's filter needs neighbours there).
        let edge = 200
        var errorPower = 0.0
        var signalPower = 0.0
        var worst: Float = 0
        for i in edge..<(expected[0].count - edge) {
            let e = out[0][trigger + i] - expected[0][i]
            worst = max(worst, abs(e))
            errorPower += Double(e * e)
            signalPower += Double(expected[0][i] * expected[0][i])
        }
        let snr = 10 * log10(signalPower / errorPower)
        print("player: 44.1 → 48 kHz sweep: error \(formatNumber(-snr)) dB under the signal, worst sample \(worst)")
        XCTAssertGreaterThan(snr, 80, "the resampled sweep departs from the signal")
        XCTAssertEqual(Measure.peak(Array(out[0][0..<trigger])), 0)
        XCTAssertGreaterThan(abs(out[0][trigger + 3]) + abs(out[0][trigger + 4]), 0, "does not start on the trigger's frame")
    }

    /// Largest sample-to-sample step in `x`.
    func largestStep(_ x: ArraySlice<Float>) -> Float {
        zip(x.dropFirst(), x).map { abs($0 - $1) }.max() ?? 0
    }

    /// A loop at the engine's rate is sample-exact: after the loop's end comes its first
    /// frame, and no step at the seam is larger than the signal's own.
    func testLoopSeamIsSampleExactAndHasNoStep() throws {
        let dir = TrackFiles.folder()
        let n = 96000
        // 480 Hz: 100 frames a period; the region is 470 whole periods starting at a zero.
        let tone = (0..<n).map { 0.6 * sinf(2 * .pi * 480 * Float($0) / 48000) }
        TrackFiles.write(dir + "/tone.wav", channels: [tone], rate: 48000)
        let a = 1000
        let b = 48000
        let text = PlayerRacks.text(file: dir + "/tone.wav", settings: "\"loop\": [\(a), \(b)], \"startOnLoad\": true, \"preload\": 0.5")
        let out = try PlayerRacks.render(text, frames: b + 5 * (b - a), block: 256)
        let own = largestStep(tone[...])
        for k in 0..<5 {
            let seam = b + k * (b - a)  // output frame of the loop's first frame, pass k+1
            XCTAssertEqual(Array(out[0][seam..<(seam + 2000)]), Array(tone[a..<(a + 2000)]), "pass \(k + 1) is not the region")
            XCTAssertEqual(Array(out[0][(seam - 2000)..<seam]), Array(tone[(b - 2000)..<b]), "pass \(k) does not end at the region's end")
            let step = largestStep(out[0][(seam - 50)..<(seam + 50)])
            XCTAssertLessThanOrEqual(step, own * 1.0001, "a step at seam \(k)")
        }
        print("player: loop seam at 48 kHz: largest step \(largestStep(out[0][(b - 50)..<(b + 50)])), the signal's own \(own)")
    }

    /// A 44.1 kHz loop played at 48 kHz: the resampler runs through the seam, so the loop
    /// keeps its exact average length (44,100 file frames = 48,000 engine frames) and no
    /// step is larger than the tone's own.
    func testResampledLoopKeepsItsLengthAndHasNoStep() throws {
        let dir = TrackFiles.folder()
        let fileRate: Float = 44100
        let tone = (0..<60000).map { 0.6 * sinf(2 * .pi * 441 * Float($0) / fileRate) }  // 100 file frames a period
        TrackFiles.write(dir + "/tone.wav", channels: [tone], rate: 44100)
        let text = PlayerRacks.text(file: dir + "/tone.wav", settings: "\"loop\": [1000, 45100], \"startOnLoad\": true")
        let frames = 48000 * 8
        let out = try PlayerRacks.render(text, frames: frames)
        let expectedStep = 0.6 * 2 * Float.pi * 441 / 48000
        let steady = out[0][1000..<(frames - 1000)]
        let step = largestStep(steady)
        // Upward zero crossings over 6 s: the tone is continuous through every seam.
        var crossings: [Double] = []
        for i in 48000..<(48000 * 7) where out[0][i - 1] < 0 && out[0][i] >= 0 {
            crossings.append(Double(i - 1) + Double(-out[0][i - 1] / (out[0][i] - out[0][i - 1])))
        }
        let periods = Double(crossings.count - 1)
        let frequency = periods / ((crossings.last! - crossings.first!) / 48000)
        var worstPeriodError = 0.0
        for k in 1..<crossings.count { worstPeriodError = max(worstPeriodError, abs(crossings[k] - crossings[k - 1] - 48000.0 / 441)) }
        print("player: 44.1 → 48 kHz loop: largest step \(step) (tone's own \(expectedStep)), \(formatNumber(frequency)) Hz, worst period error \(formatNumber(worstPeriodError)) frames")
        XCTAssertLessThan(step, expectedStep * 1.01, "a step at a seam")
        XCTAssertEqual(frequency, 441, accuracy: 0.001, "the loop's length drifts")
        XCTAssertLessThan(worstPeriodError, 0.01, "a seam shifts the tone's phase")
    }

    /// `stop` fades over 10 ms (no click), `cue` starts at its position, `restart` from the
    /// beginning, each on its event's frame.
    func testStopFadesAndCuesStartAtTheirPositions() throws {
        let dir = TrackFiles.folder()
        let ramp = (0..<(48000 * 3)).map { Float($0) / Float(48000 * 3) * 0.5 }
        TrackFiles.write(dir + "/ramp.wav", channels: [ramp], rate: 48000)
        let map = """
            { "note": 36, "action": "track.play" }, { "note": 37, "action": "track.stop" },
            { "note": 38, "action": "track.cue middle" }
            """
        let text = PlayerRacks.text(file: dir + "/ramp.wav", settings: "\"cues\": { \"middle\": 1.5 }", map: map)
        let out = try PlayerRacks.render(
            text,
            midi: [(0.1, .noteOn(channel: 0, note: 36, velocity: 1)), (0.5, .noteOn(channel: 0, note: 37, velocity: 1)),
                   (1.0, .noteOn(channel: 0, note: 38, velocity: 1))],
            frames: 48000 * 2)
        XCTAssertEqual(out[0][4800 + 100], ramp[100])
        // The stop at 0.5 s: a 10 ms fade (480 frames), then silence.
        XCTAssertEqual(out[0][24000], ramp[19200], accuracy: 1e-6)
        XCTAssertLessThan(largestStep(out[0][23990..<24600]), 0.5 / 480 * 1.5 + 1e-4, "the stop clicks")
        XCTAssertEqual(Measure.peak(Array(out[0][24480..<48000])), 0)
        // The cue at 1.0 s plays from 1.5 s of the file.
        XCTAssertEqual(out[0][48000 + 10], ramp[72000 + 10])
    }
}
