import CAllocCounter
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// Signal-based silence (SignalSilence): units with silent inputs and an ended tail sleep,
/// the synth with no voice does not call FluidSynth, every output bus carries a silence flag;
/// block-size invariance, tails, echoes after a silent gap and resuming are measured.
final class SignalSilenceTests: XCTestCase {
    static let font = Fixtures.repository.appendingPathComponent("soundfonts/stagerack-basic.sf2").path

    /// The old default rack's shape: the voice through delay and reverb, a synth, a mixer.
    static func rack(delay: Double = 0.35, feedback: Double = 30, decay: Double = 1.8) -> String {
        """
        { "format": 2,
          "units": {
            "mic": { "type": "input" },
            "delay": { "type": "delay", "params": { "delayTime": \(delay), "feedback": \(feedback), "wetDryMix": 15 } },
            "verb": { "type": "reverb", "params": { "dryWetMix": 20, "decayTimeAt0Hz": \(decay), "decayTimeAtNyquist": \(decay / 2) } },
            "synth": { "type": "synth", "soundfont": "\(font)", "channel": "all" },
            "mix": { "type": "mixer", "inputs": 2 },
            "out": { "type": "output" } },
          "connections": [ "mic -> delay -> verb -> mix:1", "synth -> mix:2", "mix -> out" ] }
        """
    }

    /// A sung-like tone where `on` says so, digital silence elsewhere.
    static func voice(_ frames: Int, on: (Double) -> Bool = { _ in true }) -> [Float] {
        (0..<frames).map { i in
            let t = Double(i) / 48000
            guard on(t) else { return 0 }
            // Explicit types, one term a line: the whole sum is beyond Swift 6.0's type checker.
            let vibrato: Double = 0.3 * sin(2 * Double.pi * 5 * t)
            let phase: Double = 2 * Double.pi * 196 * t + vibrato
            let first: Double = 0.3 * sin(phase)
            let second: Double = 0.15 * sin(2 * phase)
            let third: Double = 0.08 * sin(3 * phase)
            return Float(first + second + third)
        }
    }

    static func notes(at times: [Double], length: Double = 0.15) -> [StandardMIDIFile.TimedMessage] {
        times.flatMap { t in
            [
                StandardMIDIFile.TimedMessage(seconds: t, message: .noteOn(channel: 0, note: 60, velocity: 100)),
                StandardMIDIFile.TimedMessage(seconds: t + length, message: .noteOff(channel: 0, note: 60, velocity: 0)),
            ]
        }
    }

    struct Rendered {
        var out: [[Float]]
        var engine: RenderEngine
        var cpuSeconds: Double
    }

    static func render(
        _ text: String, input: [Float], midi: [StandardMIDIFile.TimedMessage], block: Int, skipping: Bool = true
    ) throws -> Rendered {
        let plan = try RackBuilding.plan(text, maxFrames: block)
        let renderer = OfflineRenderer(plan: plan)
        renderer.player.current.skipsUnheardUnits = skipping
        var out: [[Float]] = [[], []]
        out[0].reserveCapacity(input.count)
        out[1].reserveCapacity(input.count)
        let file = StandardMIDIFile(messages: midi, duration: midi.last?.seconds ?? 0)
        let t0 = ScalingMeasure.threadCPUSeconds()
        renderer.render(
            input: AudioData(channels: [input], sampleRate: 48000), midi: file, frames: input.count, blockSize: block
        ) { bus, n in
            for c in 0..<2 { out[c] += UnsafeBufferPointer(start: bus[c], count: n) }
        }
        return Rendered(out: out, engine: renderer.player.current, cpuSeconds: ScalingMeasure.threadCPUSeconds() - t0)
    }

    static func maxDifference(_ a: [Float], _ b: [Float]) -> Float { zip(a, b).map { abs($0 - $1) }.max() ?? 0 }

