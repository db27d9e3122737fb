import StageCore
import StageTestSupport
import XCTest

/// The ChordPro reader: sections (environments, labels, paragraphs named by a comment, a
/// repeated chorus), chords over the words, and every broken line an error at its line and
/// column; the lyrics matched to a song's section names as racks/README.md documents.
final class ChordProTests: XCTestCase {
    static let song = """
        {title: Amazing Grace}
        # a comment for whoever edits the file
        {artist: John Newton}
        {start_of_verse: Verse 1}
        A[G]mazing [G7]grace, how [C]sweet the [G]sound
        That saved a wretch like me
        {end_of_verse}

        {soc}
        [D/F#]Praise, [Bbmaj7]praise [*Rit.]now
        {eoc}

        {c: Verse 2}
        'Twas [G]grace that taught my heart to fear

        {chorus}
        {sob: label="Bridge"}
        {comment: softly}
        [Em]Through many dangers
        {eob}
        """

    func testSectionsLabelsAndChords() throws {
        let s = try ChordProReader.read(Self.song)
        XCTAssertEqual(s.title, "Amazing Grace")
        XCTAssertEqual(s.blocks.map(\.kind), ["verse", "chorus", "verse", "chorus", "bridge"])
        XCTAssertEqual(s.blocks.map(\.label), ["Verse 1", nil, "Verse 2", nil, "Bridge"])
        XCTAssertEqual(s.blocks.map(\.number), [1, 1, 2, 1, 1], "the repeated chorus is chorus 1 again")
        XCTAssertEqual(s.blocks.map(\.line), [4, 9, 14, 16, 17])
        XCTAssertEqual(s.blocks[0].lines.count, 2)
        let first: [LyricLine.Segment] = [
            .init(chord: "", text: "A"), .init(chord: "G", text: "mazing "), .init(chord: "G7", text: "grace, how "),
            .init(chord: "C", text: "sweet the "), .init(chord: "G", text: "sound"),
        ]
        XCTAssertEqual(s.blocks[0].lines[0], .words(first))
        XCTAssertEqual(s.blocks[0].lines[1], .words([.init(chord: "", text: "That saved a wretch like me")]))
        XCTAssertEqual(
            s.blocks[1].lines[0],
            .words([.init(chord: "D/F#", text: "Praise, "), .init(chord: "Bbmaj7", text: "praise "), .init(chord: "*Rit.", text: "now")]))
        XCTAssertEqual(s.blocks[3].lines, s.blocks[1].lines, "{chorus} repeats the last chorus")
        XCTAssertEqual(s.blocks[4].lines.first, .comment("softly"), "a comment inside an environment is a line")
    }

    /// A line that starts with a time tag (`[1:23.5]`) is sung from that time in the song's
    /// track; anything else in brackets at a line's start is a chord.
    func testLinesTimedInTheTrack() throws {
        let s = try ChordProReader.read("""
            {sov}
            [0:04.5] A[G]mazing grace
            [1:02]   [C]how sweet
            [10:00]
            [1:5] not a time: a chord
            [C:12] nor this
            {eov}
            """)
        let lines = s.blocks[0].lines
        XCTAssertEqual(lines.count, 5)
        XCTAssertEqual(lines[0], .timed(4.5, [.init(chord: "", text: "A"), .init(chord: "G", text: "mazing grace")]))
        XCTAssertEqual(lines[1], .timed(62, [.init(chord: "C", text: "how sweet")]))
        XCTAssertEqual(lines[2], .timed(600, [.init(chord: "", text: "")]))
        XCTAssertEqual(lines[3], .words([.init(chord: "1:5", text: " not a time: a chord")]))
        XCTAssertEqual(lines[4], .words([.init(chord: "C:12", text: " nor this")]))
        XCTAssertEqual(problems("[0:01] good [G so"), ["1:13: a chord \"[\" is never closed with \"]\""], "columns count the time tag")
    }

    func problems(_ text: String) -> [String] {
        do {
            _ = try ChordProReader.read(text)
            return []
        } catch {
            return error.problems.map { "\($0.location): \($0.message)" }
        }
    }

