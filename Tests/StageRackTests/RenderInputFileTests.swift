import Foundation
import StageCore
import StageControl
import StageDrivers
import StageTestSupport
import XCTest

/// `stagerack render` with awkward input files, all written through libsndfile: wide files,
/// low rates, hostile headers, and the header it writes itself. The real binary runs, so a
/// crash or an abort is a failure, not a dead test process.
final class RenderInputFileTests: XCTestCase {
    struct Run {
        var status: Int32
        var stderr: String
    }

    /// Runs the `stagerack` built next to the test bundle, killed after `timeout` seconds.
    func stagerack(_ args: [String], timeout: Double = 60) throws -> Run {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let process = Process()
        process.executableURL = exe.appendingPathComponent("stagerack")
        process.arguments = args
        let errPath = Fixtures.temporaryPath("stderr-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: errPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            XCTFail("stagerack \(args.joined(separator: " ")) still running after \(timeout) s")
        }
        process.waitUntilExit()
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        XCTAssertEqual(process.terminationReason, .exit, "stagerack died of a signal: \(stderr)")
        return Run(status: process.terminationStatus, stderr: stderr)
    }

    func writeFile(_ name: String, channels: [[Float]], sampleRate: Double) throws -> String {
        let path = Fixtures.temporaryPath(name)
        let writer = try AudioFileWriter(path: path, channels: channels.count, sampleRate: sampleRate, maxFrames: 4096)
        try writer.write(channels: channels)
        try writer.close()
        return path
    }

