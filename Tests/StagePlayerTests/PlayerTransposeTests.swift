import Foundation
import StageCore
import StagePlayer
import StageTestSupport
import XCTest

#if canImport(CAllocCounter)
import CAllocCounter
#endif

/// The player's `transpose`: the track pitch-shifted by librubberband on the disk thread.
/// Pitch within ±5 cents, length and level kept, no latency at the output, a switch mid-song
/// without a click and back to the file's own samples at 0, the same at any block size, no
/// allocation on the render thread. Files are made here.
final class PlayerTransposeTests: XCTestCase {
    static let registry = UnitRegistry(PlayerUnits.types)
    let rate = 48000.0

    /// Stereo tones: a 440 Hz sine (0.3) on the left, a harmonic tone on 220 Hz on the right.
    func tonesFile(seconds: Double) -> (path: String, left: [Float], right: [Float]) {
        let n = Int(seconds * rate)
        let left = Measure.sine(frequency: 440, frames: n, amplitude: 0.3)
        let amplitudes: [Float] = [0.2, 0.1, 0.06, 0.04]
        var right = [Float](repeating: 0, count: n)
        for (k, a) in amplitudes.enumerated() {
            let w: Double = 2 * Double.pi * 220 * Double(k + 1) / rate
            for i in 0..<n { right[i] += a * Float(sin(w * Double(i))) }
        }
        let path = TrackFiles.folder() + "/tones.wav"
        TrackFiles.write(path, channels: [left, right], rate: Int(rate))
        return (path, left, right)
    }

    /// A drum-like click (a 1.5 kHz and a 5 kHz burst decaying over ~10 ms) every 250 ms,
    /// from 0.5 s to a second before the end: mono.
    func clicksFile(seconds: Int) -> (path: String, samples: [Float]) {
        var x = [Float](repeating: 0, count: seconds * Int(rate))
        for s in 0..<(4 * seconds - 6) {
            let at = Int((Double(s) / 4 + 0.5) * rate)
            for i in 0..<2400 {
                let t: Double = Double(i) / rate
                let decay: Double = exp(-t / 0.004)
                let body: Double = 0.5 * sin(2 * Double.pi * 1500 * t) + 0.3 * sin(2 * Double.pi * 5000 * t)
                x[at + i] = Float(decay * body)
            }
        }
        let path = TrackFiles.folder() + "/clicks.wav"
        TrackFiles.write(path, channels: [x], rate: Int(rate))
        return (path, x)
    }

    func harness(_ path: String, offline: Bool = true, maxFrames: Int = 512) throws -> UnitHarness {
        let settings: [String: JSONValue] = ["file": .string(path), "startOnLoad": .bool(true)]
        let h = try UnitHarness(type: Self.registry.type(named: "player")!, settings: settings, maxFrames: maxFrames)
        (h.unit as! PlayerUnit).waitsForDisk = offline
        return h
    }

    /// Renders `seconds` with `transpose` set to each (seconds, semitones) at its frame.
    func render(_ path: String, changes: [(Double, Int)], seconds: Double, block: Int, slowDisk: Bool = false) throws -> [[Float]] {
        let h = try harness(path, maxFrames: block)
        if slowDisk { (h.unit as! PlayerUnit).slowDiskForTesting(nanosecondsPerChunk: 3_000_000) }
        for (t, s) in changes { h.set("transpose", Float(s), atFrame: Int64(t * rate)) }
        return h.render(frames: Int(seconds * rate), blockSize: block)
    }

