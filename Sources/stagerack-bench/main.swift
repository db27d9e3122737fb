import CStageShim
import StageCore
import StageDrivers
import StageUnits

#if canImport(Glibc)
import Glibc
#endif

/// Benchmarks, release builds only: engine overhead against the cost of a rack's units.
///
///   stagerack-bench [RACK] [--block FRAMES] [--seconds S] [--chains N]
///   stagerack-bench --switches
///   stagerack-bench --lv2 URI [--block FRAMES] [--seconds S]   (LV2Benchmark.swift)
///   stagerack-bench --distribution [RACK...] [--blocks 32,64,128] [--seconds 600]
///   stagerack-bench --drift best|medium|fastest|copy [--block FRAMES] [--seconds S]
///   stagerack-bench --worst-cases [RACK] [--block 64] [--repeat 7]   (WorstCaseBenchmark.swift)
///
/// Renders RACK (default Benchmarks/default-rack-baseline.json, the frozen baseline: the
/// default rack as it was before the vocal strip) three ways on the same input, in one run:
/// the full engine; the same units called directly in plan order (no event queue, no
/// parameter smoothing, no adapters); and the direct calls timed one unit at a time.
/// Engine overhead = engine − direct. Prints real-time factor and ns per frame per unit.

func argument(_ name: String) -> String? {
    let a = CommandLine.arguments
    guard let i = a.firstIndex(of: name), i + 1 < a.count else { return nil }
    return a[i + 1]
}

