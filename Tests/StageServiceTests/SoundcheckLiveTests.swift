import Foundation
import XCTest

/// `stagerack soundcheck RACK` on the live input, through alsa-lib's file plugin (no sound
/// hardware): the capture device reads an espeak-ng take (3 s of near silence, then the
/// voice), paced to the wall clock, with the guide on stderr; the proposals equal those of
/// `--input` on the same take (within 1 dB, the same high-pass). A silent live take is
/// refused and the rack left byte for byte; a capture device that is not there is explained
/// as `play` explains it.
final class SoundcheckLiveTests: XCTestCase {
    var dir = ""
    var env: [String: String] = [:]
    let rate = 48000

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: Tool.stagerack) else {
            throw XCTSkip("\(Tool.stagerack) is not built (swift test builds it with the tests)")
        }
        dir = Tool.temporaryDirectory(name.filter { $0.isLetter })
        let config = """
            pcm.sc_null { type null }
            pcm.sc_in { type file  slave.pcm "sc_null"  format "raw"  file "/dev/null"  infile "\(dir)/in.raw" }
            """
        try config.write(toFile: dir + "/alsa.conf", atomically: true, encoding: .utf8)
        let original = try String(contentsOfFile: Tool.repository + "/racks/vocal-clean.json", encoding: .utf8)
        try original.write(toFile: dir + "/voice.json", atomically: true, encoding: .utf8)
        env = Tool.environment(["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:\(dir)/alsa.conf"], home: dir)
    }

    func run(_ program: String, _ args: [String]) throws -> Tool.Result {
        try Tool.run(program, args, environment: env, timeout: 60)
    }

    /// `soundcheck` on the live input (the file plugin's `sc_in`, stereo float) for `seconds`.
    func live(quiet: Double, sing: Double, _ extra: [String] = []) throws -> Tool.Result {
        try run(Tool.stagerack, ["soundcheck", dir + "/voice.json", "--no-config", "--capture", "sc_in", "--format", "FLOAT_LE",
                                 "--capture-channels", "2", "--quiet", String(quiet), "--sing", String(sing)] + extra)
    }

    /// The proposals printed: `unit.parameter` → value.
    func proposals(_ stdout: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in stdout.split(separator: "\n") where line.hasPrefix("  ") {
            let words = line.split(separator: " ")
            if words.count >= 2, words[0].contains("."), let v = Double(words[1]) { values[String(words[0])] = v }
        }
        return values
    }

    /// Writes `wav` as the capture file: stereo 32-bit float, headerless; returns its frames.
    func capture(_ wav: String, sox: String) throws -> Int {
        let r = try run(sox, [wav, "-t", "raw", "-e", "floating-point", "-b", "32", "-c", "2", dir + "/in.raw"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let bytes = try FileManager.default.attributesOfItem(atPath: dir + "/in.raw")[.size] as? Int ?? 0
        return bytes / 8
    }

    func testTheLiveTakeProposesWhatTheRecordingDoes() throws {
        guard let espeak = Tool.which("espeak-ng"), let sox = Tool.which("sox") else {
            throw XCTSkip("espeak-ng or sox missing (scripts/install-deps.sh --test installs them)")
        }
        let text = "Sing it loud: she sells sea shells on the sea shore. This is the soundcheck, one, two. Yes, sister, sing it softly."
        XCTAssertEqual(try run(espeak, ["-w", dir + "/voice.wav", text]).status, 0)
        XCTAssertEqual(try run(sox, [dir + "/voice.wav", "-r", "48000", dir + "/voice48.wav"]).status, 0)
        XCTAssertEqual(try run(sox, ["-n", "-r", "48000", "-c", "1", dir + "/quiet.wav", "synth", "3", "whitenoise", "vol", "0.0003"]).status, 0)
        XCTAssertEqual(try run(sox, [dir + "/quiet.wav", dir + "/voice48.wav", "-e", "floating-point", "-b", "32", dir + "/take.wav", "gain", "-6"]).status, 0)
        let frames = try capture(dir + "/take.wav", sox: sox)
        let sing = Double(frames) / Double(rate) - 3
        XCTAssertGreaterThan(sing, 5, "the espeak-ng take is long enough")

        let offline = try run(Tool.stagerack, ["soundcheck", dir + "/voice.json", "--input", dir + "/take.wav"])
        XCTAssertEqual(offline.status, 0, offline.stderr)
        let started = Date()
        let r = try live(quiet: 3, sing: (sing * 1000).rounded(.down) / 1000)
        let wall = Date().timeIntervalSince(started)
        XCTAssertEqual(r.status, 0, r.stderr)
        let expected = proposals(offline.stdout), got = proposals(r.stdout)
        print("soundcheck live: \(String(format: "%.1f", wall)) s for a take of \(String(format: "%.1f", 3 + sing)) s; "
            + "offline \(expected.sorted { $0.key < $1.key }), live \(got.sorted { $0.key < $1.key })")
        XCTAssertEqual(Set(got.keys), Set(expected.keys), r.stdout)
        XCTAssertTrue(expected.keys.contains("comp.threshold") && expected.keys.contains("deess.threshold"), offline.stdout)
        for (key, value) in expected {
            let tolerance: Double = key.hasPrefix("eq.frequency") ? 0 : 1
            XCTAssertEqual(got[key] ?? .nan, value, accuracy: tolerance, "\(key): live against --input")
        }
        XCTAssertTrue(r.stdout.hasPrefix("soundcheck of the live input (sc_in): "), r.stdout)

        // The guide: quiet, then sing, counted down; paced to the wall clock.
        let lines = r.stderr.split(separator: "\n").map(String.init)
        let quiet = lines.firstIndex { $0.hasPrefix("stay quiet") }, singing = lines.firstIndex { $0.hasPrefix("sing and speak at show level") }
        XCTAssertNotNil(quiet, r.stderr)
        XCTAssertNotNil(singing, r.stderr)
        XCTAssertLessThan(quiet ?? 1, singing ?? 0, "quiet comes first")
        let counts: [Int] = lines.filter { $0.hasPrefix("sing and speak") }.compactMap { line in
            line.split(separator: ":").last?.split(separator: " ").first.flatMap { Int($0) }
        }
        XCTAssertGreaterThanOrEqual(counts.count, 2, r.stderr)
        XCTAssertEqual(counts, counts.sorted(by: >), "the countdown goes down: \(counts)")
        XCTAssertTrue(r.stderr.contains("paced to the wall clock"), r.stderr)
        XCTAssertGreaterThan(wall, (3 + sing) * 0.95, "the take took its own length")
    }

    func testASilentLiveTakeIsRefusedAndWritesNothing() throws {
        guard let sox = Tool.which("sox") else { throw XCTSkip("sox missing (scripts/install-deps.sh --test installs it)") }
        XCTAssertEqual(try run(sox, ["-n", "-r", "48000", "-c", "1", dir + "/quiet.wav", "synth", "8", "whitenoise", "vol", "0.0003"]).status, 0)
        _ = try capture(dir + "/quiet.wav", sox: sox)
        let before = try String(contentsOfFile: dir + "/voice.json", encoding: .utf8)
        let r = try live(quiet: 2.5, sing: 5, ["--write"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("the live input (sc_in): the input is silent") && r.stderr.contains("is unchanged"), r.stderr)
        XCTAssertEqual(try String(contentsOfFile: dir + "/voice.json", encoding: .utf8), before, "the rack is unchanged")
    }

    func testNoCaptureDeviceIsExplainedAsPlayDoes() throws {
        let before = try String(contentsOfFile: dir + "/voice.json", encoding: .utf8)
        let r = try run(Tool.stagerack, ["soundcheck", dir + "/voice.json", "--no-config", "--capture", "sc_nothing", "--write"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("error: stagerack soundcheck: cannot open the capture device \"sc_nothing\": ALSA has no device of that name"),
                      r.stderr)
        XCTAssertFalse(r.stderr.contains("to try play"), "no hint about play: \(r.stderr)")
        XCTAssertEqual(try String(contentsOfFile: dir + "/voice.json", encoding: .utf8), before)
        let usage = try run(Tool.stagerack, ["soundcheck", dir + "/voice.json", "--input", "x.wav", "--quiet", "3"])
        XCTAssertEqual(usage.status, 2, usage.stderr)
        XCTAssertTrue(usage.stderr.contains("--quiet is for the live input"), usage.stderr)
    }
}
