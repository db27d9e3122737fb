import StageCore
import StageControl
import StageDrivers

#if canImport(Glibc)
import Glibc
#endif

/// `stagerack-bench --worst-cases [RACK] [--block 64] [--repeat 7]`: the render thread's
/// worst blocks, against the steady-state block: the first blocks after start (cold, and
/// after `play`'s warm-up block), the first notes of a SoundFont program, and the blocks
/// after a song switch (the new rack warmed as `PresetSwitcher` does, `RenderEngine.warmUp`:
/// one silent render on the control thread, then reset; and as loaded, without it).
///
/// How, on a busy machine: every block is timed with the thread's CPU clock
/// (CLOCK_THREAD_CPUTIME_ID: time the thread is descheduled is not in it), and every
/// scenario runs `--repeat` times from scratch (fresh plans, fresh players); per block index
/// the minimum over the runs is kept. Another process or the hypervisor rarely hits the
/// same block of every run, while a cost the code pays (cold memory, lazy set-up) is in
/// every run. The first run's figure is printed too: the process's very first touch.
/// Thread: everything here runs on the main thread (it plays control and render thread).
enum WorstCaseBenchmark {
    static let rate = 48000.0

    /// A live-like session: a player, a mapper for the playing plan, host buffers.
    @MainActor final class Session {
        let player: RackPlayer
        var mapper: MIDIMapper
        var generation: UInt32
        let block: Int
        let input: BusStorage
        let output: BusStorage
        let voice: [Float]
        var blockIndex = 0

        init(plan: RenderPlan, block: Int, voice: [Float]) {
            player = RackPlayer(engine: RenderEngine(plan: plan))
            mapper = MIDIMapper(plan: plan)
            generation = plan.generation
            self.block = block
            self.voice = voice
            input = BusStorage(bufferCount: 1, maxFrames: block)
            output = BusStorage(bufferCount: max(2, plan.outputChannelCount), maxFrames: block)
        }

        /// Queues note-offs then note-ons at this block's first frame (the MIDI thread's part).
        func notes(on: [Int], off: [Int] = []) {
            let t = player.sampleTime
            let g = generation
            let tag: (EngineEvent) -> Void = { [player] e in
                var x = e
                x.generation = g
                _ = player.events.push(x)
            }
            for n in off { _ = mapper.handle(.noteOff(channel: 0, note: n), at: t, emit: tag) }
            for n in on { _ = mapper.handle(.noteOn(channel: 0, note: n, velocity: 90), at: t, emit: tag) }
        }

        /// Renders one block (sung input or silence) and returns its thread CPU time in ns.
        func render(singing: Bool) -> UInt64 {
            let inBus = input.bus(first: 0, channels: 1)
            voice.withUnsafeBufferPointer { v in
                let offset = (blockIndex % 64) * block
                for i in 0..<block { inBus[0][i] = singing ? v[offset + i] : 0 }
            }
            let outBus = output.bus(first: 0, channels: output.bufferCount)
            let c0 = BlockTimeBenchmark.threadCPUNanoseconds()
            player.render(frameCount: block, input: inBus, output: outBus)
            let c1 = BlockTimeBenchmark.threadCPUNanoseconds()
            blockIndex += 1
            _ = player.collectRetired()  // the control thread's part, not timed
            return c1 &- c0
        }

        /// Hands a new rack to the render thread as `PresetSwitcher` does: `.warmUp` first
        /// renders one silent block of it here (the control thread) and resets it
        /// (`RenderEngine.warmUp`, what `PresetSwitcher` does); `.none` hands it over as loaded.
        @discardableResult func switchTo(_ plan: RenderPlan, warm: Warm) -> RenderEngine {
            let engine = RenderEngine(plan: plan)
            if warm == .warmUp { engine.warmUp() }
            _ = player.submit(engine)
            mapper = MIDIMapper(plan: plan)
            generation = plan.generation
            return engine
        }
    }

    enum Warm { case none, warmUp }

    /// Per block index, the minimum over the runs; and the first run.
    struct Runs {
        var first: [UInt64] = []
        var best: [UInt64] = []
        mutating func add(_ times: [UInt64]) {
            if first.isEmpty {
                first = times
                best = times
            } else {
                for i in best.indices { best[i] = min(best[i], times[i]) }
            }
        }
    }

    static let chordA = [60, 64, 67, 72]
    static let chordB = [57, 60, 64, 69]

