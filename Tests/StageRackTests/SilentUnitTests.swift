import CAllocCounter
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// Units nobody hears are skipped (UnitSilence, EngineSilence): a double on a fader at
/// −96 dB costs no render at all, comes back without a click when the fader comes up, and
/// the skipping keeps the engine block-size invariant.
final class SilentUnitTests: XCTestCase {
    /// The voice dry on input 1 and an octave double on input 2 (silent until CC 16 or the
    /// mute on CC 20 lets it through), as in the default rack.
    let rack = """
        { "format": 2,
          "units": {
            "mic": { "type": "input" },
            "double": { "type": "pitch", "params": { "pitch": 1200, "mode": "voice" } },
            "verb": { "type": "reverb", "params": { "dryWetMix": 30 } },
            "mix": { "type": "mixer", "inputs": 2, "params": { "gain2": -96 } },
            "out": { "type": "output" } },
          "connections": [ "mic -> mix:1", "mic -> double -> verb -> mix:2", "mix -> out" ],
          "midi": { "map": [ { "cc": 16, "to": "mix.gain2", "min": -96, "max": 0 },
                             { "cc": 20, "to": "mix.mute2" } ] } }
        """

    /// A sung-like tone: 196 Hz with harmonics, a little vibrato (voice mode finds its pitch).
    func voice(_ frames: Int) -> [Float] {
        (0..<frames).map { i in
            let t = Double(i) / 48000
            // Explicit types, one term a line: the whole sum is beyond Swift 6.0's type checker.
            let vibrato: Double = 0.3 * sin(2 * Double.pi * 5 * t)
            let phase: Double = 2 * Double.pi * 196 * t + vibrato
            let first: Double = 0.3 * sin(phase)
            let second: Double = 0.15 * sin(2 * phase)
            let third: Double = 0.08 * sin(3 * phase)
            return Float(first + second + third)
        }
    }

    func cc(_ seconds: Double, _ controller: Int, _ value: Int) -> StandardMIDIFile.TimedMessage {
        .init(seconds: seconds, message: .controlChange(channel: 0, controller: controller, value: value))
    }

    /// Renders through an engine of our own (so skipping can be turned off for a reference);
    /// returns [left, right] and the engine.
    func render(
        _ midi: [StandardMIDIFile.TimedMessage], frames: Int, block: Int, skipping: Bool = true
    ) throws -> (out: [[Float]], renderer: OfflineRenderer) {
        let plan = try RackBuilding.plan(rack, maxFrames: block)
        let renderer = OfflineRenderer(plan: plan)
        renderer.player.current.skipsUnheardUnits = skipping
        var out: [[Float]] = [[], []]
        renderer.render(
            input: AudioData(channels: [voice(frames)], sampleRate: 48000),
            midi: StandardMIDIFile(messages: midi, duration: midi.last?.seconds ?? 0), frames: frames, blockSize: block
        ) { bus, n in
            for c in 0..<2 { out[c] += UnsafeBufferPointer(start: bus[c], count: n) }
        }
        return (out, renderer)
    }

    /// At −96 dB the double and the reverb behind it never render; the output is the same
    /// as when they run (they are multiplied by zero). Without skipping they render every block.
    func testAMutedDoubleCostsNoRender() throws {
        let (out, renderer) = try render([], frames: 48000, block: 128)
        let engine = renderer.player.current
        let plan = engine.plan
        let blocks = 48000 / 128
        for id in ["double", "verb"] {
            let u = try XCTUnwrap(plan.unitIndex(id))
            XCTAssertEqual(engine.renderCount(unit: u), 0, "\(id) rendered though nobody hears it")
            XCTAssertTrue(engine.isSkipping(unit: u))
        }
        XCTAssertEqual(engine.renderCount(unit: try XCTUnwrap(plan.unitIndex("mix"))), blocks)
        let (reference, always) = try render([], frames: 48000, block: 128, skipping: false)
        XCTAssertEqual(always.player.current.renderCount(unit: try XCTUnwrap(plan.unitIndex("double"))), blocks)
        for c in 0..<2 {
            XCTAssertEqual(zip(out[c], reference[c]).map { abs($0 - $1) }.max()!, 0, "channel \(c)")
        }
        XCTAssertGreaterThan(Measure.rms(out[0]), 0.05, "the dry voice is heard")
    }

