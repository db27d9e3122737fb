import Foundation
import StageControl
import StageCore
import XCTest

/// A setlist song's `"lyrics"`: the ChordPro file is read with the setlist (a missing or
/// broken one is an error then, located in the setlist or at its own line:column) and
/// matched to the sections of the song's rack, in the song clock's order.
final class SongLyricsTests: XCTestCase {
    static let rack = """
        { "format": 2, "units": { "mic": { "type": "input" }, "out": { "type": "output" } }, "connections": ["mic -> out"] }
        """

    func folder(lyrics: String, cho: String?) -> String {
        let setlist = """
            { "format": 2, "songs": [
              { "rack": "r.json", "tempo": 120, "countIn": 1, "lyrics": \(lyrics),
                "sections": [ { "name": "verse", "at": "2:1" }, { "name": "chorus", "at": "6:1" }, { "name": "solo", "at": "10:1" } ] } ] }
            """
        var files = ["set.json": setlist, "r.json": Self.rack]
        if let cho { files["song.cho"] = cho }
        return SongFiles.write(files)
    }

    func errors(_ body: () throws -> Void) -> [String] {
        do {
            try body()
            return []
        } catch {
            return (error as? RackError)?.diagnostics.map(\.description) ?? ["\(error)"]
        }
    }

    func testTheLyricsAreMatchedToTheSongsSectionsInTheClocksOrder() throws {
        let dir = folder(lyrics: "\"song.cho\"", cho: "{title: T}\n{sov}\n[G]one\n{eov}\n{soc}\n[C]two\n{eoc}\n")
        let setlist = try RackFiles.readSetlist(dir + "/set.json")
        XCTAssertEqual(setlist.entries[0].song.lyrics?.blocks.count, 2)
        let rack = try RackFiles.readSong(setlist, 0, registry: PlayerRacks.registry)
        // The count-in adds no section here (no track), so the clock's sections are the setlist's.
        let lyrics = try XCTUnwrap(rack.lyrics)
        XCTAssertEqual(lyrics.sectionNames, rack.timeline.sections.map(\.name))
        XCTAssertEqual(lyrics.sectionNames, ["verse", "chorus", "solo"])
        XCTAssertEqual(lyrics.sectionBlocks, [0, 1, nil])
        XCTAssertEqual(lyrics.title, "T")
    }

    func testAMissingOrBrokenFileIsAnErrorWhenTheSetlistIsRead() {
        let missing = errors { _ = try RackFiles.readSetlist(folder(lyrics: "\"nope.cho\"", cho: nil) + "/set.json") }
        XCTAssertEqual(missing.count, 1, "\(missing)")
        XCTAssertTrue(missing.first?.hasSuffix("set.json:2:61: songs[0].lyrics: \"nope.cho\": no such file") ?? false, "\(missing)")
        let broken = errors { _ = try RackFiles.readSetlist(folder(lyrics: "\"song.cho\"", cho: "{sov}\nla [G la\n{eov}\n") + "/set.json") }
        XCTAssertEqual(broken.count, 1, "\(broken)")
        XCTAssertTrue(broken.first?.hasSuffix("song.cho:2:4: a chord \"[\" is never closed with \"]\"") ?? false, "\(broken)")
        let notText = errors { _ = try RackFiles.readSetlist(folder(lyrics: "7", cho: nil) + "/set.json") }
        XCTAssertTrue(notText.first?.contains("songs[0].lyrics: must be the song's ChordPro file") ?? false, "\(notText)")
        let big = String(repeating: "la la la la la la la la la la la la\n", count: 2000)
        let tooBig = errors { _ = try RackFiles.readSetlist(folder(lyrics: "\"song.cho\"", cho: big) + "/set.json") }
        XCTAssertTrue(tooBig.first?.contains("a ChordPro file is at most 64 kB") ?? false, "\(tooBig)")
    }
}
