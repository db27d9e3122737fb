import StageCore
import StageControl
import StageDrivers
import StageSynth

#if canImport(Glibc)
import Glibc
#endif

/// `stagerack-bench --switches`: how long a program change takes to reach new sound, for a
/// rack with the bundled SoundFont and one with FluidR3_GM, and the memory after 1,000
/// switches against after 10.
enum SwitchBenchmark {
    static func residentMegabytes() -> Double {
        guard let f = fopen("/proc/self/statm", "r") else { return 0 }
        defer { fclose(f) }
        var size = 0
        var resident = 0
        _ = withUnsafeMutablePointer(to: &size) { s in
            withUnsafeMutablePointer(to: &resident) { r in
                withVaList([s, r]) { vfscanf(f, "%ld %ld", $0) }
            }
        }
        return Double(resident) * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    static func writeRack(_ path: String, font: String, program: Int, decay: Double) {
        let text = """
            { "format": 1, "units": { "mic": { "type": "input" },
                "synth": { "type": "synth", "soundfont": "\(font)", "program": \(program) },
                "reverb": { "type": "reverb", "params": { "decayTimeAt0Hz": \(decay) } },
                "mix": { "type": "mixer", "inputs": 2 }, "out": { "type": "output" } },
              "connections": [ "mic -> reverb -> mix:1", "synth -> mix:2", "mix -> out" ] }
            """
        // glibc 2.41 (Debian 13) declares fputs/fclose __nonnull: the FILE* must be unwrapped.
        guard let f = fopen(path, "w") else {
            print("stagerack-bench: cannot write \(path): \(String(cString: strerror(errno)))")
            exit(1)
        }
        fputs(text, f)
        fclose(f)
    }

    @MainActor
    static func run(registry: UnitRegistry) {
        let fonts = [
            ("bundled stagerack-basic.sf2", "stagerack-basic.sf2"),
            ("FluidR3_GM.sf2", "/usr/share/sounds/sf2/FluidR3_GM.sf2"),
        ]
        let block = 128
        for (label, font) in fonts {
            if font.hasPrefix("/") && access(font, R_OK) != 0 {
                print("\(label): not installed (apt-get install fluid-soundfont-gm), skipped")
                continue
            }
            let dir = "/tmp/stagerack-bench-switch"
            mkdir(dir, 0o755)
            writeRack("\(dir)/a.json", font: font, program: 0, decay: 1.5)
            writeRack("\(dir)/b.json", font: font, program: 1, decay: 2.5)
            var setlist = Setlist()
            setlist.entries = [
                Setlist.Entry(rack: "\(dir)/a.json", name: "a", program: 1, bank: 0, location: nil),
                Setlist.Entry(rack: "\(dir)/b.json", name: "b", program: 2, bank: 0, location: nil),
            ]
            let options = GraphCompiler.Options(sampleRate: 48000, maxFrames: block, hostInputChannels: 1)
            let loadStart = monotonicNanoseconds()
            guard let plan = try? RackFiles.load(setlist.entries[0].rack, registry: registry, options: options) else {
                print("\(label): the rack did not load")
                continue
            }
            let firstLoad = Double(monotonicNanoseconds() - loadStart) / 1e6
            let player = RackPlayer(engine: RenderEngine(plan: plan))
            let switcher = PresetSwitcher(
                setlist: setlist, index: 0, player: player, firstPlan: plan, registry: registry, options: options, log: { _ in })
            let input = BusStorage(bufferCount: 1, maxFrames: block)
            let output = BusStorage(bufferCount: 2, maxFrames: block)
            var times: [Double] = []
            var rssAfter10 = 0.0
            let total = Int(getenv("SWITCHES").map { String(cString: $0) } ?? "") ?? 1000
            for k in 1...total {
                let t0 = monotonicNanoseconds()
                switcher.perform(.program(k % 2 == 0 ? 1 : 2, bank: 0), at: EngineEvent.now)
                times.append(Double(monotonicNanoseconds() - t0) / 1e6)
                // Play a few blocks between switches so tails end and racks are released.
                for _ in 0..<8 {
                    player.render(frameCount: block, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
                    player.collectRetired()
                }
                if k == 10 { rssAfter10 = residentMegabytes() }
                if k % 1000 == 0 && total > 1000 { print("  after \(k): \(residentMegabytes()) MB") }
            }
            times.sort()
            let median = times[times.count / 2]
            let p99 = times[times.count * 99 / 100]
            let crossfadeMs = Double(player.crossfadeFrames) / 48000 * 1000
            let blockMs = Double(block) / 48000 * 1000
            print("\(label): first load \(formatNumber((firstLoad * 10).rounded() / 10)) ms; a switch loads and compiles in "
                + "\(formatNumber((median * 100).rounded() / 100)) ms median (p99 \(formatNumber((p99 * 100).rounded() / 100)) ms, font shared), "
                + "then sounds within one block (\(formatNumber((blockMs * 100).rounded() / 100)) ms) + the \(formatNumber(crossfadeMs)) ms crossfade")
            print("  memory: \(formatNumber((rssAfter10 * 10).rounded() / 10)) MB after 10 switches, "
                + "\(formatNumber((residentMegabytes() * 10).rounded() / 10)) MB after 1000 (\(counted(player.switches.load(ordering: .relaxed), "switch")), "
                + "\(counted(player.tailsEnded.load(ordering: .relaxed), "tail")) ended)")
        }
    }
}