    /// Fader up, down to −96 dB, up again; mute on and off: the same output at blocks of
    /// 1, 17, 64 and 512 frames (the skipped stretches start on the 64-frame grid and end at
    /// the events' frames), and the double is heard whenever its fader is up.
    func testSkippingIsBlockSizeInvariant() throws {
        let midi = [
            cc(0.0203, 16, 127), cc(0.0500, 16, 0), cc(0.0811, 16, 100),
            cc(0.1010, 20, 127), cc(0.1313, 20, 0), cc(0.1601, 16, 0),
        ]
        let frames = 9600
        let (reference, renderer) = try render(midi, frames: frames, block: 1)
        let double = try XCTUnwrap(renderer.plan.unitIndex("double"))
        let referenceRenders = renderer.player.current.renderCount(unit: double)
        XCTAssertLessThan(referenceRenders, frames * 3 / 4, "the double was skipped some of the time")
        XCTAssertGreaterThan(referenceRenders, frames / 4, "and rendered some of the time")
        for block in [17, 64, 512] {
            let (out, _) = try render(midi, frames: frames, block: block)
            for c in 0..<2 {
                let diff = zip(out[c], reference[c]).map { abs($0 - $1) }.max()!
                XCTAssertLessThanOrEqual(diff, 1e-6, "block \(block) channel \(c)")
            }
        }
        // The double (an octave up, 392 Hz) is in the mix while its fader is up.
        let dry = try render([], frames: frames, block: 64).out[0]
        let up = Array(zip(reference[0][2400..<2400 + 960], dry[2400..<2400 + 960]).map { $0 - $1 })
        XCTAssertGreaterThan(Measure.rms(up), 0.01, "the double is heard with its fader up")
    }

    static func secondDifferences(_ x: [Float]) -> [Float] {
        guard x.count > 2 else { return [] }
        return (2..<x.count).map { (i: Int) -> Float in
            let d: Float = x[i] - 2 * x[i - 1] + x[i - 2]
            return abs(d)
        }
    }

    static func largestSecondDifference(_ x: [Float]) -> Float { secondDifferences(x).max() ?? 0 }

    /// Bringing the fader up (or the mute off) wakes the double from a reset: it starts
    /// with no transient larger than the same render shows with skipping off (a reset
    /// pitch shifter fed the live voice at once would step; ResumeFade fades its input in).
    func testUnmutingDoesNotClick() throws {
        let midi = [cc(0.5003, 16, 127), cc(0.8001, 20, 127), cc(1.0007, 20, 0)]
        let frames = 60000
        let skipped = try render(midi, frames: frames, block: 256).out
        let always = try render(midi, frames: frames, block: 256, skipping: false).out
        let dry = try render([], frames: frames, block: 256).out[0]
        // What the double adds: the output minus the dry voice alone. A click is broadband:
        // the second difference weighs 10 kHz a hundred times over 1 kHz. Bounded by the
        // largest the same render shows with skipping off, the double running all along,
        // steady or brought up (measured: 0.0020 at the fader; 0.29 when the double was
        // reset and fed the voice at once, 0.0032 with a 10 ms fade, 0.00095 with 30 ms).
        let events = [("fader up", 0.5003), ("mute off", 1.0007)]
        let windows = events.map { Int($0.1 * 48000) - 480..<Int($0.1 * 48000) + 4320 }
        var bound = Self.largestSecondDifference(zip(always[0][26400..<38400], dry[26400..<38400]).map { $0 - $1 })
        for window in windows {
            bound = max(bound, Self.largestSecondDifference(zip(always[0][window], dry[window]).map { $0 - $1 }))
        }
        for (event, window) in zip(events, windows) {
            let added = zip(skipped[0][window], dry[window]).map { $0 - $1 }
            let click = Self.largestSecondDifference(added)
            print("\(event.0): largest second difference of the double's contribution \(click); running all along: \(bound)")
            XCTAssertLessThanOrEqual(click, bound * 1.25, "\(event.0): a click")
            XCTAssertGreaterThan(Measure.rms(Array(added.suffix(2400))), 0.01, "\(event.0): the double is heard after")
        }
    }

    /// Going dormant, waking (reset, faded inputs) and the cut blocks allocate nothing.
    func testSkippingAndWakingAllocateNothing() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter needs glibc") }
        #if DEBUG
        throw XCTSkip("counts are for release builds (debug Swift allocates lazily); `make test` runs release")
        #endif
        let plan = try RackBuilding.plan(rack, maxFrames: 256)
        let engine = RenderEngine(plan: plan)
        let driver = EngineDriver(engine: engine)
        let mapper = MIDIMapper(plan: plan)
        let input = voice(256)
        driver.render(frameCount: 256)  // warm-up block
        var woken = 0
        let double = try XCTUnwrap(plan.unitIndex("double"))
        alloc_counter_start()
        for block in 0..<3000 {
            if block % 40 == 0 {
                // Fader up and down in turn, at frames inside the next block.
                mapper.handle(.controlChange(channel: 0, controller: 16, value: block % 80 == 0 ? 127 : 0), at: engine.sampleTime + 77) {
                    driver.push($0)
                }
            }
            input.withUnsafeBufferPointer { plan.hostInput[0].update(from: $0.baseAddress!, count: 256) }
            let before = engine.isSkipping(unit: double)
            driver.render(frameCount: block % 3 == 0 ? 256 : 101)
            if before && !engine.isSkipping(unit: double) { woken += 1 }
        }
        let allocations = alloc_counter_stop()
        XCTAssertEqual(allocations, 0, "the render loop allocated \(allocations) times in 3000 blocks")
        XCTAssertGreaterThan(woken, 10, "the double went to sleep and woke up")
    }
}