    func testBrokenFilesAreErrorsAtTheirLineAndColumn() {
        XCTAssertEqual(problems("[G]fine\n  la [C la"), ["2:6: a chord \"[\" is never closed with \"]\""])
        XCTAssertEqual(problems("la []la"), ["1:4: an empty chord \"[]\""])
        XCTAssertEqual(problems("la la] la"), ["1:6: a \"]\" with no \"[\" before it"])
        XCTAssertEqual(problems("[G]la\n{title: x"), ["2:1: a directive \"{\" must end with \"}\" on the same line"])
        XCTAssertEqual(problems("{sov}\nla\n {eoc}\n{eov}"), ["3:2: {end_of_chorus} ends {start_of_verse} (line 1); write {end_of_verse}"])
        XCTAssertEqual(problems("{sov}\nla\n{soc}\nlo\n{eoc}"), [
            "3:1: {start_of_chorus} inside {start_of_verse} (line 1); end that one first",
            "5:1: {end_of_chorus} ends {start_of_verse} (line 1); write {end_of_verse}",
            "1:1: {start_of_verse} is never ended; add {end_of_verse}",
        ])
        XCTAssertEqual(problems("la\n{eov}"), ["2:1: {end_of_verse} with no {start_of_verse} before it"])
        XCTAssertEqual(problems("{chorus}\nla"), ["1:1: {chorus} repeats the last chorus, and there is none before it"])
        let typo = problems("{titel: x}\nla")
        XCTAssertTrue(typo.count == 1 && typo[0].hasPrefix("1:1: unknown directive {titel} (did you mean") && typo[0].contains("\"title\""), "\(typo)")
        XCTAssertEqual(problems("{title: x}\n\n# nothing"), ["1:1: no lyrics: the file has no lines of words"])
        XCTAssertEqual(problems("la [G G] la"), ["1:4: \"[G G]\" is not a chord (a chord has no spaces; an annotation is [*text])"])
        XCTAssertEqual(problems("\u{0}\u{1}[[[[{{{{"), ["1:4: a \"[\" inside the chord opened at column 3"], "garbage is an error, never a crash")
        XCTAssertEqual(problems("{x_mine: ok}\n{key: G}\n{new_page}\nla"), [], "metadata, layout and x_ directives are read and left out")
    }

    func testLyricsFollowTheSectionNames() throws {
        let s = try ChordProReader.read(Self.song)
        // verse 1, chorus, verse 2, chorus (the repeat), bridge
        let names = ["start", "Verse 1", "chorus", "verse 2", "Chorus", "solo", "bridge", "chorus", "verse"]
        let l = SongLyrics(s, sections: names)
        XCTAssertEqual(l.sectionBlocks, [nil, 0, 1, 2, 1, nil, 4, 1, 0])
        // By kind, in order: the k-th "verse" is the k-th verse, the last repeating.
        let byKind = SongLyrics(s, sections: ["verse", "chorus", "verse", "chorus", "verse"])
        XCTAssertEqual(byKind.sectionBlocks, [0, 1, 2, 1, 2])
        // A label wins over a kind: a paragraph named by {c: Verse 2} is "verse 2" either way.
        let labelled = try ChordProReader.read("{c: Intro talk}\nhello\n\n{c: Chorus}\n[C]la la")
        XCTAssertEqual(labelled.blocks.map(\.label), ["Intro talk", "Chorus"])
        XCTAssertEqual(SongLyrics(labelled, sections: ["intro_talk", "CHORUS", "verse 2"]).sectionBlocks, [0, 1, 1])
    }

    /// 3,000 texts of random pieces of ChordPro (directives, brackets, labels, blank lines,
    /// stray bytes): each is read or refused with located problems, never a crash, and a
    /// song read matches any section names.
    func testRandomTextsAreReadOrRefusedNeverACrash() {
        let pieces = [
            "{sov}", "{eov}", "{soc}", "{eoc}", "{sob: B}", "{eob}", "{chorus}", "{c: Chorus}", "{title: x}", "{start_of_x}",
            "{end_of_x}", "{", "}", "[", "]", "[G]", "[*a]", "[]", "la ", "\n", "\n\n", "#", ":", "\t", "{start_of_verse: label=\"V 1\"}",
            "\u{0}", "é", "\r\n", "[F#m7/C#]", "{unknown}", "{x_y}", "{eoc",
        ]
        var random = SeededGenerator(seed: 30)
        var read = 0
        var refused = 0
        for _ in 0..<3000 {
            let count = Int.random(in: 1...40, using: &random)
            let text = (0..<count).map { _ in pieces.randomElement(using: &random)! }.joined()
            do {
                let song = try ChordProReader.read(text)
                XCTAssertFalse(song.blocks.isEmpty)
                let l = SongLyrics(song, sections: ["verse", "chorus", "verse 2", "B", "x", "solo"])
                XCTAssertTrue(l.sectionBlocks.allSatisfy { $0 == nil || song.blocks.indices.contains($0!) })
                read += 1
            } catch {
                XCTAssertFalse(error.problems.isEmpty)
                XCTAssertTrue(error.problems.allSatisfy { $0.location.line >= 1 && $0.location.column >= 1 }, "\(error.problems)")
                refused += 1
            }
        }
        XCTAssertGreaterThan(read, 100, "some read")
        XCTAssertGreaterThan(refused, 100, "some refused")
    }
}
