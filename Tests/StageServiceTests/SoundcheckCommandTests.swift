import Foundation
import XCTest

/// `stagerack soundcheck` as a user runs it: a recording made with espeak-ng and sox,
/// `--write` into a copy of racks/vocal-clean.json (its comments kept, the values in);
/// a silent and a clipping recording refused with status 1 and the rack byte for byte as
/// it was.
final class SoundcheckCommandTests: XCTestCase {
    func testWriteKeepsTheRacksTextAndBadRecordingsLeaveItUnchanged() throws {
        guard let espeak = Tool.which("espeak-ng"), let sox = Tool.which("sox") else {
            throw XCTSkip("espeak-ng or sox missing (scripts/install-deps.sh --test installs them)")
        }
        let dir = Tool.temporaryDirectory("soundcheck")
        let env = Tool.environment(home: dir)
        func run(_ program: String, _ args: [String]) throws -> Tool.Result {
            try Tool.run(program, args, environment: env, timeout: 60)
        }
        let text = "She sells sea shells on the sea shore. One, two, one, two: this is the soundcheck. Sing it loud, sister."
        XCTAssertEqual(try run(espeak, ["-w", dir + "/voice.wav", text]).status, 0)
        XCTAssertEqual(try run(sox, ["-n", "-r", "22050", "-c", "1", "-b", "16", dir + "/quiet.wav", "synth", "3", "whitenoise", "vol", "0.0003"]).status, 0)
        XCTAssertEqual(try run(sox, [dir + "/quiet.wav", dir + "/voice.wav", dir + "/take.wav"]).status, 0)
        XCTAssertEqual(try run(sox, ["-v", "8", dir + "/take.wav", dir + "/clipping.wav"]).status, 0)
        let rack = dir + "/voice.json"
        let original = try String(contentsOfFile: Tool.repository + "/racks/vocal-clean.json", encoding: .utf8)
        try original.write(toFile: rack, atomically: true, encoding: .utf8)

        for (take, says) in [("quiet.wav", "the input is silent"), ("clipping.wav", "the input clips")] {
            let r = try run(Tool.stagerack, ["soundcheck", rack, "--input", dir + "/" + take, "--write"])
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains(says) && r.stderr.contains("is unchanged"), r.stderr)
            XCTAssertEqual(try String(contentsOfFile: rack, encoding: .utf8), original, "\(take): the rack is unchanged")
        }

        let r = try run(Tool.stagerack, ["soundcheck", rack, "--input", dir + "/take.wav", "--write"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("comp.threshold") && r.stdout.contains("written into"), r.stdout)
        let written = try String(contentsOfFile: rack, encoding: .utf8)
        XCTAssertNotEqual(written, original)
        let comments = original.split(separator: "\n").filter { $0.hasPrefix("//") }
        XCTAssertEqual(written.split(separator: "\n").filter { $0.hasPrefix("//") }, comments, "the comments are kept")
        XCTAssertTrue(written.contains("\"expansionThreshold\":"), "the gate is written")
        XCTAssertEqual(try run(Tool.stagerack, ["validate", rack]).status, 0)
    }
}
