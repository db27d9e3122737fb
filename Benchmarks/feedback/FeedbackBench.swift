// Benchmark driver for the `feedback` unit (built by Benchmarks/feedback/run.sh, never shipped).
//
// Usage: feedback-bench INPUT.f32 CASE
// Reads mono 48 kHz raw float input and renders it in 256-frame blocks through one unit:
// CASE `feedback` (defaults), `tune` (defaults: chromatic) or `gain` (the harness floor,
// subtracted by run.sh). Run under callgrind, the instruction counts side by side.
import StageCore
import StageUnits

#if canImport(Glibc)
import Glibc
#endif

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

@main
struct FeedbackBench {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count == 3 else { fatalError("usage: feedback-bench INPUT.f32 feedback|tune|gain") }
        let input = readRaw(args[1])
        let type: any UnitType =
            switch args[2] {
            case "feedback": FeedbackUnitType()
            case "tune": TuneUnitType()
            default: GainUnitType()
            }
        let block = 256
        let h = try UnitHarness(type: type, sampleRate: 48000, maxFrames: block, inputChannels: [1])
        var checksum: Float = 0
        let dst = h.inputs[0][0]
        var pos = 0
        input.withUnsafeBufferPointer { src in
            while pos < src.count {
                let n = min(block, src.count - pos)
                dst.update(from: src.baseAddress! + pos, count: n)
                h.renderBlock(frames: n)
                checksum += h.outputs[0][0][n - 1]
                pos += n
            }
        }
        print(args[2], checksum)
    }
}