var rackPath = CommandLine.arguments.dropFirst().first { !$0.hasPrefix("--") && Double($0) == nil } ?? "Benchmarks/default-rack-baseline.json"
// --chains N: a generated rack with N vocal chains (pitch → delay → reverb) in parallel.
if let n = Int(argument("--chains") ?? ""), n > 0 {
    var units = [#""mic": { "type": "input" }"#, #""out": { "type": "output" }"#, "\"mix\": { \"type\": \"mixer\", \"inputs\": \(n) }"]
    var connections = [#""mix -> out""#]
    for i in 1...n {
        units.append("\"p\(i)\": { \"type\": \"pitch\", \"params\": { \"pitch\": 300 } }")
        units.append("\"d\(i)\": { \"type\": \"delay\" }")
        units.append("\"r\(i)\": { \"type\": \"reverb\" }")
        connections.append("\"mic -> p\(i) -> d\(i) -> r\(i) -> mix:\(i)\"")
    }
    let text = "{ \"format\": 1, \"name\": \"\(n) vocal chains\", \"units\": { \(units.joined(separator: ", ")) }, \"connections\": [ \(connections.joined(separator: ", ")) ] }"
    rackPath = "/tmp/stagerack-bench-chains-\(n).json"
    text.withCString { p in
        guard let f = fopen(rackPath, "w") else {
            print("stagerack-bench: cannot write \(rackPath): \(String(cString: strerror(errno)))")
            exit(1)
        }
        fputs(p, f)
        fclose(f)
    }
}
let block = Int(argument("--block") ?? "") ?? 256
let seconds = Double(argument("--seconds") ?? "") ?? 20
let sampleRate = 48000.0
let registry = BenchRegistry.standard

stage_enable_flush_to_zero()
if let uri = argument("--lv2") {
    LV2Benchmark.run(uri: uri, block: block, seconds: seconds, registry: registry)
    exit(0)
}
if CommandLine.arguments.contains("--switches") {
    SwitchBenchmark.run(registry: registry)
    exit(0)
}
// --drift QUALITY: the drift compensator's cost (DriftBenchmark.swift).
if let quality = argument("--drift") {
    DriftBenchmark.run(quality: quality, block: block, seconds: seconds)
    exit(0)
}
// --distribution: render time per block (BlockTimeBenchmark.swift).
if CommandLine.arguments.contains("--distribution") {
    let racks = CommandLine.arguments.dropFirst().filter { $0.hasSuffix(".json") }
    let blocks = (argument("--blocks") ?? "32,64,128").split(separator: ",").compactMap { Int($0) }
    BlockTimeBenchmark.run(
        racks: racks.isEmpty ? ["racks/default.json", "racks/monitor.json"] : Array(racks), blocks: blocks,
        seconds: Double(argument("--seconds") ?? "") ?? 600, registry: registry)
    exit(0)
}
// --worst-cases: first blocks after start, first notes, a song switch (WorstCaseBenchmark.swift).
if CommandLine.arguments.contains("--worst-cases") {
    let rack = CommandLine.arguments.dropFirst().first { $0.hasSuffix(".json") } ?? "racks/default.json"
    WorstCaseBenchmark.run(
        rack: rack, block: Int(argument("--block") ?? "") ?? 64, repeats: max(1, Int(argument("--repeat") ?? "") ?? 7), registry: registry)
    exit(0)
}
let plan: RenderPlan
do {
    plan = try RackFiles.load(rackPath, registry: registry, options: GraphCompiler.Options(sampleRate: sampleRate, maxFrames: block))
} catch {
    print(error)
    exit(1)
}
let frames = Int(seconds * sampleRate)
let blocks = frames / block
// A voice-like input: a buzzy 150 Hz tone with vibrato and phrasing.
let voice: [Float] = (0..<(block * 64)).map { i in
    let t = Float(i) / Float(sampleRate)
    let f = 150 * (1 + 0.01 * sinf(2 * .pi * 5 * t))
    var s: Float = 0
    for h in 1...12 { s += sinf(2 * .pi * f * Float(h) * t) / Float(h) }
    return 0.2 * s
}

@MainActor func feedInput(_ b: Int) {
    let host = plan.hostInput
    voice.withUnsafeBufferPointer { v in
        let offset = (b % 64) * block
        for c in 0..<host.channelCount { host[c].update(from: v.baseAddress! + offset, count: block) }
    }
}

// A chord every half second for racks with a synth.
@MainActor func queueNotes(_ b: Int, engine: RenderEngine, mapper: MIDIMapper) {
    let t = Int64(b * block)
    let period = Int64(sampleRate / 2)
    if t % period < Int64(block) {
        let chord = (t / period) % 2 == 0 ? [60, 64, 67, 72] : [57, 60, 64, 69]
        let previous = (t / period) % 2 == 0 ? [57, 60, 64, 69] : [60, 64, 67, 72]
        for n in previous { mapper.handle(.noteOff(channel: 0, note: n), at: t) { _ = engine.events.push($0) } }
        for n in chord { mapper.handle(.noteOn(channel: 0, note: n, velocity: 90), at: t) { _ = engine.events.push($0) } }
    }
}

// 1. The full engine.
let engine = RenderEngine(plan: plan)
let mapper = MIDIMapper(plan: plan)
for b in 0..<16 { feedInput(b); queueNotes(b, engine: engine, mapper: mapper); engine.render(frameCount: block) }
engine.reset()
var start = threadCPUSeconds()
for b in 0..<blocks {
    feedInput(b)
    queueNotes(b, engine: engine, mapper: mapper)
    engine.render(frameCount: block)
}
let engineSeconds = threadCPUSeconds() - start

// 2. The same again with every unit's render timed inside the engine: what is not spent in
// units is the engine's own work (event queue, parameter smoothing, adapters, plan walk),
// plus the clock reads themselves (so the overhead is, if anything, overstated).
engine.reset()
engine.measuresSteps = true
for s in 0..<plan.steps.count { engine.stepNanoseconds[s] = 0 }
start = threadCPUSeconds()
for b in 0..<blocks {
    feedInput(b)
    queueNotes(b, engine: engine, mapper: mapper)
    engine.render(frameCount: block)
}
let instrumentedSeconds = threadCPUSeconds() - start
let unitNanoseconds = (0..<plan.steps.count).reduce(0.0) { $0 + Double(engine.stepNanoseconds[$1]) }

func fmt(_ x: Double, _ digits: Int = 2) -> String {
    let p = pow(10, Double(digits))
    return formatNumber((x * p).rounded() / p)
}
let totalFrames = Double(blocks * block)
print("rack \(rackPath), \(plan.units.count) units, block \(block), \(fmt(totalFrames / sampleRate, 1)) s of audio at 48 kHz")
print("engine:        \(fmt(engineSeconds * 1e9 / totalFrames)) ns/frame, \(fmt(totalFrames / sampleRate / engineSeconds, 0))x real time, \(fmt(engineSeconds * sampleRate / totalFrames * 100, 3)) % of one core")
let periodMicroseconds = Double(block) / sampleRate * 1e6
print("per period of \(block) frames (\(fmt(periodMicroseconds, 0)) µs): render takes \(fmt(engineSeconds * 1e6 / Double(blocks), 1)) µs = \(fmt(engineSeconds / Double(blocks) * 1e6 / periodMicroseconds * 100, 2)) % of the period")
let overhead = instrumentedSeconds * 1e9 - unitNanoseconds
print("units:         \(fmt(unitNanoseconds / totalFrames)) ns/frame (timed one by one inside the engine)")
print("engine overhead: \(fmt(overhead / totalFrames)) ns/frame = \(fmt(overhead / unitNanoseconds * 100, 1)) % of the units' cost (target < 5 %)")
for (s, step) in plan.steps.enumerated() {
    print("  \(plan.unitIDs[step.unit]) (\(plan.unitTypes[step.unit])): \(fmt(Double(engine.stepNanoseconds[s]) / totalFrames)) ns/frame")
}