    /// ±1, ±2, ±5 semitones: each side's pitch within ±5 cents of 2^(n/12) times the file's,
    /// the sine's level within 0.5 dB.
    func testTransposedTonesKeepPitchWithinFiveCentsAndLevelWithinHalfADecibel() throws {
        let tones = tonesFile(seconds: 4)
        let steady = Int(1.5 * rate)..<Int(3.5 * rate)
        let levelIn = Measure.rms(tones.left[steady])
        for n in [1, -1, 2, -2, 5, -5] {
            let out = try render(tones.path, changes: [(0, n)], seconds: 4, block: 256)
            let factor: Double = pow(2, Double(n) / 12)
            let sine = Measure.dominantFrequency(in: out[0][steady], low: 300, high: 700)
            let f0 = 220 * factor
            let tone = Measure.dominantFrequency(in: out[1][steady], low: f0 * 0.9, high: f0 * 1.1)
            let sineCents = Measure.cents(sine, from: 440 * factor)
            let toneCents = Measure.cents(tone, from: f0)
            let level = Measure.decibels(Measure.rms(out[0][steady]) / levelIn)
            print("player: transpose \(n): sine \(formatNumber(sineCents)) cents, harmonic tone \(formatNumber(toneCents)) cents, sine level \(formatNumber(Double(level))) dB")
            XCTAssertEqual(sineCents, 0, accuracy: 5, "transpose \(n): the sine's pitch")
            XCTAssertEqual(toneCents, 0, accuracy: 5, "transpose \(n): the harmonic tone's pitch")
            XCTAssertEqual(level, 0, accuracy: 0.5, "transpose \(n): the sine's level")
        }
    }

    /// A click track 15 s long: each click comes where the file has it; the line through
    /// their offsets gives the length (within 1 ms a minute) and the latency (none added).
    /// Times by envelope cross-correlation (each shifted click against the file's).
    func testTransposedClickTrackKeepsItsLengthAndTime() throws {
        let clicks = clicksFile(seconds: 15)
        let margin = 480  // 10 ms either way
        func window(_ x: [Float], at second: Double, early: Int) -> [Float] {
            let from = Int((second - 0.05) * rate) - early
            return Array(x[from..<(from + Int(0.17 * rate) + early)])
        }
        /// Frames from `x`'s click at `a` s to `y`'s click at `b` s, minus (b − a) s.
        func offset(_ x: [Float], _ a: Double, _ y: [Float], _ b: Double) -> Double {
            let d = PitchMeasure.envelopeDelay(
                of: window(y, at: b, early: margin), relativeTo: window(x, at: a, early: 0), window: 64, step: 4, maxLag: 2 * margin)
            return d - Double(margin)
        }
        for n in [1, -1, 2, -2, 5, -5] {
            let out = try render(clicks.path, changes: [(0, n)], seconds: 15, block: 512)
            // Each click's time against the file's (ms), and the line through them.
            let times: [Double] = (0..<54).map { Double($0) / 4 + 0.5 }
            let offsets: [Double] = times.map { offset(clicks.samples, $0, out[0], $0) / rate * 1000 }
            let meanT: Double = times.reduce(0, +) / Double(times.count)
            let meanO: Double = offsets.reduce(0, +) / Double(offsets.count)
            var num = 0.0
            var den = 0.0
            for (t, o) in zip(times, offsets) {
                num += (t - meanT) * (o - meanO)
                den += (t - meanT) * (t - meanT)
            }
            let perMinute: Double = num / den * 60
            let scatter: Double = offsets.map { abs($0 - meanO) }.max()!
            print("player: transpose \(n): 54 clicks: length \(formatNumber(perMinute)) ms a minute, at \(formatNumber(meanO)) ms from the file's (each within \(formatNumber(scatter)) ms of that)")
            XCTAssertEqual(perMinute, 0, accuracy: 1, "transpose \(n): the length")
            // The shifter's start delay is dropped; what is left is how its window smears a
            // transient (R3 at +5: a click's envelope ~5 ms early), not a delay.
            XCTAssertEqual(meanO, 0, accuracy: 10, "transpose \(n): latency at the output")
        }
    }

    static let switches: [(Double, Int)] = [(1.0, 2), (2.5, -5), (4.0, 0), (5.5, 5)]

