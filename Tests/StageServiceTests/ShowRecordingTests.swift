import Foundation
import StageDrivers
import XCTest

/// `stagerack play --record DIR` through alsa-lib's file plugin: the recording equals what
/// was played (a null test within one step of 24 bits), a `kill -9` leaves files that open
/// with all but the last second, a full disk stops the recording and not the show.
final class ShowRecordingTests: XCTestCase {
    var dir = ""
    var env: [String: String] = [:]
    let rate = 48000
    let period = 128
    let periods = 2

    let rack = """
        { "format": 2, "name": "Rec test",
          "units": { "mic": { "type": "input" }, "vox": { "type": "gain", "params": { "gain": -6 } },
                     "mix": { "type": "mixer", "inputs": 1 }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> mix -> out" ] }
        """

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: Tool.stagerack) else {
            throw XCTSkip("\(Tool.stagerack) is not built (swift test builds it with the tests)")
        }
        dir = Tool.temporaryDirectory(name.filter { $0.isLetter })
        let config = """
            pcm.rec_null { type null }
            pcm.rec_out { type file  slave.pcm "rec_null"  format "raw"  truncate true  file "\(dir)/out.raw" }
            pcm.rec_in { type file  slave.pcm "rec_null"  format "raw"  file "/dev/null"  infile "\(dir)/in.raw" }
            """
        try config.write(toFile: dir + "/alsa.conf", atomically: true, encoding: .utf8)
        try rack.write(toFile: dir + "/rack.json", atomically: true, encoding: .utf8)
        // 20 s of a stereo voice stand-in: two tones with a slow swell, 32-bit float.
        var samples = [Float]()
        samples.reserveCapacity(20 * rate * 2)
        for n in 0..<(20 * rate) {
            let swell = 0.5 + 0.5 * sinf(Float(n) * 2 * .pi / Float(rate * 3))
            samples.append(0.4 * swell * sinf(Float(n) * 2 * .pi * 440 / Float(rate)))
            samples.append(0.3 * sinf(Float(n) * 2 * .pi * 301 / Float(rate)))
        }
        try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: dir + "/in.raw")) }
        env = Tool.environment(["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:\(dir)/alsa.conf"], home: dir)
    }

    func play(_ args: [String], timeout: Double = 60, whileRunning: ((pid_t) -> Void)? = nil) throws -> Tool.Result {
        try Tool.run(
            Tool.stagerack,
            ["play", dir + "/rack.json", "--playback", "rec_out", "--capture", "rec_in", "--format", "FLOAT_LE",
             "--period", String(period), "--periods", String(periods)] + args,
            environment: env, timeout: timeout, whileRunning: whileRunning)
    }

    /// What the file plugin received, left channel, without the pre-fill of silence.
    func played() throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/out.raw"))
        let floats = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return stride(from: 2 * period * periods, to: floats.count - 1, by: 2).map { floats[$0] }
    }

    func recording(_ folder: String, _ suffix: String) throws -> AudioData {
        let name = try FileManager.default.contentsOfDirectory(atPath: folder).sorted().first { $0.hasSuffix(suffix) }
        return try AudioData.read(path: folder + "/" + XCTUnwrap(name, "no *\(suffix) in \(folder)"))
    }

    /// The output file equals what the sound card was sent, and the microphone file what
    /// the capture device gave, within one step of 24-bit PCM; file names carry the number
    /// and the song.
    func testTheRecordingEqualsTheLiveOutput() throws {
        let r = try play(["--duration", "2", "--record", dir + "/show"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("recorded 2 s"), r.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir + "/show").sorted()
        XCTAssertTrue(names.contains { $0.hasSuffix("001-Rec_test-out.wav") }, "\(names)")
        let out = try recording(dir + "/show", "-out.wav")
        let mic = try recording(dir + "/show", "-mic.wav")
        let reference = try played()
        XCTAssertEqual(out.frameCount, 2 * rate)
        XCTAssertGreaterThanOrEqual(reference.count, out.frameCount)
        let step: Float = 1.0 / Float(1 << 23)
        var worst: Float = 0
        for i in 0..<out.frameCount { worst = max(worst, abs(out.channels[0][i] - reference[i])) }
        let input = try Data(contentsOf: URL(fileURLWithPath: dir + "/in.raw")).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        var worstMic: Float = 0
        for i in 0..<mic.frameCount { worstMic = max(worstMic, abs(mic.channels[1][i] - input[2 * i + 1])) }
        print("recording: output null test worst \(worst / step) steps of 24 bits, microphone \(worstMic / step) steps; level \(out.channels[0].map(abs).max()!)")
        XCTAssertLessThanOrEqual(worst, step, "the recording differs from what was played")
        XCTAssertLessThanOrEqual(worstMic, step, "the microphone file differs from what was captured")
        XCTAssertGreaterThan(out.channels[0].map(abs).max()!, 0.1)
    }

    /// Under systemd a relative folder is inside the state directory (`StateDirectory=`
    /// sets `$STATE_DIRECTORY`); the FLAC format converts each file when the show stops.
    func testARelativeFolderIsInTheStateDirectoryAndFLACIsConvertedAtTheEnd() throws {
        env["STATE_DIRECTORY"] = dir + "/state"
        let r = try play(["--duration", "1", "--record", "recordings", "--record-format", "flac"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir + "/state/recordings").sorted()
        XCTAssertEqual(names.filter { $0.hasSuffix(".flac") }.count, 2, "\(names)")
        XCTAssertEqual(names.filter { $0.hasSuffix(".wav") }.count, 0, "the WAVs stay after the conversion: \(names)")
        let out = try recording(dir + "/state/recordings", "-out.flac")
        XCTAssertEqual(out.frameCount, rate)
    }

    /// `kill -9` while recording: both files open, with all but at most the last second of
    /// what had been played, sample for sample.
    func testAKilledShowLeavesFilesThatOpen() throws {
        let r = try play(["--duration", "30", "--record", dir + "/show"], timeout: 40) { pid in
            usleep(4_500_000)
            kill(pid, SIGKILL)
        }
        XCTAssertEqual(r.status, 128 + SIGKILL)
        let out = try recording(dir + "/show", "-out.wav")
        let mic = try recording(dir + "/show", "-mic.wav")
        let reference = try played()
        print("recording: killed after \(reference.count) frames played; the files hold \(out.frameCount) (out) and \(mic.frameCount) (mic)")
        XCTAssertGreaterThan(reference.count, rate, "the show did not run")
        XCTAssertGreaterThanOrEqual(out.frameCount, reference.count - rate, "more than the last second is lost")
        XCTAssertGreaterThanOrEqual(mic.frameCount, reference.count - rate, "more than the last second is lost")
        let step: Float = 1.0 / Float(1 << 23)
        for i in 0..<min(out.frameCount, reference.count) where abs(out.channels[0][i] - reference[i]) > step {
            XCTFail("frame \(i) differs")
            break
        }
    }

    /// A 1 MB tmpfs fills in under a second: the recording stops with a warning, the show
    /// plays its 3 s and exits 0; what was written opens.
    func testAFullDiskStopsTheRecordingNotTheShow() throws {
        let mountPoint = dir + "/small"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try Tool.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint], environment: env)
        guard mount.status == 0 else { throw XCTSkip("cannot mount a tmpfs here (\(mount.stderr)): the full-disk test needs root") }
        defer { _ = try? Tool.run("/bin/umount", [mountPoint], environment: env) }
        let r = try play(["--duration", "3", "--record", mountPoint])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("the show goes on without recording"), r.stderr)
        XCTAssertTrue(r.stderr.contains("stopped after 3 s"), r.stderr)
        XCTAssertGreaterThanOrEqual(try played().count, 3 * rate, "the show was cut short")
        let out = try recording(mountPoint, "-out.wav")
        print("recording: full disk after \(out.frameCount) frames of output")
        XCTAssertGreaterThan(out.frameCount, rate / 10)
        XCTAssertLessThan(out.frameCount, 3 * rate)
    }
}