    /// The voice through delay and reverb with gaps of digital silence, and the synth idle
    /// between two notes: blocks of 1, 17, 64 and 512 frames give the same output, the same
    /// number of sleeps and wakes; against sleeping turned off, no more than −100 dBFS apart
    /// (a unit wakes from a tail that was below −120 dBFS: no click).
    func testSleepingIsBlockSizeInvariantAndDoesNotClick() throws {
        let rack = Self.rack(delay: 0.05, feedback: 20, decay: 0.2)
        let input = Self.voice(120_000) { t in t < 0.3 || (t >= 1.3013 && t < 1.5) }
        let midi = Self.notes(at: [0.05, 1.7001])
        let reference = try Self.render(rack, input: input, midi: midi, block: 1)
        let counts = reference.engine.sleepCounts
        print("sleeps \(counts.sleeps), wakes \(counts.wakes) at block 1")
        XCTAssertGreaterThanOrEqual(counts.sleeps, 3, "delay, reverb and mixer slept in the gaps")
        XCTAssertGreaterThanOrEqual(counts.wakes, 3)
        for block in [17, 64, 512] {
            let r = try Self.render(rack, input: input, midi: midi, block: block)
            for c in 0..<2 {
                let d = Self.maxDifference(r.out[c], reference.out[c])
                XCTAssertLessThanOrEqual(d, 1e-6, "block \(block) channel \(c)")
            }
            XCTAssertEqual(r.engine.sleepCounts.sleeps, counts.sleeps, "block \(block): sleeps")
            XCTAssertEqual(r.engine.sleepCounts.wakes, counts.wakes, "block \(block): wakes")
        }
        let always = try Self.render(rack, input: input, midi: midi, block: 64, skipping: false)
        XCTAssertEqual(always.engine.sleepCounts.sleeps, 0)
        let d = Self.maxDifference(always.out[0], reference.out[0])
        print("largest difference from never sleeping: \(d) (\(Measure.decibels(d)) dBFS)")
        XCTAssertLessThanOrEqual(d, 1e-5, "sleeping changed the output by more than −100 dBFS")
        XCTAssertGreaterThan(Measure.rms(reference.out[0][62_400..<72_000]), 0.05, "the voice is back after the gap")
    }

    /// A silent microphone and an idle synth: after the units' holds, the delay, the reverb
    /// and the mixer sleep and the synth does not call FluidSynth; the same rack busy (voice
    /// and notes all along) renders every block. CPU of this thread, side by side: the idle
    /// rack costs a small fraction of the busy one.
    func testAnIdleRackCostsAFractionOfABusyOne() throws {
        let rack = Self.rack()
        let frames = 10 * 48000
        let block = 256
        let busyMIDI = Self.notes(at: stride(from: 0.0, to: 10, by: 0.25).map { $0 }, length: 0.2)
        var idle = try Self.render(rack, input: [Float](repeating: 0, count: frames), midi: [], block: block)
        var busy = try Self.render(rack, input: Self.voice(frames), midi: busyMIDI, block: block)
        // Best of three interleaved rounds each (the machine is shared).
        for _ in 0..<2 {
            let idle2 = try Self.render(rack, input: [Float](repeating: 0, count: frames), midi: [], block: block)
            let busy2 = try Self.render(rack, input: Self.voice(frames), midi: busyMIDI, block: block)
            if idle2.cpuSeconds < idle.cpuSeconds { idle = idle2 }
            if busy2.cpuSeconds < busy.cpuSeconds { busy = busy2 }
        }
        let plan = idle.engine.plan
        let blocks = frames / block
        for id in ["delay", "verb", "mix"] {
            let u = try XCTUnwrap(plan.unitIndex(id))
            let idleRenders = idle.engine.renderCount(unit: u)
            let busyRenders = busy.engine.renderCount(unit: u)
            print("\(id): \(idleRenders) renders idle, \(busyRenders) busy")
            XCTAssertEqual(busyRenders, blocks, "\(id) busy renders every block")
            XCTAssertLessThan(idleRenders, blocks / 10, "\(id) sleeps when idle")
            XCTAssertTrue(idle.engine.isSleeping(unit: u))
        }
        let synth = try XCTUnwrap(plan.unitIndex("synth"))
        XCTAssertTrue(idle.engine.isOutputSilent(unit: synth), "the idle synth flags its output silent")
        XCTAssertFalse(busy.engine.isOutputSilent(unit: synth))
        XCTAssertEqual(Measure.peak(idle.out[0]), 0)
        let ratio = idle.cpuSeconds / busy.cpuSeconds
        print("CPU: idle \(idle.cpuSeconds) s, busy \(busy.cpuSeconds) s, ratio \(ratio)")
        XCTAssertLessThan(ratio, 0.25, "the idle rack costs more than a quarter of the busy one")
    }

