/// The spoken cues of a song's sections (racks/README.md, "Spoken cues"), handed to the
/// rack's `click` units as their `songCues` setting when the song is applied: one
/// `{ "section": I, "file": PATH }` or `{ "section": I, "name": NAME }` per section with a
/// cue, I its index in the song's sections; the song's clock (`SongClock+Cues`) says when
/// each is spoken. Thread: control.
extension RackDescription {
    /// The `songCues` setting's key (set by the song, not written in rack files).
    public static let songCuesKey = "songCues"
    /// The `songTranspose` setting's key: a player's transpose at the song's load (its first
    /// start's preload is made at that pitch). Set by the song, not written in rack files.
    public static let songTransposeKey = "songTranspose"

    /// Sets every click unit's `songCues` from `timeline`'s sections. Thread: control.
    mutating func giveCuesToClicks() {
        let loc = SourceLocation(line: 0, column: 0)
        func member(_ key: String, _ value: JSONValue) -> JSONMember {
            JSONMember(key: key, keyLocation: loc, value: JSONNode(value, at: loc))
        }
        var cues: [JSONNode] = []
        for (i, section) in timeline.sections.enumerated() where section.cue != "" {
            let source = section.cue.map { member("file", .string($0)) } ?? member("name", .string(section.name))
            cues.append(JSONNode(.object([member("section", .number(Double(i))), source]), at: loc))
        }
        for u in units.indices where units[u].type == "click" {
            units[u].settings.set(Self.songCuesKey, .array(cues), at: nil)
        }
    }
}
