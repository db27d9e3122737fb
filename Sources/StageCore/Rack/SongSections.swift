/// A setlist song's sections (racks/README.md, "Sections"): where each starts on the
/// song's bar grid and what it does to the rack there. Read with the setlist (`read`),
/// checked against the song's rack when the song is read (`check`), played by the engine's
/// `SongClock` on the render thread. Thread: control (values).
public struct SongSection: Sendable, Equatable {
    public var name: String
    /// 1-based bar and beat of the song's time signature (a section placed by time: 0).
    public var bar: Int
    public var beat: Int
    /// Where it starts in the song's backing track, in seconds of the track (`"time"`),
    /// instead of a bar: the track's position is then its clock (`SongClock`).
    public var seconds: Double?
    /// Where `"time"`'s value is in the setlist, and the section's place in the setlist's
    /// list (they are sorted by time), for the check against the track's length.
    public var timeLocation: SourceLocation?
    public var listIndex: Int?
    /// Where `"at"`'s value is in the setlist (a section placed by bar), for the check
    /// against the track's length.
    public var atLocation: SourceLocation?
    public var actions: [SectionAction]
    /// The spoken cue one bar before it (`"cue"`): nil, the shipped cue for its name
    /// (`cues/NAME.flac` beside the rack); a file (resolved against the setlist's folder);
    /// "" none (`"cue": false`, or the song's `"cues": false`).
    public var cue: String?
    public var location: SourceLocation?

    public init(name: String, bar: Int, beat: Int, actions: [SectionAction] = [], location: SourceLocation? = nil) {
        self.name = name
        self.bar = bar
        self.beat = beat
        self.actions = actions
        self.location = location
    }

    /// Beats from bar 1 beat 1 to the section's start, `beatsPerBar` a bar.
    public func startBeat(beatsPerBar: Int) -> Int { (bar - 1) * beatsPerBar + (beat - 1) }
}

/// What a section does at its first frame. Thread: any (a value).
public struct SectionAction: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Recall the rack's snapshot of that name (with its own morph).
        case snapshot(String)
        /// A unit's command, as a `midi.map` action names it: `backing.play`, `loop.record`.
        case command(unit: String, command: String)
        /// Talk on (true) or off (`Talk`).
        case talk(Bool)
    }

    public var kind: Kind
    public var location: SourceLocation?

    public init(_ kind: Kind, location: SourceLocation? = nil) {
        self.kind = kind
        self.location = location
    }

    /// Reads `"snapshot chorus"`, `"talk on"`, `"talk off"` or `"unit.command"`; nil if it is none.
    static func parse(_ text: String) -> Kind? {
        if text.hasPrefix("snapshot ") {
            let name = text.dropFirst("snapshot ".count).trimmingSpaces
            return name.isEmpty ? nil : .snapshot(name)
        }
        if text == "talk on" { return .talk(true) }
        if text == "talk off" { return .talk(false) }
        guard let dot = text.firstIndex(of: "."), dot != text.startIndex, text.index(after: dot) != text.endIndex else { return nil }
        return .command(unit: String(text[..<dot]), command: String(text[text.index(after: dot)...]))
    }
}

/// The bar grid and sections of a song, as read from the setlist. Thread: any (a value).
public struct SongTimeline: Sendable, Equatable {
    /// The time signature's upper number: beats in a bar (the tempo counts these beats).
    public var beatsPerBar = 4
    /// Its lower number (the note value of a beat), kept for display.
    public var beatUnit = 4
    /// The song's length in bars, if the setlist says it (`"bars"`).
    public var bars: Int?
    /// Bars of click before bar 1 (`"countIn"`, 0…8): the song's track and first section
    /// start on the downbeat after them.
    public var countInBars = 0
    public var sections: [SongSection] = []
    /// The song's MIDI-file backing (`"midi"`), once the setlist's reader has read the file.
    public var backing: SongMIDIBacking?
    /// The song's transpose in semitones (`"transpose"`, −12…12), already applied to the
    /// rack's synths and keys when the song is read (`SetlistSong.apply`); kept for display.
    public var transpose = 0
    /// When `transpose-up`/`transpose-down` take effect (`"transposeAt"`): at the next
    /// section (true), at once (false); nil: at the next section when the song has any.
    public var transposeAtSection: Bool?
    /// The id of the player that plays the song's `track` (set when the song is applied to
    /// its rack): the clock of sections placed by time.
    public var trackPlayer: String?
    /// Transposable live even with no transpose of its own and no `transpose-up`/`-down`
    /// mapped (`GraphCompiler.Options.transposesEverySong`: a box in sync follows its
    /// leader's transpose). Not read from the setlist.
    public var transposable = false
    /// Played by a band's leader (`GraphCompiler.Options.leadsBand`): a live transpose is
    /// published with the song beat it lands on, and one asked `"now"` waits for the next
    /// bar line, so that the followers take it on the same one (`SongTranspose`).
    public var leadsBand = false

    public init() {}

