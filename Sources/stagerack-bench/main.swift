import CStageShim
import StageCore
import StageControl
import StageDrivers
import StageUnits

#if canImport(Glibc)
import Glibc
#endif

/// Benchmarks, release builds only: engine overhead against the cost of a rack's units.
///
///   stagerack-bench [RACK] [--block FRAMES] [--seconds S] [--chains N] [--rounds R] [--pass engine|units|none]
///   stagerack-bench --switches
///   stagerack-bench --lv2 URI [--block FRAMES] [--seconds S]   (LV2Benchmark.swift)
///   stagerack-bench --distribution [RACK...] [--blocks 32,64,128] [--seconds 600]
///   stagerack-bench --drift best|medium|fastest|copy [--block FRAMES] [--seconds S]
///   stagerack-bench --worst-cases [RACK] [--block 64] [--repeat 7]   (WorstCaseBenchmark.swift)
///
/// Renders RACK (default Benchmarks/default-rack-baseline.json, the frozen baseline: the
/// default rack as it was before the vocal strip) on the same input and notes two ways, in
/// one run: the engine pass (`RenderEngine.render`), and the same units run alone on the
/// same buffers (each unit's `render` called in plan order with the parameter values and
/// MIDI the engine gave it, only in the blocks where the engine rendered it: no event
/// queue, no smoothing, no adapters, no silence bookkeeping). Engine overhead = engine
/// pass − units alone: the lowest thread CPU time of `--rounds` (15) interleaved rounds of
/// each. `--pass engine|units` runs one pass once and prints nothing else, for callgrind
/// (Benchmarks/engine/run.sh: the two passes' instruction counts subtracted). Then each
/// unit in a units-alone pass of its own, for a breakdown.
///
/// (Until issue 27 the overhead was the instrumented engine pass minus its units timed one
/// by one inside it, with a clock read around each: not the engine pass's own work, and the
/// review saw it print −88 %.)

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
// The engine benchmark: 2 s of audio per pass unless --seconds says otherwise (short
// rounds, many of them: the lowest is the least disturbed by the machine's other work).
let frames = Int((Double(argument("--seconds") ?? "") ?? 2) * sampleRate)
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
// (`record`: each event also kept, as the unit it is for and its frame, for the units alone.)
@MainActor func queueNotes(_ b: Int, driver: EngineDriver, mapper: MIDIMapper, record: Bool) {
    let t = Int64(b * block)
    let period = Int64(sampleRate / 2)
    if t % period < Int64(block) {
        let chord = (t / period) % 2 == 0 ? [60, 64, 67, 72] : [57, 60, 64, 69]
        let previous = (t / period) % 2 == 0 ? [57, 60, 64, 69] : [60, 64, 67, 72]
        func send(_ e: EngineEvent) {
            _ = driver.push(e)
            if record && e.kind == .midi {
                blockNotes[b].append((Int(e.unit), UnitEvent(frameOffset: Int32(max(0, e.sampleTime - t)), message: e.message)))
            }
        }
        for n in previous { mapper.handle(.noteOff(channel: 0, note: n), at: t) { send($0) } }
        for n in chord { mapper.handle(.noteOn(channel: 0, note: n, velocity: 90), at: t) { send($0) } }
    }
}

// What the engine did, recorded once (untimed): the MIDI each unit got in each block and
// which units it rendered (a unit asleep on silence or unheard is not rendered: the units
// alone skip it too).
let unitCount = plan.units.count
let engine = RenderEngine(plan: plan)
let driver = EngineDriver(engine: engine)  // the events due injected before each block, as the RackPlayer does
let mapper = MIDIMapper(plan: plan)
var blockNotes: [[(unit: Int, event: UnitEvent)]] = Array(repeating: [], count: blocks)
var rendered = [Bool](repeating: false, count: blocks * unitCount)
@MainActor func enginePass(record: Bool) {
    engine.reset()
    for b in 0..<blocks {
        feedInput(b)
        queueNotes(b, driver: driver, mapper: mapper, record: record)
        if record {
            let before = (0..<unitCount).map { engine.renderCount(unit: $0) }
            driver.render(frameCount: block)
            for u in 0..<unitCount { rendered[b * unitCount + u] = engine.renderCount(unit: u) != before[u] }
        } else {
            driver.render(frameCount: block)
        }
    }
}
for b in 0..<16 { feedInput(b); queueNotes(b, driver: driver, mapper: mapper, record: false); driver.render(frameCount: block) }
enginePass(record: true)

