import StageCore
import StageDrivers

#if canImport(Glibc)
import Glibc
#endif

/// The drift compensator's cost: a stereo capture card 100 ppm fast, `seconds` of audio in
/// `block`-frame playback periods through a `DriftCompensator` of the given libsamplerate
/// quality, or `copy`: the same loop with the ring and no resampling (the floor to
/// subtract). Prints the CPU time per frame; under callgrind (Benchmarks/drift/run.sh)
/// the instruction counts of two runs give instructions per frame side by side.
enum DriftBenchmark {
    static func run(quality: String, block: Int, seconds: Double) {
        let q: DriftCompensator.Quality? = ["best": .best, "medium": .medium, "fastest": .fastest][quality]
        guard q != nil || quality == "copy" else {
            print("--drift: best, medium, fastest or copy")
            exit(2)
        }
        let compensator = try! DriftCompensator(
            channels: 2, sampleRate: 48000, targetBacklog: 2 * block, maxReadFrames: block, quality: q ?? .fastest)
        let storage = BusStorage(bufferCount: 4, maxFrames: block + 1)
        let capture = storage.bus(first: 0, channels: 2)
        let output = storage.bus(first: 2, channels: 2)
        for i in 0...block {
            capture[0][i] = Float(sin(Double(i) * 0.13)) * 0.5
            capture[1][i] = Float(cos(Double(i) * 0.07)) * 0.5
        }
        let blocks = Int(seconds * 48000) / block
        var captured = 0.0
        var delivered = 0
        var sink: Float = 0
        let start = cpuSeconds()
        for _ in 0..<blocks {
            captured += Double(block) * 1.0001
            let n = Int(captured) - delivered
            delivered += n
            if q == nil {
                // The floor: the same buses and loop, a plain copy for the resampling.
                for c in 0..<2 { output[c].update(from: capture[c], count: block) }
            } else {
                compensator.write(capture, frames: min(n, block + 1))
                compensator.read(into: output, frames: block, pendingFrames: 0)
            }
            sink += output[0][block / 2]
        }
        let cpu = cpuSeconds() - start
        print("drift \(quality): \(blocks * block) frames stereo in \(block)-frame blocks, "
              + "\(String(cpu * 1e9 / Double(blocks * block))) ns per frame CPU, drift \(compensator.driftPPM) ppm (\(sink))")
    }

    static func cpuSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
