import StageCore
import XCTest

final class StandardMIDIFileTests: XCTestCase {
    func vlq(_ v: Int) -> [UInt8] {
        var bytes = [UInt8(v & 0x7F)]
        var x = v >> 7
        while x > 0 {
            bytes.insert(UInt8(x & 0x7F) | 0x80, at: 0)
            x >>= 7
        }
        return bytes
    }

    func chunk(_ id: String, _ body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + [UInt8(body.count >> 24), UInt8(body.count >> 16 & 255), UInt8(body.count >> 8 & 255), UInt8(body.count & 255)] + body
    }

    /// Type 1, 480 PPQ: track 1 holds a tempo change, track 2 notes with running status.
    func testTempoMapRunningStatusAndTracksMerge() throws {
        let header = chunk("MThd", [0, 1, 0, 2, 0x01, 0xE0])
        // 120 BPM at 0, 60 BPM from tick 960 (2 beats = 1 s).
        let tempoTrack = chunk(
            "MTrk",
            vlq(0) + [0xFF, 0x51, 3, 0x07, 0xA1, 0x20] + vlq(960) + [0xFF, 0x51, 3, 0x0F, 0x42, 0x40] + vlq(0) + [0xFF, 0x2F, 0])
        let noteTrack = chunk(
            "MTrk",
            vlq(480) + [0x90, 60, 100]  // 0.5 s
                + vlq(480) + [64, 90]  // running status, 1.0 s
                + vlq(0) + [0xF0] + vlq(3) + [1, 2, 0xF7]  // SysEx is skipped
                + vlq(480) + [0x80, 60, 0]  // 1.5 s at 60 BPM → 1 + 0.5*2 = 2.0 s
                + vlq(0) + [0xB0, 7, 64] + vlq(0) + [0xFF, 0x2F, 0])
        let file = try StandardMIDIFile(bytes: header + tempoTrack + noteTrack)
        XCTAssertEqual(file.format, 1)
        XCTAssertEqual(file.messages.map(\.message), [
            .noteOn(channel: 0, note: 60, velocity: 100), .noteOn(channel: 0, note: 64, velocity: 90),
            .noteOff(channel: 0, note: 60), .controlChange(channel: 0, controller: 7, value: 64),
        ])
        XCTAssertEqual(file.messages.map(\.seconds), [0.5, 1.0, 2.0, 2.0])
        XCTAssertEqual(file.duration, 2.0, accuracy: 1e-9)
    }

    func testTruncatedFilesAreErrorsNotCrashes() {
        let header = chunk("MThd", [0, 0, 0, 1, 0x01, 0xE0])
        let track = chunk("MTrk", vlq(0) + [0x90, 60, 100] + vlq(10) + [0x80, 60, 0] + vlq(0) + [0xFF, 0x2F, 0])
        let bytes = header + track
        for cut in 0..<(bytes.count - 4) {
            XCTAssertThrowsError(try StandardMIDIFile(bytes: Array(bytes[0..<cut])), "cut at \(cut)")
        }
        XCTAssertThrowsError(try StandardMIDIFile(bytes: Array("RIFF....".utf8)))
    }
}