    /// Transpose switched four times while the tones play: the pitch follows each within
    /// 300 ms, no switch clicks (around it, the largest sample-to-sample step stays within
    /// the steady sound's and the 4 kHz high-passed residual 40 dB under the tone), and back
    /// at 0 the file's own samples.
    func testSwitchingMidSongFollowsWithoutAClick() throws {
        let tones = tonesFile(seconds: 8)
        let out = try render(tones.path, changes: Self.switches, seconds: 7.5, block: 256)
        let left = out[0]
        let high = SpectrumMeasure.highPassed(left)
        func hpPeak(_ r: Range<Int>) -> Double { high[r].reduce(0) { max($0, abs($1)) } }
        // Steady: from 300 ms after each change to the next one (the first: before it).
        var steadyHP = 0.0
        var steadyJump: Float = 0
        let bounds: [(Double, Double, Int)] = [(0.3, 1.0, 0), (1.3, 2.5, 2), (2.8, 4.0, -5), (4.3, 5.5, 0), (5.8, 7.5, 5)]
        for (a, b, n) in bounds {
            let r = Int(a * rate)..<Int(b * rate)
            steadyHP = max(steadyHP, hpPeak(r))
            steadyJump = max(steadyJump, Measure.maxJump(left[r]))
            let f = Measure.dominantFrequency(in: left[r], low: 250, high: 700)
            let cents = Measure.cents(f, from: 440 * pow(2, Double(n) / 12))
            XCTAssertEqual(cents, 0, accuracy: 5, "at \(n) semitones from \(a) s")
        }
        for (t, n) in Self.switches {
            let r = Int(t * rate)..<Int((t + 0.3) * rate)
            let hp = hpPeak(r)
            let jump = Measure.maxJump(left[r])
            let underTone: Double = 20 * log10(hp / 0.3)
            print("player: switch to \(n) at \(t) s: 4 kHz high-passed peak \(formatNumber(underTone)) dB re the tone (\(formatNumber(hp / steadyHP)) × the steady sound's), largest step \(formatNumber(Double(jump / steadyJump))) × the steady sound's")
            XCTAssertLessThan(underTone, -40, "the switch to \(n) at \(t) s clicks")
            XCTAssertLessThan(jump, 1.2 * steadyJump, "the switch to \(n) at \(t) s steps")
        }
        // Back at 0: the file's samples exactly, from where the crossfade ended.
        let from = Int(4.0 * rate)
        let to = Int(5.5 * rate)
        var exactFrom = to
        while exactFrom > from && left[exactFrom - 1] == tones.left[exactFrom - 1] && out[1][exactFrom - 1] == tones.right[exactFrom - 1] {
            exactFrom -= 1
        }
        let delay: Double = Double(exactFrom - from) / rate * 1000
        print("player: the switch to 0 reached the ears \(formatNumber(delay)) ms after the change (its crossfade's end); the file's samples from there")
        XCTAssertLessThan(delay, 200, "the switch to 0 came late or the audio is not the file's")
    }

    /// Offline, the transposed track and its switches are the same at 64 and 512 frames a
    /// block, and with a disk thread slowed to 3 ms a chunk (the switch frames follow the
    /// changes' frames; the render waits for the disk; the shifter's input is cut the same
    /// way however far the disk had read when a switch came).
    func testOfflineRenderIsTheSameAtAnyBlockSize() throws {
        let tones = tonesFile(seconds: 8)
        let changes: [(Double, Int)] = [(0, 1)] + Self.switches
        let a = try render(tones.path, changes: changes, seconds: 7, block: 64)
        let b = try render(tones.path, changes: changes, seconds: 7, block: 512)
        let slow = try render(tones.path, changes: changes, seconds: 7, block: 512, slowDisk: true)
        for c in 0..<2 {
            XCTAssertGreaterThan(Measure.peak(a[c]), 0.1)
            XCTAssertNil(Measure.firstDifference(a[c], b[c]), "channel \(c) differs between 64- and 512-frame blocks")
            XCTAssertNil(Measure.firstDifference(a[c], slow[c]), "channel \(c) differs with a slow disk")
        }
    }

