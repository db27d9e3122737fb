// Benchmark driver for the channel-strip units (`eq`, `dynamics`, `deesser`) against C -O2
// builds of the same algorithms (ref_strip.c). Never part of the product; built by run.sh.
//
//   strip-bench swift|c|none UNIT SECONDS     one pass (for callgrind: `none` is the set-up alone)
//   strip-bench time UNIT SECONDS ROUNDS      interleaved rounds, median thread-CPU ns per sample
//   strip-bench write PATH SECONDS            the input as raw 32-bit float (for sox)
//
// UNIT: eq | dynamics | deesser | strip (eq -> dynamics -> deesser). Mono, 48 kHz, 64-frame
// blocks, in memory. The units run as the engine runs them: parameters through a
// ParameterBank every block, nothing moving. The EQ's five bands all work (high-pass 90 Hz,
// peaks −3/+2/+3 dB at 300 Hz/1 kHz/3 kHz, high shelf +2 dB at 10 kHz), so none is skipped.
import Glibc
import StageCore
import StageUnits

let sr = 48000.0
let blockFrames = 64

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

let args = CommandLine.arguments
guard args.count >= 4, let seconds = Int(args[3]) else {
    print("usage: strip-bench swift|c|none|time UNIT SECONDS [ROUNDS] | write PATH SECONDS")
    exit(2)
}
let frames = seconds * 48000

/// A voice-like test signal: a 140 Hz harmonic vowel and a noise band, under a 3 Hz
/// syllable envelope, with a quiet gap every second (so the gate works), peak about −6 dBFS.
let input = UnsafeMutablePointer<Float>.allocate(capacity: frames)
var seed: UInt32 = 12345
for i in 0..<frames {
    seed = seed &* 1_664_525 &+ 1_013_904_223
    let t = Float(i) / 48000
    let env = (0.5 + 0.5 * sinf(2 * Float.pi * 3 * t)) * (i % 48000 < 40000 ? 1 : 0.001)
    var v: Float = 0
    for h in 1...8 { v += sinf(2 * Float.pi * 140 * Float(h) * t) / Float(h) }
    input[i] = env * (0.2 * v + 0.05 * (Float(seed >> 8) / 8_388_608.0 - 1))
}
let scratch = UnsafeMutablePointer<Float>.allocate(capacity: frames)
scratch.initialize(repeating: 0, count: frames)
let output = UnsafeMutablePointer<Float>.allocate(capacity: frames)
output.initialize(repeating: 0, count: frames)

if args[1] == "write" {
    let f = fopen(args[2], "wb")!
    fwrite(input, 4, frames, f)
    fclose(f)
    exit(0)
}

/// One unit driven as the engine drives it, from `src` to `dst`.
final class SwiftStage {
    let unit: any RackUnit
    let bank: ParameterBank
    let inPtr = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
    let outPtr = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
    let buses = UnsafeMutablePointer<AudioBus>.allocate(capacity: 2)
    let safety = UnsafeMutablePointer<SafetyCounters>.allocate(capacity: 1)
    let noEvents = UnsafeMutablePointer<UnitEvent>.allocate(capacity: 1)
    var sampleTime: Int64 = 0

    init(_ type: any UnitType, _ params: [String: Float]) throws {
        let settings = UnitSettings()
        unit = try type.make(settings, UnitBuildContext(sampleRate: sr, hostInputChannels: 1))
        try unit.prepare(PrepareSpec(sampleRate: sr, maxFrames: blockFrames, inputChannels: [1], outputChannels: [1]))
        let specs = type.parameters(settings)
        bank = ParameterBank(specs: specs, sampleRate: sr, maxFrames: blockFrames)
        for (id, v) in params { bank.setImmediately(specs.firstIndex { $0.id == id }!, v) }
        inPtr.initialize(to: input)
        outPtr.initialize(to: output)
        buses.initialize(to: AudioBus(channelPointers: UnsafePointer(inPtr), channelCount: 1))
        (buses + 1).initialize(to: AudioBus(channelPointers: UnsafePointer(outPtr), channelCount: 1))
        safety.initialize(to: SafetyCounters())
    }

    func block(_ src: UnsafeMutablePointer<Float>, _ dst: UnsafeMutablePointer<Float>, _ n: Int) {
        inPtr[0] = src
        outPtr[0] = dst
        bank.beginBlock()
        bank.fill(upTo: n)
        unit.render(
            RenderContext(
                frameCount: n, sampleTime: sampleTime, sampleRate: sr, tempo: 120,
                inputs: UnsafeBufferPointer(start: buses, count: 1), outputs: UnsafeBufferPointer(start: buses + 1, count: 1),
                parameters: bank.renderValues, events: UnsafeBufferPointer(start: noEvents, count: 0),
                hostInput: buses[0], hostOutput: buses[1], safety: safety))
        sampleTime += Int64(n)
    }
}

let eqParams: [String: Float] = ["gain2": -3, "gain3": 2, "gain4": 3, "gain5": 2]

/// Runs `unit` over the whole input, 64 frames at a time, in Swift or in C.
func makePass(_ mode: String, _ unit: String) throws -> () -> Void {
    let stages: [String] = unit == "strip" ? ["eq", "dynamics", "deesser"] : [unit]
    if mode == "none" { return {} }
    if mode == "swift" {
        let units = try stages.map { name -> SwiftStage in
            switch name {
            case "eq": return try SwiftStage(EQUnitType(), eqParams)
            case "dynamics": return try SwiftStage(DynamicsUnitType(), [:])
            default: return try SwiftStage(DeEsserUnitType(), [:])
            }
        }
        return {
            var f = 0
            while f < frames {
                let n = min(blockFrames, frames - f)
                var src = input + f
                for (k, u) in units.enumerated() {
                    let dst = (k % 2 == 0 ? output : scratch) + f
                    u.block(src, dst, n)
                    src = dst
                }
                f += n
            }
        }
    }
    let eq = ref_eq_new()!, dyn = ref_dyn_new()!, de = ref_deess_new()!
    return {
        var f = 0
        while f < frames {
            let n = min(blockFrames, frames - f)
            var src = UnsafePointer(input + f)
            for (k, name) in stages.enumerated() {
                let dst = (k % 2 == 0 ? output : scratch) + f
                switch name {
                case "eq": ref_eq_block(eq, src, dst, Int32(n))
                case "dynamics": ref_dyn_block(dyn, src, dst, Int32(n))
                default: ref_deess_block(de, src, dst, Int32(n))
                }
                src = UnsafePointer(dst)
            }
            f += n
        }
    }
}

let unit = args[2]
if args[1] != "time" {
    try makePass(args[1], unit)()
    exit(0)
}
let rounds = args.count > 4 ? Int(args[4]) ?? 11 : 11
let swiftPass = try makePass("swift", unit)
let cPass = try makePass("c", unit)
var ts = [Double](), tc = [Double]()
for round in 0...rounds {
    let t0 = now()
    swiftPass()
    let t1 = now()
    cPass()
    let t2 = now()
    if round > 0 {
        ts.append((t1 - t0) * 1e9 / Double(frames))
        tc.append((t2 - t1) * 1e9 / Double(frames))
    }
}
func median(_ x: [Double]) -> Double { x.sorted()[x.count / 2] }
let ratios = zip(ts, tc).map { $0 / $1 }
print("\(unit): swift \(Double(Int(median(ts) * 100)) / 100) ns/sample, c \(Double(Int(median(tc) * 100)) / 100) ns/sample, ratio \(Double(Int(median(ratios) * 1000)) / 1000) (median of \(rounds) interleaved rounds, thread CPU)")