    @MainActor static func run(rack: String, block: Int, repeats: Int, registry: UnitRegistry) {
        let voice: [Float] = (0..<(block * 64)).map { i in
            let t = Float(i) / Float(rate)
            let f = 150 * (1 + 0.01 * sinf(2 * .pi * 5 * t))
            var s: Float = 0
            for h in 1...8 { s += sinf(2 * .pi * f * Float(h) * t) / Float(h) }
            return 0.2 * s
        }
        let options = GraphCompiler.Options(sampleRate: rate, maxFrames: block)
        func load(_ path: String) -> RenderPlan? {
            do { return try RackFiles.load(path, registry: registry, options: options) } catch {
                print("\(path): \(error)")
                return nil
            }
        }
        let period = Double(block) / rate * 1e9
        let half = Int(rate / 2) / block  // blocks in half a second

        // 1. Start and the first notes: sung input from block 0, chords every half second from
        // block `half` (A, B, A, B...: the first A and B are the program's first notes).
        let startBlocks = 10 * half
        var cold = Runs()
        var played = Runs()
        for r in 0..<(2 * repeats) {
            guard let plan = load(rack) else { return }
            let s = Session(plan: plan, block: block, voice: voice)
            let asPlay = r % 2 == 1
            if asPlay {  // play: the rack warmed before the audio thread gets it (RackLoader: a block, then reset)
                _ = s.render(singing: false)
                s.player.resetCurrent()
            }
            var times = [UInt64](repeating: 0, count: startBlocks)
            for b in 0..<startBlocks {
                if b >= half && b % half == 0 {
                    let k = b / half
                    s.notes(on: k % 2 == 1 ? chordA : chordB, off: k == 1 ? [] : (k % 2 == 1 ? chordB : chordA))
                }
                times[b] = s.render(singing: true)
            }
            if asPlay { played.add(times) } else { cold.add(times) }
        }
        // Steady state: the median of the last half (voice and chords sounding, no first notes).
        let steadyWindow = Array(cold.best[(startBlocks / 2)...]).sorted()
        let steady = Double(steadyWindow[steadyWindow.count / 2])
        func figure(_ label: String, _ best: UInt64, _ first: UInt64? = nil) {
            let x = Double(best)
            var line = "\(label): \(fmt(x / 1000, 1)) µs = \(fmt(x / steady, 1))× steady = \(fmt(x / period * 100, 1)) % of the period"
            if let first { line += " (first run \(fmt(Double(first) / 1000, 1)) µs = \(fmt(Double(first) / steady, 1))×)" }
            print(line)
        }
        print("\(rack) at \(block) frames (\(fmt(period / 1000, 0)) µs period), thread CPU time, minimum of \(repeats) runs per block")
        figure("steady block (median of \(steadyWindow.count) blocks, voice and chords)", UInt64(steady))
        print("  steady window p99.9 \(fmt(Double(steadyWindow[steadyWindow.count * 999 / 1000]) / steady, 1))×, max \(fmt(Double(steadyWindow.last!) / steady, 1))× (chord blocks included; the noise left after the minimum)")
        for b in 0..<3 { figure("start, block \(b), no warm-up", cold.best[b], cold.first[b]) }
        for b in 0..<3 { figure("start, block \(b) after play's warm-up block", played.best[b], played.first[b]) }
        let playsNotes = load(rack).map { !$0.midiReceivers.isEmpty } ?? false
        if playsNotes {
            printFirstNotes(cold, half: half, figure: figure)
        } else {
            print("(no unit plays MIDI notes: no first-notes figures)")
        }
        runSwitches(rack: rack, block: block, repeats: repeats, voice: voice, load: load) { figure($0, $1, $2) }
    }

    /// 1b. The chords' blocks of the start runs: the program's first notes and later ones.
    static func printFirstNotes(_ cold: Runs, half: Int, figure: (String, UInt64, UInt64?) -> Void) {
        figure("first notes: chord A's first note-ons (block \(half))", cold.best[half], cold.first[half])
        figure("first notes: chord B's first note-ons (block \(2 * half))", cold.best[2 * half], cold.first[2 * half])
        figure("same chord A again (block \(3 * half))", cold.best[3 * half], cold.first[3 * half])
        figure("same chord A, fifth time (block \(9 * half))", cold.best[9 * half], cold.first[9 * half])
        let afterFirst = cold.best[(half + 1)..<(half + 8)].max()!
        figure("worst of the 7 blocks after chord A's first note-ons", afterFirst, nil)
    }

