import StageCore
import StageControl
import StageDrivers

#if canImport(Glibc)
import Glibc
#endif

/// `stagerack-bench --distribution [RACK...] [--blocks 32,64,128] [--seconds S]`: the
/// distribution of render time per block (median, 99.9th percentile, max) as a share of
/// the period, rendered as live renders (a `RackPlayer` with a sung-like input and chords
/// every half second), for each rack and block size. Two clocks per block: the thread's CPU
/// time (the render's own cost: preemption by other processes is not in it) and the wall
/// time (what this machine gave, other builds included). Not real time: as fast as it runs.
enum BlockTimeBenchmark {
    struct Figures {
        var median: Double
        var p999: Double
        var max: Double
        var maxBlock: Int
    }

    static func figures(_ nanoseconds: [UInt64]) -> Figures {
        let sorted = nanoseconds.sorted()
        let worst = nanoseconds.indices.max { nanoseconds[$0] < nanoseconds[$1] } ?? 0
        return Figures(
            median: Double(sorted[sorted.count / 2]), p999: Double(sorted[min(sorted.count - 1, sorted.count * 999 / 1000)]),
            max: Double(sorted.last ?? 0), maxBlock: worst)
    }

    @MainActor static func run(racks: [String], blocks: [Int], seconds: Double, registry: UnitRegistry) {
        let rate = 48000.0
        print("render time per block, \(formatNumber(seconds)) s of audio each, as a share of the period (median / p99.9 / max)")
        for path in racks {
            for block in blocks {
                let plan: RenderPlan
                do {
                    plan = try RackFiles.load(path, registry: registry, options: GraphCompiler.Options(sampleRate: rate, maxFrames: block))
                } catch {
                    print("\(path): \(error)")
                    continue
                }
                let (cpu, wall) = measure(plan, block: block, count: Int(seconds * rate) / block)
                let period = Double(block) / rate * 1e9
                func share(_ f: Figures) -> String {
                    "\(pct(f.median / period)) / \(pct(f.p999 / period)) / \(pct(f.max / period)) % (max at block \(f.maxBlock))"
                }
                print("\(path) at \(block) frames (\(formatNumber((period / 1e4).rounded() / 100)) ms): cpu \(share(cpu)); wall \(share(wall))")
            }
        }
    }

    static func pct(_ x: Double) -> String { formatNumber((x * 1000).rounded() / 10) }

    /// Renders `count` blocks as live does; returns the CPU and wall time distributions.
    @MainActor static func measure(_ plan: RenderPlan, block: Int, count: Int) -> (Figures, Figures) {
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let mapper = MIDIMapper(plan: plan)
        let input = BusStorage(bufferCount: 1, maxFrames: block)
        let output = BusStorage(bufferCount: plan.outputChannelCount, maxFrames: block)
        let inBus = input.bus(first: 0, channels: 1)
        let outBus = output.bus(first: 0, channels: plan.outputChannelCount)
        var cpu = [UInt64](repeating: 0, count: count)
        var wall = [UInt64](repeating: 0, count: count)
        var phase = 0.0
        for b in 0..<count {
            // A sung-like input: a buzzy 150 Hz tone with vibrato, two seconds on, one off.
            let singing = (b * block / 48000) % 3 != 2
            for i in 0..<block {
                let t = Double(b * block + i) / 48000
                phase += 2 * .pi * 150 * (1 + 0.01 * sin(2 * .pi * 5 * t)) / 48000
                var s = 0.0
                if singing { for h in 1...8 { s += sin(phase * Double(h)) / Double(h) } }
                inBus[0][i] = Float(0.2 * s)
            }
            // Chords every half second.
            let t = Int64(b * block)
            if t % 24000 < Int64(block) {
                let chord = (t / 24000) % 2 == 0 ? [60, 64, 67, 72] : [57, 60, 64, 69]
                let previous = (t / 24000) % 2 == 0 ? [57, 60, 64, 69] : [60, 64, 67, 72]
                let tag: (EngineEvent) -> Void = { e in
                    var x = e
                    x.generation = plan.generation
                    _ = player.events.push(x)
                }
                for n in previous { _ = mapper.handle(.noteOff(channel: 0, note: n), at: t, emit: tag) }
                for n in chord { _ = mapper.handle(.noteOn(channel: 0, note: n, velocity: 90), at: t, emit: tag) }
            }
            let c0 = threadCPUNanoseconds()
            let w0 = monotonicNanoseconds()
            player.render(frameCount: block, input: inBus, output: outBus)
            wall[b] = monotonicNanoseconds() &- w0
            cpu[b] = threadCPUNanoseconds() &- c0
        }
        return (figures(cpu), figures(wall))
    }

    static func threadCPUNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
