import StageCore
import StageLV2

#if canImport(Glibc)
import Glibc
#endif

/// `stagerack-bench --lv2 URI [--block FRAMES] [--seconds S]`: renders the rack
/// mic → lv2 URI (its defaults) → out through the engine, and the same rack without the
/// plugin, interleaved; prints the thread-CPU cost per block of each and their difference
/// (the plugin and its host inside the engine). Benchmarks/lv2/run.sh runs it under
/// callgrind too, to split that difference into the plugin's own instructions and the
/// host's (`LV2Unit.render` minus the plugin's library). Thread: main.
enum LV2Benchmark {
    static func run(uri: String, block: Int, seconds: Double, registry: UnitRegistry) {
        func rack(_ withPlugin: Bool) -> String {
            let fx = withPlugin ? "\"fx\": { \"type\": \"lv2\", \"plugin\": \"\(uri)\" }," : ""
            let chain = withPlugin ? "mic -> fx -> out" : "mic -> out"
            return "{ \"format\": 2, \"units\": { \"mic\": { \"type\": \"input\" }, \(fx) \"out\": { \"type\": \"output\" } }, "
                + "\"connections\": [ \"\(chain)\" ] }"
        }
        let plans: [RenderPlan]
        do {
            plans = try [true, false].map { p in
                try GraphCompiler(registry: registry).compile(
                    try RackReader(registry: registry).read(text: rack(p), file: uri),
                    options: GraphCompiler.Options(sampleRate: 48000, maxFrames: block, hostInputChannels: 1))
            }
        } catch {
            print("\(error)")
            exit(1)
        }
        let engines = plans.map { RenderEngine(plan: $0) }
        let blocks = max(1, Int(seconds * 48000) / block)
        let rounds = 5
        var cpu: [[Double]] = [[], []]
        for _ in 0..<rounds {
            for (k, engine) in engines.enumerated() {
                let input = plans[k].hostInput[0]
                let t0 = threadCPU()
                for b in 0..<blocks / rounds {
                    for i in 0..<block { input[i] = 0.2 * sinf(Float((b * block + i) % 48000) * 0.0196) }
                    engine.render(frameCount: block)
                }
                cpu[k].append((threadCPU() - t0) / Double(blocks / rounds))
            }
        }
        let median = cpu.map { $0.sorted()[rounds / 2] * 1e9 }
        print("lv2 \(uri): block \(block), \(blocks) blocks per rack (\(rounds) interleaved rounds)")
        print("rack with the plugin:    \(formatNumber(median[0])) ns per block (thread CPU, median)")
        print("rack without it:         \(formatNumber(median[1])) ns per block")
        print("the lv2 unit (host + plugin): \(formatNumber(median[0] - median[1])) ns per block")
    }

    static func threadCPU() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }
}
