// Benchmark driver for the `harmony` and `tune` units (built by Benchmarks/harmony/run.sh,
// never shipped).
//
// Usage: harmony-bench CASE INPUT.f32 [OUTPUT.f32]
// CASE: none (reads the input, renders nothing: the floor to subtract), harmony4 (four
// voices a third, fifth, third below and octave in C major plus the lead), tune (chromatic,
// speed 0), tuner (the tuner, defaults), pitch (the pitch unit, voice mode, +300 cents). Renders in 256-frame blocks.
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
struct HarmonyBench {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count >= 3 else {
            print("usage: harmony-bench none|harmony4|tune|tuner|pitch INPUT.f32 [OUTPUT.f32]")
            exit(2)
        }
        let input = readRaw(args[2])
        let loc = SourceLocation(line: 0, column: 0)
        func list(_ xs: [Double]) -> JSONValue { .array(xs.map { JSONNode(.number($0), at: loc) }) }
        let h: UnitHarness
        switch args[1] {
        case "none": return
        case "harmony4":
            h = try UnitHarness(
                type: HarmonyUnitType(),
                settings: ["voices": .number(4), "source": .string("scale"), "intervals": list([3, 5, -3, 8])],
                sampleRate: 48000, maxFrames: 256)
        case "tune":
            h = try UnitHarness(type: TuneUnitType(), parameters: ["speed": 0], sampleRate: 48000, maxFrames: 256)
        case "tuner":
            h = try UnitHarness(type: TunerUnitType(), sampleRate: 48000, maxFrames: 256)
        case "pitch":
            h = try UnitHarness(type: PitchUnitType(), parameters: ["pitch": 300, "mode": 0], sampleRate: 48000, maxFrames: 256, inputChannels: [1])
        default:
            print("unknown case \(args[1])")
            exit(2)
        }
        var out = [Float](repeating: 0, count: args.count > 3 ? input.count * h.outputChannels[0] : 0)
        var checksum: Float = 0
        let dst = h.inputs[0][0]
        var pos = 0
        input.withUnsafeBufferPointer { src in
            while pos < src.count {
                let n = min(256, src.count - pos)
                dst.update(from: src.baseAddress! + pos, count: n)
                h.renderBlock(frames: n)
                let o = h.outputs[0]
                if !out.isEmpty {
                    // Interleaved.
                    let c = o.channelCount
                    for i in 0..<n { for k in 0..<c { out[(pos + i) * c + k] = o[k][i] } }
                } else {
                    checksum += o[0][n - 1]
                }
                pos += n
            }
        }
        if checksum.isNaN { print("nan") }
        if args.count > 3, let f = fopen(args[3], "wb") {
            _ = out.withUnsafeBytes { fwrite($0.baseAddress, 4, out.count, f) }
            fclose(f)
        }
    }
}
