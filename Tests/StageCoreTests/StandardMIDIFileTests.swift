import StageCore
import StageTestSupport
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

    /// The parts one after another. A `+` chain of array literals and calls is beyond
    /// Swift 6.0's type checker ("unable to type-check this expression in reasonable time").
    func cat(_ parts: [UInt8]...) -> [UInt8] { Array(parts.joined()) }

    func chunk(_ id: String, _ body: [UInt8]) -> [UInt8] {
        let n = body.count
        return cat(Array(id.utf8), [UInt8(n >> 24), UInt8(n >> 16 & 255), UInt8(n >> 8 & 255), UInt8(n & 255)], body)
    }

    /// Type 1, 480 PPQ: track 1 holds a tempo change, track 2 notes with running status.
    func testTempoMapRunningStatusAndTracksMerge() throws {
        let header = chunk("MThd", [0, 1, 0, 2, 0x01, 0xE0])
        // 120 BPM at 0, 60 BPM from tick 960 (2 beats = 1 s).
        let tempoTrack = chunk(
            "MTrk",
            cat(vlq(0), [0xFF, 0x51, 3, 0x07, 0xA1, 0x20], vlq(960), [0xFF, 0x51, 3, 0x0F, 0x42, 0x40], vlq(0), [0xFF, 0x2F, 0]))
        let noteTrack = chunk(
            "MTrk",
            cat(
                vlq(480), [0x90, 60, 100],  // 0.5 s
                vlq(480), [64, 90],  // running status, 1.0 s
                vlq(0), [0xF0], vlq(3), [1, 2, 0xF7],  // SysEx is skipped
                vlq(480), [0x80, 60, 0],  // 1.5 s at 60 BPM → 1 + 0.5*2 = 2.0 s
                vlq(0), [0xB0, 7, 64], vlq(0), [0xFF, 0x2F, 0]))
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
        let track = chunk("MTrk", cat(vlq(0), [0x90, 60, 100], vlq(10), [0x80, 60, 0], vlq(0), [0xFF, 0x2F, 0]))
        let bytes = header + track
        for cut in 0..<(bytes.count - 4) {
            XCTAssertThrowsError(try StandardMIDIFile(bytes: Array(bytes[0..<cut])), "cut at \(cut)")
        }
        XCTAssertThrowsError(try StandardMIDIFile(bytes: Array("RIFF....".utf8)))
    }

    func header(division: UInt16, tracks: UInt8 = 1) -> [UInt8] {
        chunk("MThd", [0, tracks > 1 ? 1 : 0, 0, tracks, UInt8(division >> 8), UInt8(division & 0xFF)])
    }

    func noteTrack(delta: Int = 10) -> [UInt8] {
        chunk("MTrk", cat(vlq(0), [0x90, 60, 100], vlq(delta), [0x80, 60, 0], vlq(0), [0xFF, 0x2F, 0]))
    }

    /// An SMPTE division of 0 ticks a frame made every time infinite (and `render` crash);
    /// undefined frame rates and a PPQ of 0 are errors too, with the reason.
    func testDivisionsTheStandardDoesNotDefineAreErrors() {
        let cases: [(UInt16, String)] = [
            (0xE700, "0 ticks per frame"),  // 25 fps, 0 ticks
            (0xF028, "16 frames a second"),
            (0x0000, "0 ticks per quarter note"),
        ]
        for (division, expected) in cases {
            XCTAssertThrowsError(try StandardMIDIFile(bytes: header(division: division) + noteTrack())) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
    }

    /// 25 fps × 40 ticks = 1000 ticks a second, tempo changes ignored.
    func testSMPTETime() throws {
        let track = chunk(
            "MTrk",
            cat(vlq(0), [0xFF, 0x51, 3, 0x0F, 0x42, 0x40], vlq(500), [0x90, 60, 100], vlq(1500), [0x80, 60, 0], vlq(0), [0xFF, 0x2F, 0]))
        let file = try StandardMIDIFile(bytes: header(division: 0xE728) + track)
        XCTAssertEqual(file.messages.map(\.seconds), [0.5, 2.0])
        XCTAssertEqual(file.duration, 2.0, accuracy: 1e-12)
        XCTAssertFalse(file.isTruncated)
    }

    /// 1 tick a quarter at the slowest tempo (16.8 s a tick) and the longest delta times:
    /// the file claims thousands of years. It is cut at `maximumSeconds`, and says so.
    func testAHugeClaimedLengthIsCutAtTheMaximum() throws {
        var body = vlq(0) + [0xFF, 0x51, 3, 0xFF, 0xFF, 0xFF] + vlq(0) + [0x90, 60, 100]
        for _ in 0..<50 { body += vlq(0x0FFF_FFFF) + [0x80, 60, 0] }
        body += vlq(0x0FFF_FFFF) + [0xFF, 0x2F, 0]
        let file = try StandardMIDIFile(bytes: header(division: 1) + chunk("MTrk", body))
        XCTAssertTrue(file.isTruncated)
        XCTAssertTrue(file.claimedDuration.isFinite)
        XCTAssertGreaterThan(file.claimedDuration, 1e11)
        XCTAssertEqual(file.duration, StandardMIDIFile.maximumSeconds)
        XCTAssertEqual(file.messages.count, 1, "only the note-on at 0 is within the hour")
        XCTAssertTrue(file.messages.allSatisfy { $0.seconds <= StandardMIDIFile.maximumSeconds })
    }

    func testSystemStatusBytesInATrackAreErrors() {
        let track = chunk("MTrk", vlq(0) + [0xF8] + vlq(0) + [0xFF, 0x2F, 0])
        XCTAssertThrowsError(try StandardMIDIFile(bytes: header(division: 480) + track)) { error in
            XCTAssertTrue("\(error)".contains("0xF8"), "\(error)")
        }
    }

    /// A type 1 file of `n` notes (track 2) over 2 s, and in track 1 `n` tempo changes
    /// or, with `tempos` false, as many text events of the same size (which are skipped).
    func denseFile(_ n: Int, tempos: Bool) -> [UInt8] {
        var first: [UInt8] = []
        var notes: [UInt8] = []
        var last = 0
        for i in 0..<n {
            let tick = i * 1920 / n
            first += vlq(tick - last) + (tempos ? [0xFF, 0x51, 3, 0x07, 0xA1, 0x20] : [0xFF, 0x01, 3, 0x61, 0x62, 0x63])
            notes += vlq(tick - last) + [0x90, UInt8(60 + i % 12), 80] + vlq(0) + [0x80, UInt8(60 + i % 12), 0]
            last = tick
        }
        return header(division: 480, tracks: 2) + chunk("MTrk", first + vlq(0) + [0xFF, 0x2F, 0])
            + chunk("MTrk", notes + vlq(1920 - last) + [0xFF, 0x2F, 0])
    }

    /// Reading time grows with the file, not with the number of tempo changes times the
    /// number of notes (the tempo map was walked from the start for every event: over 100×
    /// here). Two files of the same size, 30,000 notes each, with 30,000 tempo changes or as
    /// many skipped text events: the best thread-CPU time of seven readings of each, interleaved.
    func testReadingTimeIsLinear() throws {
        let files = [denseFile(30000, tempos: false), denseFile(30000, tempos: true)]
        let best = try ScalingMeasure.bestSeconds(cases: 2, rounds: 7) { i in
            XCTAssertEqual(try StandardMIDIFile(bytes: files[i]).duration, 2, accuracy: 1e-9)
        }
        print("MIDI file read, 30000 notes: with 30000 tempo changes \(best[1]) s, without \(best[0]) s")
        XCTAssertLessThan(best[1] / best[0], 10, "tempo changes must cost about what other events cost")
    }
}