    /// A reverb's tail is not cut: a noise burst's decay measured with sleeping on and off
    /// gives the same RT60, the two outputs are within −120 dBFS, and the reverb sleeps only
    /// once its output has stayed below −120 dBFS.
    func testReverbTailAndRT60AreUnchanged() throws {
        let rack = """
            { "format": 2,
              "units": { "mic": { "type": "input" },
                "verb": { "type": "reverb", "params": { "dryWetMix": 100, "decayTimeAt0Hz": 1.0, "decayTimeAtNyquist": 0.5 } },
                "out": { "type": "output" } },
              "connections": [ "mic -> verb -> out" ] }
            """
        var seed: UInt32 = 12345
        let burst = 9600
        let input = (0..<(5 * 48000)).map { i -> Float in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return i < burst ? (Float(seed >> 8) / Float(1 << 24) - 0.5) * 0.8 : 0
        }
        let on = try Self.render(rack, input: input, midi: [], block: 256)
        let off = try Self.render(rack, input: input, midi: [], block: 256, skipping: false)
        let verb = try XCTUnwrap(on.engine.plan.unitIndex("verb"))
        XCTAssertTrue(on.engine.isSleeping(unit: verb), "the reverb sleeps after its tail")
        XCTAssertLessThan(on.engine.renderCount(unit: verb), 5 * 48000 / 256)
        let d = Self.maxDifference(on.out[0], off.out[0])
        XCTAssertLessThanOrEqual(d, 1e-6, "cut above the floor")
        let tailOn = Array(on.out[0][burst...])
        let tailOff = Array(off.out[0][burst...])
        for center in [500.0, 1000, 2000] {
            let a = try XCTUnwrap(ReverbMeasure.rt60(tailOn, octaveAround: center))
            let b = try XCTUnwrap(ReverbMeasure.rt60(tailOff, octaveAround: center))
            print("RT60 at \(Int(center)) Hz: \(a) s sleeping, \(b) s always running")
            XCTAssertEqual(a, b, accuracy: b * 0.01)
        }
        // Where it fell asleep, the tail it left was below the floor.
        let lastNonZero = try XCTUnwrap(on.out[0].lastIndex { $0 != 0 })
        XCTAssertLessThan(lastNonZero, 4 * 48000, "it slept before the end")
        XCTAssertLessThanOrEqual(Measure.peak(off.out[0][(lastNonZero + 1)...]), 1e-6)
        XCTAssertGreaterThan(Measure.peak(off.out[0][(lastNonZero - 4800)...lastNonZero]), 0, "the tail ran to the floor")
    }

    /// A delay's echoes survive the silent gaps between them: with a 1 s delay the output is
    /// silent for 0.9 s before each echo, and the delay does not sleep in the gap (its hold
    /// is its longest tap).
    func testEchoesAfterASilentGapAreKept() throws {
        let rack = """
            { "format": 2,
              "units": { "mic": { "type": "input" },
                "delay": { "type": "delay", "params": { "delayTime": 1.0, "feedback": 10, "wetDryMix": 50, "lopassCutoff": 15000 } },
                "out": { "type": "output" } },
              "connections": [ "mic -> delay -> out" ] }
            """
        let input = Self.voice(8 * 48000) { $0 < 0.1 }
        let on = try Self.render(rack, input: input, midi: [], block: 512)
        let off = try Self.render(rack, input: input, midi: [], block: 512, skipping: false)
        XCTAssertLessThanOrEqual(Self.maxDifference(on.out[0], off.out[0]), 1e-6)
        for echo in 1...3 {
            let start = echo * 48000
            let level = Measure.peak(on.out[0][start..<start + 4800])
            print("echo \(echo): peak \(Measure.decibels(level)) dBFS")
            XCTAssertGreaterThan(level, 1e-5, "echo \(echo) is there")
        }
        let delay = try XCTUnwrap(on.engine.plan.unitIndex("delay"))
        XCTAssertTrue(on.engine.isSleeping(unit: delay), "asleep once the repeats are below the floor")
    }

