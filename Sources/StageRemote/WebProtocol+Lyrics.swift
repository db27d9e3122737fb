import StageCore

extension WebProtocol {
    /// The most bytes a lyrics message takes: a ChordPro file of `RackFiles.maxLyricsBytes`
    /// stays below it; a bigger message is sent as `"tooLarge": true` with no blocks.
    public static let maxLyricsMessage = 256 << 10

    /// The song's lyrics for the page, sent after the state (on connect and on a song
    /// change); none when the song has none:
    /// `{"type":"lyrics","song":1,"title":"...","blocks":[{"kind":"verse","label":"Verse 1",
    /// "lines":[[["","Amazing "],["G","grace"]],{"comment":"slowly"}]}],"sections":[0,null,1],"names":["verse","solo","chorus"]}`:
    /// a line is a list of [chord, words], a comment, or `{"time":83.5,"words":[...]}` (a
    /// line sung from that time in the song's track); `sections[i]`: the block of the
    /// song's section i (`SongLyrics`), `names[i]` its name. Thread: the web server's.
    public static func lyrics(_ v: RemoteView) -> [String] {
        guard let l = v.lyrics else { return [] }
        let blocks = l.blocks.map { b in
            let lines = b.lines.map { line -> String in
                switch line {
                case .comment(let text): return "{\"comment\":\(quote(text))}"
                case .words(let segments): return segmentList(segments)
                case .timed(let seconds, let segments): return "{\"time\":\(number(Float(seconds))),\"words\":\(segmentList(segments))}"
                }
            }
            return "{\"kind\":\(quote(b.kind)),\"label\":\(b.label.map(quote) ?? "null"),\"number\":\(b.number),\"lines\":[\(lines.joined(separator: ","))]}"
        }
        let sections = l.sectionBlocks.map { $0.map(String.init) ?? "null" }.joined(separator: ",")
        let head = "{\"type\":\"lyrics\",\"song\":\(v.song + 1),\"title\":\(l.title.map(quote) ?? "null"),"
        let names = l.sectionNames.map(quote).joined(separator: ",")
        let message = head + "\"blocks\":[\(blocks.joined(separator: ","))],\"sections\":[\(sections)],\"names\":[\(names)]}"
        if message.utf8.count > maxLyricsMessage { return [head + "\"tooLarge\":true,\"blocks\":[],\"sections\":[],\"names\":[]}"] }
        return [message]
    }

    /// `[["","Amazing "],["G","grace"]]`: a line's [chord, words] segments.
    static func segmentList(_ segments: [LyricLine.Segment]) -> String {
        "[\(segments.map { "[\(quote($0.chord)),\(quote($0.text))]" }.joined(separator: ","))]"
    }
}
