import StageOSC
import XCTest

import StageSync

/// The sync messages between boxes: HMAC-SHA256 signatures (against Python's hmac, which
/// Tests/cli/sync.sh signs with too), the payload's format, the checks
/// a datagram passes in order, and the replay window.
final class SyncMessageTests: XCTestCase {
    let key = try! SyncKey("the band's long shared secret")

    func testTheSignatureIsHMACSHA256() throws {
        // Against Python's hmac (an implementation of its own): hmac.new(b"the band's long
        // shared secret", b"what do ya want for nothing?", hashlib.sha256).hexdigest()
        let mac = key.signature(Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(SyncKey.hex(mac), "71f00d90a1121c46e504179ee20ea77e2664c6fa3e6233b330de6514668e983c")
        XCTAssertEqual(SyncKey.unhex(SyncKey.hex(mac)), mac)
    }

    func testAShortOrMissingKeyIsRefusedClearly() {
        XCTAssertThrowsError(try SyncKey(nil)) { XCTAssertTrue("\($0)".contains("sync needs syncKey")) }
        XCTAssertThrowsError(try SyncKey("short")) { XCTAssertTrue("\($0)".contains("too short (5 characters): at least 16")) }
        XCTAssertNoThrow(try SyncKey(String(repeating: "k", count: 16)))
    }

    func testAPayloadReadsBackAsWritten() throws {
        var m = SyncMessage(session: "00aa11bb22cc33dd", sequence: 42, kind: .song, song: 3, beat: 132.5)
        m.snapshot = "Solo"
        m.ahead = 3.46
        m.bar = 4
        m.section = "Chorus 2"
        m.transpose = -2
        XCTAssertEqual(try SyncMessage.parse(m.payload).get(), m)
        var jump = SyncMessage(session: "00aa11bb22cc33dd", sequence: 43, kind: .section, song: 3)
        jump.jump = .repeatCurrent
        jump.at = 32
        XCTAssertEqual(try SyncMessage.parse(jump.payload).get(), jump)
    }

    func testASectionJumpWithoutItsWayOrBarOrWithABadOneIsRefused() {
        let head = "stagerack-sync 1\nsession ab\nseq 1\nkind section\nsong 0"
        let cases: [(String, String)] = [
            ("\njump next", "a section message without jump and at"), ("\nat 8", "a section message without jump and at"),
            ("\njump sideways\nat 8", "jump is not next or repeat"), ("\njump next\nat eight", "at is not a song beat"),
        ]
        for (tail, message) in cases {
            guard case .failure(let e) = SyncMessage.parse(head + tail) else { return XCTFail("took \(tail.debugDescription)") }
            XCTAssertEqual(e.message, message)
        }
    }

    func testASignedDatagramOpensAndEveryAlterationIsRefused() throws {
        let m = SyncMessage(session: "00aa11bb22cc33dd", sequence: 7, kind: .song, song: 1, beat: 64)
        var bytes = m.datagram(key: key)
        XCTAssertEqual(try open(bytes).get(), m)
        // Another key.
        let other = try SyncKey("another band's long secret")
        XCTAssertEqual(open(m.datagram(key: other)).refusal, "signature")
        // One byte of the payload changed on the way (song 1 -> song 2).
        let at = try XCTUnwrap(bytes.indices.first { i in bytes[i] == UInt8(ascii: "1") && bytes[i - 5..<i] == ArraySlice("song ".utf8) })
        bytes[at] = UInt8(ascii: "2")
        XCTAssertEqual(open(bytes).refusal, "signature")
        // Unsigned: the payload alone.
        let unsigned = osc(SyncMessage.path, [m.payload])
        XCTAssertEqual(open(unsigned).refusal, "unsigned")
        // Garbage, and OSC to another address.
        XCTAssertEqual(open(Array("hello, is this the sync port?".utf8)).refusal, "garbage")
        XCTAssertEqual(open(osc("/stagerack/song", ["x", "y"])).refusal, "address")
    }

    func testALineBreakInsideAValueIsRefused() {
        for text in ["stagerack-sync 1\nsession ab\nseq 1\nkind song\nsong 0\nsection a\r\nsnapshot b",
                     "stagerack-sync 1\nsession ab\nseq 1\nkind song\nsong 0\nsection a\u{2028}b"] {
            guard case .failure(let e) = SyncMessage.parse(text) else { return XCTFail("took \(text.debugDescription)") }
            XCTAssertEqual(e.message, "a line break inside a line")
        }
    }

    func testASignedButMalformedPayloadIsRefused() {
        let text = "stagerack-sync 1\nsession ab\nseq 1\nkind dance\nsong 0"
        let bytes = osc(SyncMessage.path, [text, SyncKey.hex(key.signature(Array(text.utf8)))])
        XCTAssertEqual(open(bytes).refusal, "malformed")
    }

    func testTheReplayWindowTakesEachSequenceOfEachRunOnce() {
        var w = SyncReplayWindow()
        XCTAssertEqual(w.take(session: "a", sequence: 1), .newSession(first: true))
        XCTAssertEqual(w.take(session: "a", sequence: 2), .accepted)
        XCTAssertEqual(w.take(session: "a", sequence: 2), .replayed(last: 2))
        XCTAssertEqual(w.take(session: "a", sequence: 1), .replayed(last: 2))
        XCTAssertEqual(w.take(session: "a", sequence: 9), .accepted)  // a gap: messages lost, not replayed
        XCTAssertEqual(w.take(session: "b", sequence: 1), .newSession(first: false))  // the sender restarted
        XCTAssertEqual(w.take(session: "a", sequence: 9), .replayed(last: 9))  // its earlier run, replayed
        XCTAssertEqual(w.take(session: "b", sequence: 1), .replayed(last: 1))
        XCTAssertEqual(w.take(session: "b", sequence: 2), .accepted)  // an earlier run's replay does not lock out the current one
        XCTAssertEqual(w.current, "b")
    }

    func testFollowerAddresses() throws {
        XCTAssertEqual(try SyncAddress.parseList("192.168.1.21:9720, drums.local:9721").get(),
                       [SyncAddress(host: "192.168.1.21", port: 9720), SyncAddress(host: "drums.local", port: 9721)])
        XCTAssertThrowsError(try SyncAddress.parseList("192.168.1.21").get())
        XCTAssertThrowsError(try SyncAddress.parseList("keys:70000").get())
    }

    /// OSC messages of strings, through liblo (as a stranger on the network would send them).
    func osc(_ path: String, _ strings: [String]) -> [UInt8] {
        OSCPacket(path: path, arguments: strings.map { .string($0) }).encoded()
    }

    func open(_ bytes: [UInt8]) -> Result<SyncMessage, SyncRefusal> {
        var b = bytes
        return b.withUnsafeMutableBytes { SyncMessage.open($0, key: key) }
    }
}

extension Result where Failure == SyncRefusal {
    var refusal: String? {
        if case .failure(let r) = self { return r.class }
        return nil
    }
}