    func writeRack(_ name: String, _ text: String) throws -> String {
        let path = Fixtures.temporaryPath(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    let micRack = """
        { "format": 1, "units": { "mic": { "type": "input" }, "out": { "type": "output" } }, "connections": [ "mic -> out" ] }
        """

    var defaultRack: String { Fixtures.repository.appendingPathComponent("racks/default.json").path }

    /// Three channels at 44.1 kHz: the rack's input takes the first two (and says so), at
    /// the rack's 48 kHz, each at its own frequency. It was an error about "delay".
    func testAThreeChannelFileFeedsItsFirstTwoChannelsAtTheRacksRate() throws {
        let tones = [500.0, 700.0, 900.0].map { Measure.sine(frequency: $0, sampleRate: 44100, frames: 44100, amplitude: 0.3) }
        let input = try writeFile("three.wav", channels: tones, sampleRate: 44100)
        let out = Fixtures.temporaryPath("three-out.wav")
        let run = try stagerack(["render", try writeRack("mic.json", micRack), "--input", input, "-o", out])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("info: \(input) has 3 channels: the rack's input takes channels 1 and 2"), run.stderr)
        XCTAssertTrue(run.stderr.contains("from 44100 Hz to 48000 Hz"), run.stderr)
        let rendered = try AudioData.read(path: out)
        XCTAssertEqual(rendered.sampleRate, 48000)
        // One second of input, then 100 ms of silence to show the (absent) tail has ended.
        XCTAssertGreaterThanOrEqual(rendered.frameCount, 48000)
        XCTAssertLessThanOrEqual(rendered.frameCount, 48000 + 4800 + 512)
        for (c, f) in [500.0, 700.0].enumerated() {
            let middle = rendered.channels[c][12000..<36000]
            XCTAssertEqual(Measure.dominantFrequency(in: middle, low: 100, high: 2000), f, accuracy: 1)
            XCTAssertEqual(Measure.rms(middle), 0.3 / Float(2).squareRoot(), accuracy: 0.01)
        }
        // The default rack (delay → reverb takes one or two channels) runs on it too.
        let run2 = try stagerack(["render", defaultRack, "--input", input, "-o", out, "--duration", "0.5"])
        XCTAssertEqual(run2.status, 0, run2.stderr)
    }

    /// A 7999 Hz file runs the rack at 48 kHz (the pitch unit refused 7999 Hz), the tone
    /// kept at its frequency through the resampler.
    func testALowRateFileIsResampledToTheRacksRate() throws {
        let tone = Measure.sine(frequency: 440, sampleRate: 7999, frames: 7999, amplitude: 0.4)
        let input = try writeFile("low.wav", channels: [tone], sampleRate: 7999)
        let out = Fixtures.temporaryPath("low-out.wav")
        let run = try stagerack(["render", defaultRack, "--input", input, "-o", out, "--duration", "1"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let rendered = try AudioData.read(path: out)
        XCTAssertEqual(rendered.sampleRate, 48000)
        let dry = try stagerack(["render", try writeRack("mic-low.json", micRack), "--input", input, "-o", out])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        let passed = try AudioData.read(path: out)
        XCTAssertEqual(Measure.dominantFrequency(in: passed.channels[0][8000..<40000], low: 100, high: 2000), 440, accuracy: 1)
    }

    /// The rack's `io.sampleRate` and `--sample-rate` choose the rate, never the file.
    func testTheRenderRateIsTheRacksOrTheFlags() throws {
        let input = try writeFile("rate.wav", channels: [Measure.sine(frequency: 440, frames: 4800)], sampleRate: 48000)
        let rack = try writeRack("rate.json", """
            { "format": 1, "io": { "sampleRate": 44100 }, "units": { "mic": { "type": "input" }, "out": { "type": "output" } },
              "connections": [ "mic -> out" ] }
            """)
        let out = Fixtures.temporaryPath("rate-out.wav")
        XCTAssertEqual(try stagerack(["render", rack, "--input", input, "-o", out]).status, 0)
        XCTAssertEqual(try AudioData.read(path: out).sampleRate, 44100)
        XCTAssertEqual(try stagerack(["render", rack, "--input", input, "-o", out, "--sample-rate", "96000"]).status, 0)
        XCTAssertEqual(try AudioData.read(path: out).sampleRate, 96000)
    }

    /// An input unit's `channel` beyond the file's channels is the file's problem.
    func testAChannelTheFileDoesNotHaveIsTheFilesError() throws {
        let input = try writeFile("stereo.wav", channels: [[Float](repeating: 0.1, count: 4800), [Float](repeating: 0.1, count: 4800)],
                                  sampleRate: 48000)
        let rack = try writeRack("channel3.json", """
            { "format": 1, "units": { "mic": { "type": "input", "channel": 3 }, "out": { "type": "output" } },
              "connections": [ "mic -> out" ] }
            """)
        let run = try stagerack(["render", rack, "--input", input, "-o", Fixtures.temporaryPath("c3.wav")])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("\(input): has 2 channels, but input unit \"mic\" takes channel 3"), run.stderr)
    }

    /// The offset of the sample-rate field in the WAV files libsndfile writes (RIFF, WAVE,
    /// "fmt ", its size, format tag, channels).
    let rateOffset = 24

    /// A header claiming 2147483647 Hz aborted the render ("failed to allocate 34359740480
    /// bytes"); it is an error naming the file and the value.
    func testAHeaderClaimingAnAbsurdRateIsTheFilesError() throws {
        let path = try writeFile("rate-max.wav", channels: [Measure.sine(frequency: 440, frames: 4800)], sampleRate: 48000)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(Array(bytes[rateOffset..<(rateOffset + 4)]), [0x80, 0xBB, 0, 0], "48000 where expected")
        bytes.replaceSubrange(rateOffset..<(rateOffset + 4), with: [0xFF, 0xFF, 0xFF, 0x7F])
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try AudioData.read(path: path)) { error in
            XCTAssertTrue("\(error)".contains("sample rate of 2147483647 Hz"), "\(error)")
        }
        let run = try stagerack(["render", try writeRack("mic-max.json", micRack), "--input", path, "-o", Fixtures.temporaryPath("x.wav")])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("\(path): its header claims a sample rate of 2147483647 Hz"), run.stderr)
    }

    /// More channels than the input unit counts (1…64) is refused before any allocation.
    func testTooManyChannelsAreTheFilesError() throws {
        let path = try writeFile("wide.wav", channels: Array(repeating: [Float](repeating: 0, count: 10), count: 65), sampleRate: 48000)
        XCTAssertThrowsError(try AudioData.read(path: path)) { error in
            XCTAssertTrue("\(error)".contains("65 channels"), "\(error)")
        }
    }

