// Benchmark driver for StageRack's delay unit against C -O2 references, side by side in
// one process (never part of the product). Built by run.sh.
//
//   delay-bench SECONDS ROUNDS CHANNELS [BLOCK]
//
// 48 kHz, 64-frame blocks (or BLOCK), input and output in memory. Each round runs, on the same input:
//   swift        our `delay` unit, defaults (350 ms, 30 %, 6 kHz, 20 %), nothing moving,
//                parameters through a ParameterBank every block, as the engine does
//   swift-unit   the same, the unit's render alone: the bank is filled once (its steady
//                values stay valid), so the engine's per-block parameter work is left out
//   swift-moving the same with delayTime changing every 100 ms (a crossfade 40 % of the time)
//   c-plain      C feedback delay: integer tap, feedback, wet/dry (PEERS.md's reference)
//   c-same       our algorithm (low-pass in the loop, saturation, flush) written plainly in C
// and prints, per contestant, the median ns per sample (per channel-sample) of thread CPU
// time, and the median of the per-round ratios to c-plain and c-same.
import Glibc
import StageCore
import StageUnits

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

let args = CommandLine.arguments
if args.count < 4 || Int(args[1]) == nil || Int(args[2]) == nil || Int(args[3]) == nil {
    print("usage: delay-bench SECONDS ROUNDS CHANNELS")
    exit(2)
}
let seconds = Int(args[1])!
let rounds = Int(args[2])!
let chans = Int(args[3])!
let sr = 48000.0
let block = args.count > 4 ? Int(args[4]) ?? 64 : 64
let frames = seconds * 48000

// Noise with a 3 Hz syllable-like envelope, peak about −6 dBFS.
let input = UnsafeMutablePointer<Float>.allocate(capacity: frames)
var seed: UInt32 = 12345
for i in 0..<frames {
    seed = seed &* 1_664_525 &+ 1_013_904_223
    let env = 0.5 + 0.5 * sinf(2 * Float.pi * 3 * Float(i) / 48000)
    input[i] = env * 0.5 * (Float(seed >> 8) / 8_388_608.0 - 1)
}
let output = UnsafeMutablePointer<Float>.allocate(capacity: frames * chans)
output.initialize(repeating: 0, count: frames * chans)
let inPtrs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: chans)
let outPtrs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: chans)
inPtrs.initialize(repeating: input, count: chans)
outPtrs.initialize(repeating: output, count: chans)

/// Our unit, driven as the engine drives it.
final class SwiftRunner {
    let unit: any RackUnit
    let bank: ParameterBank
    let buses = UnsafeMutablePointer<AudioBus>.allocate(capacity: 2)
    let host = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
    let safety = UnsafeMutablePointer<SafetyCounters>.allocate(capacity: 1)
    let noEvents = UnsafeMutablePointer<UnitEvent>.allocate(capacity: 1)
    let moving: Bool
    let bankEveryBlock: Bool
    var sampleTime: Int64 = 0

    init(moving: Bool, bankEveryBlock: Bool = true) throws {
        self.moving = moving
        self.bankEveryBlock = bankEveryBlock
        let type = DelayUnitType()
        unit = try type.make(UnitSettings(), UnitBuildContext(sampleRate: sr, hostInputChannels: 1))
        try unit.prepare(PrepareSpec(sampleRate: sr, maxFrames: block, inputChannels: [chans], outputChannels: [chans]))
        bank = ParameterBank(specs: type.parameters(UnitSettings()), sampleRate: sr, maxFrames: block)
        buses.initialize(to: AudioBus(channelPointers: UnsafePointer(inPtrs), channelCount: chans))
        (buses + 1).initialize(to: AudioBus(channelPointers: UnsafePointer(outPtrs), channelCount: chans))
        host.initialize(to: output)
        safety.initialize(to: SafetyCounters())
    }

    func pass() {
        var f = 0
        var blockIndex = 0
        while f < frames {
            let n = min(block, frames - f)
            for c in 0..<chans {
                inPtrs[c] = input + f
                outPtrs[c] = output + c * frames + f
            }
            let fillBank = bankEveryBlock || sampleTime == 0
            if fillBank { bank.beginBlock() }
            if moving && blockIndex % 75 == 0 {  // every 100 ms
                bank.setTarget(0, (blockIndex / 75) % 2 == 0 ? 0.30 : 0.42)
            }
            if fillBank { bank.fill(upTo: n) }
            unit.render(
                RenderContext(
                    frameCount: n, sampleTime: sampleTime, sampleRate: sr, tempo: 120,
                    inputs: UnsafeBufferPointer(start: buses, count: 1),
                    outputs: UnsafeBufferPointer(start: buses + 1, count: 1), parameters: bank.renderValues,
                    events: UnsafeBufferPointer(start: noEvents, count: 0),
                    hostInput: AudioBus(channelPointers: UnsafePointer(host), channelCount: 1),
                    hostOutput: AudioBus(channelPointers: UnsafePointer(host), channelCount: 1), safety: safety))
            sampleTime += Int64(n)
            f += n
            blockIndex += 1
        }
    }
}

/// A C reference, same blocks, same buffers.
final class CRunner {
    let d: OpaquePointer
    init(kind: Int32) {
        d = ref_delay_new(kind, Int32(chans), Int32((0.35 * sr).rounded()), 6000, 0.3, 0.2)
    }
    func pass() {
        var f = 0
        while f < frames {
            let n = min(block, frames - f)
            for c in 0..<chans {
                inPtrs[c] = input + f
                outPtrs[c] = output + c * frames + f
            }
            inPtrs.withMemoryRebound(to: UnsafePointer<Float>?.self, capacity: chans) { ins in
                outPtrs.withMemoryRebound(to: UnsafeMutablePointer<Float>?.self, capacity: chans) { outs in
                    ref_delay_block(d, ins, outs, Int32(n))
                }
            }
            f += n
        }
    }
}

let swiftSteady = try SwiftRunner(moving: false)
let swiftUnit = try SwiftRunner(moving: false, bankEveryBlock: false)
let swiftMoving = try SwiftRunner(moving: true)
let cPlain = CRunner(kind: 0)
let cSame = CRunner(kind: 1)
let names = ["swift", "swift-unit", "swift-moving", "c-plain", "c-same"]
let passes: [() -> Void] = [swiftSteady.pass, swiftUnit.pass, swiftMoving.pass, cPlain.pass, cSame.pass]
var times = Array(repeating: [Double](), count: names.count)
for round in 0..<(rounds + 1) {
    for k in 0..<passes.count {
        let t0 = now()
        passes[k]()
        let t = now() - t0
        if round > 0 { times[k].append(t * 1e9 / Double(frames * chans)) }  // round 0 warms up
    }
}

func median(_ x: [Double]) -> Double {
    let s = x.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}
func fmt(_ x: Double) -> String {
    let r = (x * 100).rounded() / 100
    return "\(r)"
}
print("channels \(chans), \(seconds) s per pass, \(rounds) rounds, \(block)-frame blocks, median ns per sample:")
for k in 0..<names.count {
    let pad = String(repeating: " ", count: 14 - names[k].count)
    print("  \(names[k])\(pad)\(fmt(median(times[k])))  (min \(fmt(times[k].min()!)))")
}
for (k, ref) in [(0, 3), (1, 3), (0, 4), (2, 3), (3, 4)] {
    let ratios = zip(times[k], times[ref]).map { $0 / $1 }
    print("  ratio \(names[k]) / \(names[ref]): \(fmt(median(ratios)))")
}