    /// The synth idle between two notes (its output flagged silent, FluidSynth not called)
    /// keeps FluidSynth's 64-frame grid: the second note, sent at frame 48,015 through
    /// 50-frame blocks, sounds from the grid point 48,064 as it would with no idle stretch.
    func testTheIdleSynthKeepsItsGrid() throws {
        let rack = """
            { "format": 2,
              "units": { "synth": { "type": "synth", "soundfont": "\(Self.font)", "channel": "all" },
                         "mix": { "type": "mixer", "inputs": 1 }, "out": { "type": "output" } },
              "connections": [ "synth -> mix -> out" ] }
            """
        let plan = try RackBuilding.plan(rack, maxFrames: 50)
        let engine = RenderEngine(plan: plan)
        let driver = EngineDriver(engine: engine)
        let synth = try XCTUnwrap(plan.unitIndex("synth"))
        for (frame, on) in [(4800, true), (9600, false), (48015, true), (52800, false)] {
            let message: MIDIMessage = on ? .noteOn(channel: 0, note: 69, velocity: 100) : .noteOff(channel: 0, note: 69)
            XCTAssertTrue(driver.push(.midi(message, toUnit: synth, at: Int64(frame))))
        }
        var left: [Float] = []
        var silentBlocks = 0
        for _ in 0..<(60000 / 50) {
            driver.render(frameCount: 50)
            left += UnsafeBufferPointer(start: plan.hostOutput[0], count: 50)
            if engine.sampleTime > 40000 && engine.sampleTime <= 48000 && engine.isOutputSilent(unit: synth) { silentBlocks += 1 }
        }
        // The first note's release rings to about 0.75 s (36,000 frames).
        XCTAssertEqual(silentBlocks, 160, "the synth was idle, its output flagged silent, between the notes")
        XCTAssertEqual(Measure.peak(left[40000..<48064]), 0, "silence between the notes")
        let onset = try XCTUnwrap(left[40000...].firstIndex { abs($0) > 1e-7 })
        print("second note: sent at 48015, first sound at \(onset)")
        XCTAssertGreaterThanOrEqual(onset, 48064)
        XCTAssertLessThan(onset, 48064 + 64, "on FluidSynth's grid")
    }

    /// Going to sleep, waking inside blocks and the synth's idle state allocate nothing.
    func testSleepingAndWakingAllocateNothing() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter needs glibc") }
        #if DEBUG
        throw XCTSkip("counts are for release builds (debug Swift allocates lazily); `make test` runs release")
        #endif
        let plan = try RackBuilding.plan(Self.rack(delay: 0.05, feedback: 10, decay: 0.1), maxFrames: 256)
        let engine = RenderEngine(plan: plan)
        let driver = EngineDriver(engine: engine)
        let tone = Self.voice(256)
        let silence = [Float](repeating: 0, count: 256)
        let synth = try XCTUnwrap(plan.unitIndex("synth"))
        driver.render(frameCount: 256)
        alloc_counter_start()
        for block in 0..<3000 {
            let sounding = block % 200 < 30
            (sounding ? tone : silence).withUnsafeBufferPointer { plan.hostInput[0].update(from: $0.baseAddress!, count: 256) }
            if block % 200 == 100 {
                driver.push(.midi(.noteOn(channel: 0, note: 64, velocity: 90), toUnit: synth, at: engine.sampleTime + 33))
                driver.push(.midi(.noteOff(channel: 0, note: 64, velocity: 0), toUnit: synth, at: engine.sampleTime + 5000))
            }
            driver.render(frameCount: block % 3 == 0 ? 256 : 101)
        }
        let allocations = alloc_counter_stop()
        XCTAssertEqual(allocations, 0, "the render loop allocated \(allocations) times in 3000 blocks")
        XCTAssertGreaterThan(engine.sleepCounts.sleeps, 20)
        XCTAssertGreaterThan(engine.sleepCounts.wakes, 20)
    }
}
