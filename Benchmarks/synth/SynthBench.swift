// Swift side of Benchmarks/synth: the synth unit (StageSynth) in release, driven through
// UnitHarness in 64-frame blocks from the same Standard MIDI File (StageCore's reader),
// same SoundFont, FluidSynth's effects off (the unit's defaults). Prints the CPU time of
// the render loop and of the SoundFont load, in the same format as synth_c.
//
// Usage: synth_swift FONT.sf2 SONG.mid SECONDS     (render)
//        synth_swift --load FONT.sf2               (load time only, through SoundFontLibrary)
//        synth_swift --first-block FONT.sf2        (start, load, prepare, one block, exit)
// Built by run.sh with swiftc against the package's release objects (never a product).
import StageCore
import StageSynth

#if canImport(Glibc)
import Glibc
#endif

func cpuNow() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) * 1e-6 + Double(u.ru_stime.tv_sec)
        + Double(u.ru_stime.tv_usec) * 1e-6
}

func readFile(_ path: String) -> [UInt8] {
    guard let f = fopen(path, "rb") else { fatalError("cannot open \(path)") }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, f)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return bytes
}

let args = CommandLine.arguments
if args.count == 3 && args[1] == "--first-block" {
    // Start-up to first audio: make the unit (find and load the font), prepare it, play a
    // note, render one 64-frame block, exit. The caller times the whole process.
    let h = try UnitHarness(type: SynthUnitType(), settings: ["soundfont": .string(args[2])], maxFrames: 64)
    h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 0)
    h.renderBlock(frames: 64)
    exit(h.outputs[0][0][63] == 0 ? 1 : 0)
}
if args.count == 3 && args[1] == "--load" {
    let font = try SoundFontLibrary().load(path: args[2])
    print("load_cpu \(font.loadCPUSeconds) load_wall \(font.loadSeconds)")
    exit(0)
}
guard args.count == 4, let seconds = Double(args[3]) else {
    print("usage: synth_swift FONT SONG SECONDS | synth_swift --load FONT")
    exit(2)
}
let song = try StandardMIDIFile(bytes: readFile(args[2]))
let harness = try UnitHarness(
    type: SynthUnitType(), settings: ["soundfont": .string(args[1])], sampleRate: 48000, maxFrames: 64)
let unit = harness.unit as! SynthUnit
let events = song.messages.map { (frame: Int64(($0.seconds * 48000).rounded()), message: $0.message) }
    .sorted { $0.frame < $1.frame }
let frames = Int64(seconds * 48000)
var next = 0
var energy = 0.0
var t: Int64 = 0
let r0 = cpuNow()
while t < frames {
    while next < events.count && events[next].frame < t + 64 {
        harness.send(events[next].message, atFrame: events[next].frame)
        next += 1
    }
    harness.renderBlock(frames: 64)
    let out = harness.outputs[0]
    energy += Double(out[0][0] * out[0][0] + out[1][63] * out[1][63])
    t += 64
}
let renderCPU = cpuNow() - r0
print("render_cpu \(renderCPU) frames \(frames) load_cpu \(unit.soundFont.loadCPUSeconds) check \(energy) events \(events.count)")
