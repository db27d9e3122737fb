/// The spoken cues of a song's sections (racks/README.md, "Spoken cues"), handed to the
/// rack's `click` units as their `songCues` setting when the song is applied: one
/// `{ "beat": B, "file": PATH }` or `{ "beat": B, "name": NAME }` per section with a cue,
/// B the song beat one bar before the section's start. Thread: control.
extension RackDescription {
    /// The `songCues` setting's key (set by the song, not written in rack files).
    public static let songCuesKey = "songCues"

    /// Sets every click unit's `songCues` from `timeline`'s sections. Thread: control.
    mutating func giveCuesToClicks() {
        let loc = SourceLocation(line: 0, column: 0)
        func member(_ key: String, _ value: JSONValue) -> JSONMember {
            JSONMember(key: key, keyLocation: loc, value: JSONNode(value, at: loc))
        }
        var cues: [JSONNode] = []
        // Sections placed by time have no cue yet (a bar before a time needs the track's bars).
        for section in timeline.sections where section.cue != "" && section.seconds == nil {
            let beat = Double(section.startBeat(beatsPerBar: timeline.beatsPerBar) - timeline.beatsPerBar)
            let source = section.cue.map { member("file", .string($0)) } ?? member("name", .string(section.name))
            cues.append(JSONNode(.object([member("beat", .number(beat)), source]), at: loc))
        }
        for u in units.indices where units[u].type == "click" {
            units[u].settings.set(Self.songCuesKey, .array(cues), at: nil)
        }
    }
}
