// Benchmarks/reverb driver: the `reverb` unit (the product's release StageUnits, run
// through StageCore's UnitHarness) against a C -O2 Freeverb (freeverb.c, linked in), on
// the same input, in the same process, alternating pass by pass. A unit that does nothing
// is timed the same way, so the harness's own per-block cost can be taken out.
// Times are CPU time of this thread (CLOCK_THREAD_CPUTIME_ID): other people's builds on
// the machine steal wall time, not this thread's CPU time. Built and run by run.sh.
//
// Usage: reverb-bench SECONDS PASSES BLOCK
import CFreeverb
import StageCore
import StageUnits

#if canImport(Glibc)
import Glibc
#endif

/// A unit that does nothing: the harness's own cost per block.
final class NullUnit: RackUnit {
    func prepare(_ spec: PrepareSpec) throws {}
    func render(_ context: RenderContext) {}
    func reset() {}
}

struct NullUnitType: UnitType {
    var name: String { "null" }
    var summary: String { "" }
    func parameters(_ settings: UnitSettings) -> [ParameterSpec] { ReverbUnit.parameterSpecs }
    func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.channels(1)], outputs: [.channels(2)])
    }
    func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { NullUnit() }
}

func cpuNow() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

let args = CommandLine.arguments
guard args.count >= 4, let seconds = Double(args[1]), let passes = Int(args[2]), let block = Int(args[3]) else {
    print("usage: reverb-bench SECONDS PASSES BLOCK")
    exit(2)
}

// The input: white noise at about −10 dBFS RMS with a slow swell, never silent (the
// reverb's silence shortcut would flatter it).
let count = Int(seconds * 48000)
var state: UInt32 = 12345
let input = UnsafeMutablePointer<Float>.allocate(capacity: count)
for i in 0..<count {
    state = state &* 1_664_525 &+ 1_013_904_223
    let white = Float(Int32(bitPattern: state)) / Float(Int32.max)
    input[i] = white * 0.55 * (0.6 + 0.4 * sinf(Float(i) * 2 * .pi / 48000))
}
let output = UnsafeMutablePointer<Float>.allocate(capacity: count)

/// Runs the whole input through a unit in `block`-frame calls; returns ns per sample.
func runUnit(_ h: UnitHarness) -> Double {
    let dst = h.inputs[0][0]
    let t0 = cpuNow()
    var i = 0
    while i < count {
        let n = min(block, count - i)
        dst.update(from: input + i, count: n)
        h.renderBlock(frames: n)
        i += n
    }
    return (cpuNow() - t0) * 1e9 / Double(count)
}

/// The same for the C Freeverb.
func runFreeverb(_ f: OpaquePointer) -> Double {
    let t0 = cpuNow()
    var i = 0
    while i < count {
        let n = min(block, count - i)
        freeverb_process(f, input + i, output + i, Int32(n))
        i += n
    }
    return (cpuNow() - t0) * 1e9 / Double(count)
}

let reverb = try UnitHarness(type: ReverbUnitType(), maxFrames: block)
let null = try UnitHarness(type: NullUnitType(), maxFrames: block)
// room 0.84 (a tail of about 1.8 s), damp 0.5, wet only.
guard let freeverb = freeverb_new(0.84, 0.5, 1.0 / 3, 0) else { exit(1) }

var timesC: [Double] = []
var timesSwift: [Double] = []
var timesNull: [Double] = []
_ = runFreeverb(freeverb)  // warm-up
_ = runUnit(reverb)
_ = runUnit(null)
for _ in 0..<passes {
    timesC.append(runFreeverb(freeverb))
    timesSwift.append(runUnit(reverb))
    timesNull.append(runUnit(null))
}

func median(_ x: [Double]) -> Double {
    let s = x.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func f2(_ v: Double) -> String {
    let r = (v * 100).rounded() / 100
    return "\(r)"
}

let c = median(timesC)
let sw = median(timesSwift)
let nu = median(timesNull)
let cMin = timesC.min()!
let swMin = timesSwift.min()!
let nuMin = timesNull.min()!
print("ns/sample (median of \(passes) alternating passes; min in brackets), \(block)-frame blocks, \(seconds) s of input:")
print("  C Freeverb, gcc -O2, mono out:        \(f2(c))  [\(f2(cMin))]")
print("  reverb unit via UnitHarness, stereo:  \(f2(sw))  [\(f2(swMin))]")
print("  UnitHarness alone (null unit):        \(f2(nu))  [\(f2(nuMin))]")
print("  reverb unit net of the harness:       \(f2(sw - nu))  [\(f2(swMin - nuMin))]")
print("ratio reverb / C Freeverb: \(f2(sw / c))x with the harness, \(f2((sw - nu) / c))x unit only  [min: \(f2(swMin / cMin))x, \(f2((swMin - nuMin) / cMin))x]  (target <= 1.0x)")
print("share of one core at 48 kHz: reverb unit \(f2((sw - nu) * 48000 / 1e7))%, C Freeverb \(f2(c * 48000 / 1e7))%")