    /// Rendered .wav files are 32-bit PCM with a WAVE_FORMAT_EXTENSIBLE header: sox warned
    /// "wave header missing extended part of fmt chunk" on every float WAV, and does on
    /// the float ones libsndfile writes whether plain or extensible. Read back, the demo
    /// voice keeps its level.
    func testRenderedWAVHasAHeaderToolsAccept() throws {
        let out = Fixtures.temporaryPath("demo.wav")
        let run = try stagerack(["render", try writeRack("mic-demo.json", micRack), "--demo", "-o", out])
        XCTAssertEqual(run.status, 0, run.stderr)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        XCTAssertEqual(Array(bytes[20..<22]), [0xFE, 0xFF], "format tag WAVE_FORMAT_EXTENSIBLE")
        XCTAssertEqual(Array(bytes[34..<36]), [32, 0], "32 bits a sample")
        let back = try AudioData.read(path: out).channels[0]
        XCTAssertEqual(Measure.rms(back), 0.13, accuracy: 1e-4, "the demo voice's level, read back")
        let sox = ["/usr/bin/sox", "/usr/local/bin/sox"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let sox else { throw XCTSkip("sox not installed (apt-get install sox): the header checked by its bytes only") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sox)
        process.arguments = ["--i", out]
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let warnings = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(warnings, "", "sox --i printed warnings")
    }

    /// The output format is checked before the rack and its SoundFont load (a missing font
    /// was reported for `-o x.mp3`, after the wait for loading).
    func testAnUnknownOutputFormatIsReportedFirst() throws {
        let rack = try writeRack("font.json", """
            { "format": 1, "units": { "s": { "type": "synth", "soundfont": "no-such-font.sf2" }, "out": { "type": "output" } },
              "connections": [ "s -> out" ] }
            """)
        let run = try stagerack(["render", rack, "--demo", "-o", Fixtures.temporaryPath("x.mp3")])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("unknown output format \".mp3\""), run.stderr)
        XCTAssertFalse(run.stderr.contains("no-such-font"), run.stderr)
    }

    /// The demo's voice has no DC offset (it had 0.0195: unipolar pulses into resonators).
    func testTheDemoVoiceHasNoDCOffset() throws {
        let out = Fixtures.temporaryPath("demo-voice.wav")
        let run = try stagerack(["render", try writeRack("mic-dc.json", micRack), "--demo", "-o", out])
        XCTAssertEqual(run.status, 0, run.stderr)
        let voice = try AudioData.read(path: out).channels[0]
        let mean = voice.reduce(0.0) { $0 + Double($1) } / Double(voice.count)
        let rms = Double(Measure.rms(voice))
        print("demo voice: DC \(mean), RMS \(Measure.decibels(Float(rms))) dBFS, peak \(Measure.peak(voice))")
        XCTAssertLessThan(abs(mean), 1e-4)
        XCTAssertEqual(rms, 0.13, accuracy: 0.001, "the voice at its level")
        XCTAssertLessThan(Measure.peak(voice), 0.9, "and under the limiter")
    }

    /// SMPTE division with 0 ticks a frame crashed the render; it is the file's error.
    func testAnSMPTEFileWithNoTicksPerFrameIsAnError() throws {
        let track: [UInt8] = [0, 0x90, 60, 100, 10, 0x80, 60, 0, 0, 0xFF, 0x2F, 0]
        let bytes = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0xE7, 0x00] + Array("MTrk".utf8)
            + [0, 0, 0, UInt8(track.count)] + track
        let path = Fixtures.temporaryPath("smpte0.mid")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let run = try stagerack(["render", try writeRack("mic-smpte.json", micRack), "--midi", path, "-o", Fixtures.temporaryPath("s.wav")])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("\(path): byte 13: SMPTE time division with 0 ticks per frame"), run.stderr)
    }

    /// A file whose delta times claim millennia: cut at an hour, with the reason; the render's
    /// default length follows the cut, not the claim.
    func testAHugeMIDIFileIsCutWithAWarning() throws {
        var track: [UInt8] = [0, 0xFF, 0x51, 3, 0xFF, 0xFF, 0xFF, 0, 0x90, 60, 100]
        for _ in 0..<20 { track += [0xFF, 0xFF, 0xFF, 0x7F, 0x80, 60, 0] }
        track += [0, 0xFF, 0x2F, 0]
        let bytes = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 1] + Array("MTrk".utf8)
            + [0, 0, UInt8(track.count >> 8), UInt8(track.count & 255)] + track
        let path = Fixtures.temporaryPath("huge.mid")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let midi = try MIDIFiles.read(path)
        let renderer = OfflineRenderer(plan: try RackBuilding.plan(micRack, maxFrames: 256))
        XCTAssertEqual(renderer.contentFrames(input: nil, midi: midi), Int(StandardMIDIFile.maximumSeconds * 48000))
        let run = try stagerack(["render", try writeRack("mic-huge.json", micRack), "--midi", path, "-o", Fixtures.temporaryPath("h.wav"),
                                 "--duration", "0.1"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("warning: \(path): its time division and delta times put its last event at"), run.stderr)
        XCTAssertTrue(run.stderr.contains("render plays the first 60 minutes of a MIDI file and drops the rest"), run.stderr)
    }
}
