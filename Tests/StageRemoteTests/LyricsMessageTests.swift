import Foundation
import StageCore
import StageRemote
import XCTest

/// The page's lyrics message: sent after the state when the song has lyrics (on connect and
/// on a song change), blocks and the block of each section, parsed back as JSON; bounded:
/// the largest ChordPro file accepted fits, a bigger message says `tooLarge`; the meters
/// carry the index of the section playing.
final class LyricsMessageTests: XCTestCase {
    func view(lyrics: String, sections: [String]) throws -> RemoteView {
        var v = RemoteView(plan: try ParameterStateTests.plan(), songs: ["one", "two"], song: 1, canBypass: { _ in true })
        v.lyrics = SongLyrics(try ChordProReader.read(lyrics), sections: sections)
        return v
    }

    func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func testTheMessageCarriesTheBlocksAndEachSectionsBlock() throws {
        let v = try view(lyrics: "{title: \"Quote\" \\ me}\n{sov}\nA[G]mazing \"grace\"\n{c: slow}\n{eov}\n{soc}\n[D/F#]la\n{eoc}", sections: ["intro", "verse", "chorus"])
        let messages = WebProtocol.lyrics(v)
        XCTAssertEqual(messages.count, 1)
        let m = try json(messages[0])
        XCTAssertEqual(m["type"] as? String, "lyrics")
        XCTAssertEqual(m["song"] as? Int, 2)
        XCTAssertEqual(m["title"] as? String, "\"Quote\" \\ me")
        XCTAssertEqual(m["names"] as? [String], ["intro", "verse", "chorus"])
        let sections = try XCTUnwrap(m["sections"] as? [Any])
        XCTAssertTrue(sections[0] is NSNull)
        XCTAssertEqual(sections[1] as? Int, 0)
        XCTAssertEqual(sections[2] as? Int, 1)
        let blocks = try XCTUnwrap(m["blocks"] as? [[String: Any]])
        XCTAssertEqual(blocks.map { $0["kind"] as? String }, ["verse", "chorus"])
        let lines = try XCTUnwrap(blocks[0]["lines"] as? [Any])
        XCTAssertEqual(lines[0] as? [[String]], [["", "A"], ["G", "mazing \"grace\""]])
        XCTAssertEqual((lines[1] as? [String: String])?["comment"], "slow")
        // After a song change the state comes with the new song's lyrics.
        var other = v
        other.song = 0
        let changes = WebProtocol.changes(from: other, to: v)
        XCTAssertEqual(changes.count, 2)
        XCTAssertEqual(try json(changes[1])["type"] as? String, "lyrics")
        var none = v
        none.lyrics = nil
        XCTAssertEqual(WebProtocol.lyrics(none), [], "no message for a song without lyrics")
    }

    func testTheMessageIsBounded() throws {
        // The worst the 64 kB a ChordPro file may have: a chord and a quote for every 4 bytes.
        let worst = String(repeating: "[A]\"", count: 64 * 1024 / 4 - 1)
        XCTAssertLessThanOrEqual(worst.utf8.count, 64 << 10)
        let big = WebProtocol.lyrics(try view(lyrics: worst, sections: []))[0]
        XCTAssertLessThanOrEqual(big.utf8.count, WebProtocol.maxLyricsMessage, "the largest file accepted fits")
        XCTAssertNil(try json(big)["tooLarge"])
        var v = try view(lyrics: "la", sections: [])
        v.lyrics?.blocks[0].lines = [LyricLine](repeating: .words([.init(chord: "A", text: "\"")]), count: 30_000)
        let bounded = WebProtocol.lyrics(v)[0]
        XCTAssertLessThan(bounded.utf8.count, 200)
        XCTAssertEqual(try json(bounded)["tooLarge"] as? Bool, true)
    }

    func testTheMetersCarryTheSectionsIndex() {
        var m = RemoteMeters()
        m.section = "chorus"
        m.nextSection = nil
        m.sectionIndex = 2
        XCTAssertTrue(WebProtocol.meters(m).contains(#""section":"chorus","nextSection":null,"sectionIndex":2,"#), WebProtocol.meters(m))
    }
}
