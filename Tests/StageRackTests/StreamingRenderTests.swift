import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// `stagerack render` streams its input: read and written a block at a time, so memory does
/// not grow with the file's length; resampling streams through libsamplerate; the tails
/// are still measured at the end. The release binary runs as a subprocess and prints its
/// own peak memory (getrusage's ru_maxrss, the kernel's VmHWM).
final class StreamingRenderTests: XCTestCase {
    let micRack = """
        { "format": 2, "units": { "mic": { "type": "input" }, "out": { "type": "output" } }, "connections": [ "mic -> out" ] }
        """

    lazy var folder: String = {
        let dir = NSTemporaryDirectory() + "stagerack-streaming-\(getpid())-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }()

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: folder)
        super.tearDown()
    }

    /// Runs the release `stagerack` built next to the test bundle; returns its stderr.
    func stagerack(_ args: [String]) throws -> String {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let process = Process()
        process.executableURL = exe.appendingPathComponent("stagerack")
        process.arguments = args
        let errPath = folder + "/stderr-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: errPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let log = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        XCTAssertEqual(process.terminationStatus, 0, log)
        return log
    }

    /// A mono 32-bit float WAV of a 440 Hz sine at −6 dBFS, made by sox.
    func sine(_ name: String, seconds: Int, rate: Int = 48000) throws -> String {
        let path = folder + "/" + name
        let sox = Process()
        sox.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
        sox.arguments = ["-n", "-r", "\(rate)", "-c", "1", "-b", "32", "-e", "floating-point", path, "synth", "\(seconds)", "sine", "440", "vol", "0.5"]
        try sox.run()
        sox.waitUntilExit()
        XCTAssertEqual(sox.terminationStatus, 0, "sox failed (scripts/install-deps.sh --test installs it)")
        return path
    }

    /// "memory 12.3 MB" from render's summary line, in MB.
    func peakMemory(_ log: String) -> Double? {
        guard let r = log.range(of: #"memory [0-9.]+ MB"#, options: .regularExpression) else { return nil }
        return Double(log[r].dropFirst("memory ".count).dropLast(" MB".count))
    }

    /// Ten minutes of input render with the peak memory of ten seconds (within 4 MB). Held
    /// whole, ten minutes of mono float is 115 MB (it was held twice: +230 MB).
    func testPeakMemoryDoesNotGrowWithTheInputsLength() throws {
        let rack = folder + "/mic.json"
        try micRack.write(toFile: rack, atomically: true, encoding: .utf8)
        var peaks: [Double] = []
        for seconds in [10, 600] {
            let input = try sine("in-\(seconds).wav", seconds: seconds)
            let output = folder + "/out-\(seconds).w64"
            let log = try stagerack(["render", rack, "--input", input, "--output", output])
            let peak = try XCTUnwrap(peakMemory(log), log)
            peaks.append(peak)
            let back = try AudioFileStream(path: output)
            XCTAssertEqual(Double(back.headerFrames), Double(seconds) * 48000, accuracy: 9600, "the whole input, and 100 ms of silence that ends the tail")
            try? FileManager.default.removeItem(atPath: input)
            try? FileManager.default.removeItem(atPath: output)
        }
        print("peak memory: 10 s input \(peaks[0]) MB, 600 s input \(peaks[1]) MB")
        XCTAssertLessThan(abs(peaks[1] - peaks[0]), 4, "10 s: \(peaks[0]) MB, 600 s: \(peaks[1]) MB")
    }

    /// Resampling a block at a time gives what resampling the whole file gives, whatever
    /// the block size (libsamplerate's streaming API and src_simple, the same converter).
    func testStreamedResamplingMatchesTheWholeFile() throws {
        let frames = 3 * 44100
        let left = (0..<frames).map { Float(0.5 * sin(2 * Double.pi * 997 * Double($0) / 44100)) }
        let right = (0..<frames).map { Float(0.3 * sin(2 * Double.pi * 3001 * Double($0) / 44100)) }
        let third = [Float](repeating: 0.25, count: frames)
        let path = folder + "/three.w64"
        let writer = try AudioFileWriter(path: path, channels: 3, sampleRate: 44100, maxFrames: 4096)
        try writer.write(channels: [left, right, third])
        try writer.close()
        let whole = try AudioData.read(path: path).resampled(to: 48000)
        for block in [17, 256, 4096] {
            let stream = try AudioFileStream(path: path, channels: 2, rate: 48000)
            let storage = BusStorage(bufferCount: 2, maxFrames: block)
            let bus = storage.bus(first: 0, channels: 2)
            var streamed: [[Float]] = [[], []]
            while true {
                let got = stream.read(into: bus, frames: block)
                for c in 0..<2 { streamed[c] += UnsafeBufferPointer(start: bus[c], count: got) }
                if got < block { break }
            }
            for c in 0..<2 {
                // libsamplerate's end-of-input flush may give one frame more in a stream.
                XCTAssertLessThanOrEqual(abs(streamed[c].count - whole.channels[c].count), 1, "block \(block): length")
                let n = min(streamed[c].count, whole.channels[c].count)
                let worst = (0..<n).map { abs(streamed[c][$0] - whole.channels[c][$0]) }.max() ?? 0
                XCTAssertLessThan(worst, 1e-5, "block \(block), channel \(c)")
            }
        }
    }

    /// Without --duration a streamed input renders whole, then the reverb's tail until it
    /// falls under −80 dBFS for 100 ms: longer than the input, far shorter than the 30 s cap.
    func testTheTailIsStillMeasuredAfterAStreamedInput() throws {
        let rack = folder + "/verb.json"
        try """
            { "format": 2, "units": { "mic": { "type": "input" },
              "verb": { "type": "reverb", "params": { "dryWetMix": 50, "decayTimeAt0Hz": 1, "decayTimeAtNyquist": 0.5 } },
              "out": { "type": "output" } }, "connections": [ "mic -> verb -> out" ] }
            """.write(toFile: rack, atomically: true, encoding: .utf8)
        let input = try sine("one.wav", seconds: 1)
        let output = folder + "/verb.w64"
        _ = try stagerack(["render", rack, "--input", input, "--output", output])
        let out = try AudioData.read(path: output)
        let seconds = Double(out.frameCount) / 48000
        XCTAssertGreaterThan(seconds, 1.5, "the tail rings after the input")
        XCTAssertLessThan(seconds, 6, "the tail is measured, not the 30 s cap")
        let last = Int(0.1 * 48000)
        let lastPeak = out.channels.map { $0.suffix(last).map { abs($0) }.max() ?? 0 }.max() ?? 0
        XCTAssertLessThan(20 * log10(Double(lastPeak)), -80)
        let firstSecond = out.channels[0].prefix(48000).map { abs($0) }.max() ?? 0
        XCTAssertGreaterThan(firstSecond, 0.2, "the input is heard")
    }
}
