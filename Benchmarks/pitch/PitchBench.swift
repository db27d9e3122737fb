// Benchmark driver for the `pitch` unit (built by Benchmarks/pitch/run.sh, never shipped).
//
// Usage: pitch-bench INPUT.f32 ROUNDS OUTDIR
// Reads mono 48 kHz raw float input, renders it through `pitch` (voice and any mode,
// +300 cents) and through `gain` (the harness floor) in 256-frame blocks, ROUNDS times
// interleaved, and prints the median CPU time (this thread) per sample. Writes the shifted
// audio of the first round to OUTDIR/voice.f32 and OUTDIR/any.f32 for listening.
// Environment: PITCH_BENCH_CENTS overrides the shift; PITCH_BENCH_ONLY=voice|any|gain runs
// one case.
import StageCore
import StageUnits

#if canImport(Glibc)
import Glibc
#endif

func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

func readRaw(_ path: String) -> [Float] {
    guard let f = fopen(path, "rb") else { fatalError("cannot open \(path)") }
    defer { fclose(f) }
    fseek(f, 0, SEEK_END)
    let bytes = ftell(f)
    fseek(f, 0, SEEK_SET)
    var data = [Float](repeating: 0, count: bytes / 4)
    let got = data.withUnsafeMutableBytes { fread($0.baseAddress, 4, bytes / 4, f) }
    precondition(got == bytes / 4)
    return data
}

func writeRaw(_ path: String, _ data: [Float]) {
    guard let f = fopen(path, "wb") else { fatalError("cannot write \(path)") }
    defer { fclose(f) }
    _ = data.withUnsafeBytes { fwrite($0.baseAddress, 4, data.count, f) }
}

/// Renders `input` through a fresh unit; returns CPU seconds of the render loop.
func run(_ type: any UnitType, _ parameters: [String: Float], _ input: [Float], keep: inout [Float]?) throws -> Double {
    let block = 256
    let h = try UnitHarness(type: type, parameters: parameters, sampleRate: 48000, maxFrames: block, inputChannels: [1])
    var out = keep != nil ? [Float](repeating: 0, count: input.count) : []
    var checksum: Float = 0
    let dst = h.inputs[0][0]
    let start = threadCPUSeconds()
    var pos = 0
    input.withUnsafeBufferPointer { src in
        while pos < src.count {
            let n = min(block, src.count - pos)
            dst.update(from: src.baseAddress! + pos, count: n)
            h.renderBlock(frames: n)
            let o = h.outputs[0][0]
            if !out.isEmpty {
                for i in 0..<n { out[pos + i] = o[i] }
            } else {
                checksum += o[n - 1]
            }
            pos += n
        }
    }
    let seconds = threadCPUSeconds() - start
    if keep != nil { keep = out }
    if checksum.isNaN { print("nan") }
    return seconds
}

@main
struct PitchBench {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count == 4, let rounds = Int(args[2]) else {
            print("usage: pitch-bench INPUT.f32 ROUNDS OUTDIR")
            exit(2)
        }
        let input = readRaw(args[1])
        let outdir = args[3]
        let cents = getenv("PITCH_BENCH_CENTS").flatMap { Float(String(cString: $0)) } ?? 300
        var cases: [(name: String, type: any UnitType, params: [String: Float])] = [
            ("voice", PitchUnitType(), ["pitch": cents, "mode": 0]),
            ("any", PitchUnitType(), ["pitch": cents, "mode": 1]),
            ("gain", GainUnitType(), ["gain": -3]),
        ]
        if let only = getenv("PITCH_BENCH_ONLY") {
            let name = String(cString: only)
            cases = cases.filter { $0.name == name }
        }
        var times = Array(repeating: [Double](), count: cases.count)
        for round in 0..<rounds {
            for (i, c) in cases.enumerated() {
                var keep: [Float]? = round == 0 && c.name != "gain" ? [] : nil
                times[i].append(try run(c.type, c.params, input, keep: &keep))
                if let k = keep { writeRaw("\(outdir)/\(c.name).f32", k) }
            }
        }
        for (i, c) in cases.enumerated() {
            let sorted = times[i].sorted()
            let median = sorted[sorted.count / 2]
            let ns = median / Double(input.count) * 1e9
            print("\(c.name) \(ns)")
        }
    }
}