    /// 2. The switch runs, for each way of handing the new rack over.
    @MainActor static func runSwitches(
        rack: String, block: Int, repeats: Int, voice: [Float], load: (String) -> RenderPlan?,
        figure: (String, UInt64, UInt64?) -> Void
    ) {
        let half = Int(rate / 2) / block
        // 2. A song switch: the rack plays (voice, a held chord) for 2 s, then the same rack
        // file freshly loaded takes over and the old one rings out as a tail; the new rack's
        // first chord comes 20 blocks later (after the crossfade), not in the switch block.
        let before = 4 * half
        let after = 16 * half
        let notesAt = before + 20
        // The last mode holds no chord before the switch: what releasing the old rack's notes costs.
        for (warm, held) in [(Warm.warmUp, true), (.none, true), (.warmUp, false)] {
            var runs = Runs()
            var tailEnd = 0
            for _ in 0..<repeats {
                guard let plan = load(rack), let next = load(rack) else { return }
                let s = Session(plan: plan, block: block, voice: voice)
                _ = s.render(singing: false)
                s.player.resetCurrent()
                var times = [UInt64](repeating: 0, count: before + after)
                for b in 0..<(before + after) {
                    if b == half && held { s.notes(on: chordA) }
                    if b == before { s.switchTo(next, warm: warm) }
                    if b == notesAt { s.notes(on: chordB) }
                    let ended = s.player.tailsEnded.load(ordering: .relaxed)
                    times[b] = s.render(singing: true)
                    if b >= before && ended == 0 && s.player.tailsEnded.load(ordering: .relaxed) > 0 { tailEnd = b - before }
                }
                runs.add(times)
            }
            let label = [Warm.none: "switch, new rack as loaded (no warm-up)", .warmUp: "switch, as PresetSwitcher does (warmUp)"][warm]!
                + (held ? "" : ", no notes held")
            figure("\(label): the switch block", runs.best[before], runs.first[before])
            figure("\(label): next block", runs.best[before + 1], runs.first[before + 1])
            let fade = Int(0.02 * rate) / block
            let crossfade = runs.best[before..<(before + fade)].sorted()
            figure("\(label): median of the \(fade)-block crossfade", crossfade[crossfade.count / 2], nil)
            let tail = runs.best[(before + fade)..<(before + max(fade + 1, tailEnd))].sorted()
            figure("\(label): its first chord (block \(notesAt - before) after)", runs.best[notesAt], runs.first[notesAt])
            figure("\(label): median while the old rack rings out (\(fmt(Double(tailEnd * block) / rate, 2)) s)", tail[tail.count / 2], nil)
        }
        for (warm, held) in [(Warm.none, true), (.warmUp, true), (.warmUp, false)] {
            switchBreakdown(rack: rack, block: block, repeats: repeats, voice: voice, load: load, warm: warm, held: held)
        }
    }

    /// Where the switch block's time goes: each unit's render (wall clock, inside the engine)
    /// in the old and the new rack, in the switch block and in the block after; minimum of
    /// `repeats` runs. A separate run: the clock reads are not in the figures above.
    @MainActor static func switchBreakdown(
        rack: String, block: Int, repeats: Int, voice: [Float], load: (String) -> RenderPlan?, warm: Warm, held: Bool
    ) {
        var best: [String: (UInt64, UInt64)] = [:]
        var order: [String] = []
        for _ in 0..<repeats {
            guard let plan = load(rack), let next = load(rack) else { return }
            let s = Session(plan: plan, block: block, voice: voice)
            let old = s.player.current
            for b in 0..<100 {
                if b == 10 && held { s.notes(on: chordA) }
                _ = s.render(singing: true)
            }
            let engine = s.switchTo(next, warm: warm)
            for e in [old, engine] {
                e.measuresSteps = true
                for k in 0..<e.plan.steps.count { e.stepNanoseconds[k] = 0 }
            }
            var perBlock: [[String: UInt64]] = []
            for _ in 0..<2 {
                var row: [String: UInt64] = [:]
                let total = s.render(singing: true)
                for (name, e) in [("old", old), ("new", engine)] {
                    var sum: UInt64 = 0
                    for (k, step) in e.plan.steps.enumerated() {
                        let key = "\(name) \(e.plan.unitIDs[step.unit])"
                        row[key, default: 0] += e.stepNanoseconds[k]
                        sum += e.stepNanoseconds[k]
                        e.stepNanoseconds[k] = 0
                    }
                    row["\(name) (all units)"] = sum
                }
                row["block (thread CPU)"] = total
                perBlock.append(row)
            }
            for key in perBlock[0].keys {
                if !order.contains(key) { order.append(key) }
                let v = (perBlock[0][key]!, perBlock[1][key] ?? 0)
                let b = best[key] ?? (UInt64.max, UInt64.max)
                best[key] = (min(b.0, v.0), min(b.1, v.1))
            }
        }
        print("  where the switch block goes (\(warm == .none ? "as loaded" : "warmed")\(held ? "" : ", no notes held")), µs in the switch block / the next block:")
        for key in order.sorted() where best[key]!.0 >= 1500 || key.hasPrefix("block") {
            print("    \(key): \(fmt(Double(best[key]!.0) / 1000, 1)) / \(fmt(Double(best[key]!.1) / 1000, 1))")
        }
    }

    static func fmt(_ x: Double, _ digits: Int) -> String {
        let p = pow(10, Double(digits))
        return formatNumber((x * p).rounded() / p)
    }
}