    static let sectionKeys = ["name", "at", "time", "actions", "cue", "comment"]

    /// Whether the sections are placed by times in the backing track (`"time"`), not bars.
    public var placedByTime: Bool { sections.first?.seconds != nil }

    /// Reads `"timeSignature"`, `"bars"` and `"sections"` of setlist entry `e`.
    static func read(_ e: JSONNode, path: String, report: (SourceLocation?, String, String) -> Void) -> SongTimeline {
        var t = SongTimeline()
        if let s = e["timeSignature"] {
            if let (upper, lower) = s.value.string.flatMap(timeSignature) {
                t.beatsPerBar = upper
                t.beatUnit = lower
            } else {
                report(s.value.location, "\(path).timeSignature", "must be a time signature such as \"4/4\", \"3/4\" or \"6/8\" (1…32 beats of 1, 2, 4, 8, 16 or 32)")
            }
        }
        if let b = e["bars"] {
            if let v = b.value.number, v == v.rounded(), v >= 1, v <= 10000 { t.bars = Int(v) } else {
                report(b.value.location, "\(path).bars", "must be the song's length in bars, 1…10000")
            }
        }
        if let c = e["countIn"] {
            if let v = c.value.number, v == v.rounded(), v >= 0, v <= 8 { t.countInBars = Int(v) } else {
                report(c.value.location, "\(path).countIn", "must be the bars of count-in before the song, 0…8")
            }
        }
        guard let s = e["sections"] else { return t }
        guard let list = s.value.elements else {
            report(s.value.location, "\(path).sections", "must be a list of { \"name\": ..., \"at\": \"bar:beat\", \"actions\": [...] }")
            return t
        }
        var places: [Int: String] = [:]
        var times: [Double: String] = [:]
        for (i, node) in list.enumerated() {
            let p = "\(path).sections[\(i)]"
            guard var section = readSection(node, path: p, beatsPerBar: t.beatsPerBar, report: report) else { continue }
            section.listIndex = i
            if let first = t.sections.first, (first.seconds == nil) != (section.seconds == nil) {
                report(node.location, p, "a song's sections are placed all by bar (\"at\") or all by time in the track (\"time\"), not both")
                continue
            }
            if let seconds = section.seconds {
                if let other = times[seconds] {
                    report(node["time"]?.value.location, "\(p).time", "section \"\(other)\" already starts at \(formatNumber(seconds)) s")
                    continue
                }
                times[seconds] = section.name
                t.sections.append(section)
                continue
            }
            let start = section.startBeat(beatsPerBar: t.beatsPerBar)
            if let bars = t.bars, section.bar > bars {
                report(node["at"]?.value.location, "\(p).at", "bar \(section.bar) is past the song's end (\"bars\": \(bars))")
            }
            if let other = places[start] {
                report(node["at"]?.value.location, "\(p).at", "section \"\(other)\" already starts at \(section.bar):\(section.beat)")
                continue
            }
            places[start] = section.name
            t.sections.append(section)
        }
        if t.placedByTime {
            t.sections.sort { ($0.seconds ?? 0) < ($1.seconds ?? 0) }
        } else {
            t.sections.sort { $0.startBeat(beatsPerBar: t.beatsPerBar) < $1.startBeat(beatsPerBar: t.beatsPerBar) }
        }
        return t
    }

    static func readSection(
        _ node: JSONNode, path p: String, beatsPerBar: Int, report: (SourceLocation?, String, String) -> Void
    ) -> SongSection? {
        guard let fields = node.members else {
            report(node.location, p, "a section must be { \"name\": ..., \"at\": \"bar:beat\", \"actions\": [...] }")
            return nil
        }
        for m in fields where !sectionKeys.contains(m.key) {
            report(m.keyLocation, "\(p).\(m.key)", "unknown key in a section\(Suggest.hint(for: m.key, in: sectionKeys))")
        }
        guard let name = node["name"]?.value.string, !name.isEmpty else {
            report(node["name"]?.value.location ?? node.location, "\(p).name", "missing (the section's name: \"verse\", \"chorus\")")
            return nil
        }
        var section: SongSection
        switch (node["at"], node["time"]) {
        case (nil, nil):
            report(node.location, "\(p).at", "missing (where it starts: \"bar:beat\", such as \"9:1\", or \"time\" in the track)")
            return nil
        case (.some, .some(let time)):
            report(time.keyLocation, "\(p).time", "a section starts at a bar (\"at\") or at a time in the track (\"time\"), not both")
            return nil
        case (nil, .some(let time)):
            guard let seconds = trackTime(time.value) else {
                report(time.value.location, "\(p).time", "must be a time in the backing track: seconds (83.5) or \"M:SS.s\" (\"1:23.5\"), above 0")
                return nil
            }
            section = SongSection(name: name, bar: 0, beat: 0, location: node.location)
            section.seconds = seconds
            section.timeLocation = time.value.location
        case (.some(let at), nil):
            guard let (bar, beat) = barBeat(at.value), beat <= beatsPerBar else {
                report(at.value.location, "\(p).at", "must be \"bar:beat\" (bar 1…, beat 1…\(beatsPerBar)) or a bar number")
                return nil
            }
            section = SongSection(name: name, bar: bar, beat: beat, location: node.location)
            section.atLocation = at.value.location
        }
        if let c = node["cue"] {
            if c.value.bool == false {
                section.cue = ""
            } else if let file = c.value.string, !file.isEmpty {
                section.cue = file
            } else {
                report(c.value.location, "\(p).cue", "must be a sound file (relative to the setlist) spoken one bar before the section, or false")
            }
        }
        if let a = node["actions"] {
            guard let items = a.value.elements else {
                report(a.value.location, "\(p).actions", "must be a list such as [\"snapshot chorus\", \"backing.play\", \"talk off\"]")
                return section
            }
            for (k, item) in items.enumerated() {
                if let text = item.string, let kind = SectionAction.parse(text) {
                    section.actions.append(SectionAction(kind, location: item.location))
                } else {
                    report(item.location, "\(p).actions[\(k)]", "must be \"snapshot NAME\", \"UNIT.COMMAND\" (\"backing.play\") or \"talk on\"/\"talk off\"")
                }
            }
        }
        return section
    }