    /// How long the disk thread takes, now, to make the first transposed chunk: an offline
    /// start at +5 (the render waits for that chunk), timed on the wall clock.
    func firstChunkMilliseconds(_ path: String) throws -> Double {
        let h = try harness(path, maxFrames: 256)
        h.set("transpose", 5)
        let t0 = monotonicSeconds()
        _ = h.render(frames: 256, blockSize: 256)
        return (monotonicSeconds() - t0) * 1000
    }

    /// Live, a start while transposed has no preload at that pitch: the render thread plays
    /// silence, its position held, until the disk thread's first chunk (blocks paced at
    /// real time). Measures that delay against the first chunk's own time, measured in the
    /// same run before and after (the machine's load moves both): at most twice it plus four
    /// periods. (Beside two emulated builds: 75 ms, the chunk alone 78 ms; 149 ms once beside
    /// three builds, which the absolute 100 ms bound this test had failed.)
    func testALiveTransposedStartWaitsOnlyForTheFirstChunk() throws {
        let tones = tonesFile(seconds: 4)
        let before = try firstChunkMilliseconds(tones.path)
        let h = try harness(tones.path, offline: false, maxFrames: 256)
        h.set("transpose", 5)
        var out: [Float] = []
        for _ in 0..<(Int(rate) / 256) {
            h.renderBlock(frames: 256)
            out += UnsafeBufferPointer(start: h.outputs[0][0], count: 256)
            usleep(5333)  // a 256-frame period at 48 kHz
        }
        let first = out.firstIndex { abs($0) > 0.01 } ?? out.count
        let delay: Double = Double(first) / rate * 1000
        let chunk = max(before, try firstChunkMilliseconds(tones.path))
        let bound: Double = 2 * chunk + 4 * 256 / rate * 1000
        print("player: a transposed live start sounds \(formatNumber(delay)) ms after the press; the first chunk alone takes \(formatNumber(chunk)) ms now (bound \(formatNumber(bound)) ms)")
        XCTAssertLessThan(delay, bound, "the transposed start waited for more than its first chunk")
        XCTAssertEqual((h.unit as! PlayerUnit).underruns, 0, "the wait counted as an underrun")
    }

    /// The render thread allocates nothing while the track plays transposed and switches.
    func testNoHeapAllocationInRenderWhileTransposing() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds; `make test` runs release")
        #else
        let tones = tonesFile(seconds: 12)
        let h = try harness(tones.path, offline: false, maxFrames: 256)
        h.set("transpose", 3)
        for (t, n) in Self.switches { h.set("transpose", Float(n), atFrame: Int64(t * rate)) }
        h.renderBlock(frames: 256)  // warm-up
        alloc_counter_start()
        for k in 0..<1500 {
            h.renderBlock(frames: 256)
            if k % 10 == 0 { usleep(2000) }  // let the disk thread run
        }
        let count = alloc_counter_stop()
        XCTAssertEqual(count, 0, "the player allocated \(count) times in 1500 blocks")
        #endif
    }

    /// The disk thread's cost: process CPU time for 20 s of the tones at ±5 semitones against
    /// the same at 0 (the file read alone), per second of audio.
    func testCostOfTransposingOnTheDiskThread() throws {
        let tones = tonesFile(seconds: 21)
        func cpu(_ n: Int) throws -> Double {
            let start = processCPUSeconds()
            let out = try render(tones.path, changes: [(0, n)], seconds: 20, block: 512)
            XCTAssertGreaterThan(Measure.peak(out[0]), 0.1)
            return processCPUSeconds() - start
        }
        let plain = try cpu(0)
        let up = try cpu(5)
        let down = try cpu(-5)
        let upCost: Double = (up - plain) / 20
        let downCost: Double = (down - plain) / 20
        print("player: transpose cost on the disk thread: +5: \(formatNumber(upCost * 1000)) ms CPU a second of audio, −5: \(formatNumber(downCost * 1000)) ms (the file alone: \(formatNumber(plain / 20 * 1000)) ms)")
        XCTAssertLessThan(max(upCost, downCost), 0.5, "transposing takes more than half a core")
    }

    func processCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