// The units alone: the same buffers, the parameter values the engine left, the same MIDI.
let unitEvents = UnsafeMutablePointer<UnitEvent>.allocate(capacity: 256)
let safety = UnsafeMutablePointer<SafetyCounters>.allocate(capacity: 1)
safety.initialize(to: SafetyCounters())
@MainActor func unitsPass(only: Int? = nil) {
    plan.resetUnits()
    for b in 0..<blocks {
        feedInput(b)
        let notes = blockNotes[b]
        for (s, step) in plan.steps.enumerated() where rendered[b * unitCount + step.unit] && (only == nil || only == s) {
            var n = 0
            for note in notes where note.unit == step.unit && n < 256 {
                unitEvents[n] = note.event
                n += 1
            }
            let context = RenderContext(
                frameCount: block, sampleTime: Int64(b * block), sampleRate: sampleRate, tempo: 120, inputs: step.inputs,
                outputs: step.outputs, parameters: plan.parameters[step.unit].renderValues,
                events: UnsafeBufferPointer(start: unitEvents, count: n), hostInput: plan.hostInput, hostOutput: step.hostOutput,
                safety: safety)
            plan.units[step.unit].render(context)
        }
    }
}

func fmt(_ x: Double, _ digits: Int = 2) -> String {
    let p = pow(10, Double(digits))
    return formatNumber((x * p).rounded() / p)
}
switch argument("--pass") {
case "none":  // what both passes below share (loading, recording): subtracted by Benchmarks/engine/run.sh
    exit(0)
case "engine":
    enginePass(record: false)
    exit(0)
case "units":
    unitsPass()
    exit(0)
case nil: break
case let other?:
    print("--pass \(other): engine, units or none")
    exit(2)
}

// Interleaved rounds; the lowest CPU time of each pass (the least disturbed by the machine).
let rounds = max(1, Int(argument("--rounds") ?? "") ?? 15)
var engineSeconds = Double.infinity
var unitSeconds = Double.infinity
for _ in 0..<rounds {
    var start = threadCPUSeconds()
    enginePass(record: false)
    engineSeconds = min(engineSeconds, threadCPUSeconds() - start)
    start = threadCPUSeconds()
    unitsPass()
    unitSeconds = min(unitSeconds, threadCPUSeconds() - start)
}
// Each unit alone in a pass of its own (its inputs hold what the last full pass left),
// less a pass that renders nothing (the loop and the input copy).
@MainActor func lowestPass(only: Int) -> Double {
    var best = Double.infinity
    for _ in 0..<3 {
        let start = threadCPUSeconds()
        unitsPass(only: only)
        best = min(best, threadCPUSeconds() - start)
    }
    return best
}
let emptyPass = lowestPass(only: -1)
let stepSeconds: [Double] = plan.steps.indices.map { max(0, lowestPass(only: $0) - emptyPass) }

let totalFrames = Double(blocks * block)
let skipped = rendered.lazy.filter { !$0 }.count
print("rack \(rackPath), \(plan.units.count) units, block \(block), \(fmt(totalFrames / sampleRate, 1)) s of audio at 48 kHz, lowest of \(rounds) rounds")
print("engine:        \(fmt(engineSeconds * 1e9 / totalFrames)) ns/frame, \(fmt(totalFrames / sampleRate / engineSeconds, 0))x real time, \(fmt(engineSeconds * sampleRate / totalFrames * 100, 3)) % of one core")
let periodMicroseconds = Double(block) / sampleRate * 1e6
print("per period of \(block) frames (\(fmt(periodMicroseconds, 0)) µs): render takes \(fmt(engineSeconds * 1e6 / Double(blocks), 1)) µs = \(fmt(engineSeconds / Double(blocks) * 1e6 / periodMicroseconds * 100, 2)) % of the period")
print("units alone:   \(fmt(unitSeconds * 1e9 / totalFrames)) ns/frame (the same units on the same buffers, called directly\(skipped > 0 ? "; the \(skipped) unit-blocks the engine skipped, unheard or asleep, skipped here too" : ""))")
let overhead = engineSeconds - unitSeconds
print("engine overhead: \(fmt(overhead * 1e9 / totalFrames)) ns/frame, \(fmt(overhead * 1e9 / Double(blocks), 0)) ns a block = \(fmt(overhead / engineSeconds * 100, 1)) % of the engine pass (engine pass − units alone)")
print("each unit in a pass of its own, less an empty pass (lowest of 3; a breakdown, not used above):")
for (s, step) in plan.steps.enumerated() {
    print("  \(plan.unitIDs[step.unit]) (\(plan.unitTypes[step.unit])): \(fmt(stepSeconds[s] * 1e9 / totalFrames)) ns/frame")
}