    /// 83.5 or "1:23.5" → 83.5 seconds (above 0, at most 24 h).
    static func trackTime(_ v: JSONNode) -> Double? {
        var seconds: Double?
        if let n = v.number {
            seconds = n
        } else if let s = v.string {
            let parts = s.split(separator: ":", omittingEmptySubsequences: false)
            if parts.count == 2, let m = Int(parts[0]), m >= 0, let sec = Double(parts[1]), sec >= 0, sec < 60, !parts[1].hasPrefix("+") {
                seconds = Double(m) * 60 + sec
            }
        }
        guard let x = seconds, x.isFinite, x > 0, x <= 86400 else { return nil }
        return x
    }

    /// "3/4" → (3, 4).
    static func timeSignature(_ s: String) -> (Int, Int)? {
        let parts = s.split(separator: "/")
        guard parts.count == 2, let upper = Int(parts[0]), let lower = Int(parts[1]), (1...32).contains(upper),
            [1, 2, 4, 8, 16, 32].contains(lower)
        else { return nil }
        return (upper, lower)
    }

    /// "9:3" → (9, 3); a number 9 → (9, 1).
    static func barBeat(_ v: JSONNode) -> (Int, Int)? {
        if let n = v.number {
            return n == n.rounded() && n >= 1 && n <= 10000 ? (Int(n), 1) : nil
        }
        guard let s = v.string else { return nil }
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let bar = Int(parts[0]), let beat = Int(parts[1]), bar >= 1, bar <= 10000, beat >= 1 else { return nil }
        return (bar, beat)
    }

    /// Makes the song's first action the start of `player` (its track), on bar 1 beat 1:
    /// in the first section if it starts there, else in a section "start" made there.
    /// Thread: control.
    mutating func startOnTheDownbeat(player: String) {
        let action = SectionAction(.command(unit: player, command: "play"))
        if let first = sections.first, first.bar == 1, first.beat == 1 {
            sections[0].actions.insert(action, at: 0)
        } else {
            var start = SongSection(name: "start", bar: 1, beat: 1, actions: [action])
            start.cue = ""  // made here, not the song's: nothing to say
            sections.insert(start, at: 0)
        }
    }

    /// Errors for actions the rack cannot do: a snapshot it has not, a unit it has not or a
    /// command that unit does not take. Thread: control.
    func problems(in rack: RackDescription, setlistFile: String, songPath: String) -> [RackDiagnostic] {
        var out: [RackDiagnostic] = []
        for (i, section) in sections.enumerated() {
            for (k, action) in section.actions.enumerated() {
                let path = "\(songPath).sections[\(i)].actions[\(k)]"
                func fail(_ message: String) {
                    out.append(RackDiagnostic(file: setlistFile, location: action.location, path: path, message: message))
                }
                switch action.kind {
                case .snapshot(let name):
                    let names = rack.snapshots.map(\.name)
                    if !names.contains(name) { fail("\(rack.file) has no snapshot \"\(name)\"\(Suggest.hint(for: name, in: names))") }
                case .command(let unitID, let command):
                    guard let unit = rack.unit(unitID) else {
                        fail("\(rack.file) has no unit \"\(unitID)\"\(Suggest.hint(for: unitID, in: rack.units.map(\.id)))")
                        continue
                    }
                    if !unit.commands.contains(command) {
                        let what = unit.commands.isEmpty ? "takes no commands" : "takes \(unit.commands.map { "\"\($0)\"" }.joined(separator: ", "))"
                        fail("a \(unit.type) unit \(what), not \"\(command)\"\(Suggest.hint(for: command, in: unit.commands))")
                    }
                case .talk:
                    break
                }
            }
        }
        return out
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
