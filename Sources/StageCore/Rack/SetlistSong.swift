/// What a setlist song says beyond its rack: the backing track the rack's player plays,
/// the song's tempo and its key (racks/README.md, "Songs: track, tempo, key"), its MIDI
/// file ("A MIDI file as backing") and its transpose ("One song key").
///
/// Applied to the rack when the song is loaded (`apply`): the track becomes the `file` of
/// the player named by `player` (or of the rack's one player), the tempo the rack's song
/// tempo (`TempoSources.song`: below MIDI clock and tap tempo, above the looper's first
/// loop), the key (moved by the transpose) the `key` setting of every unit whose type has
/// one (harmony, tune), the transpose added to every synth's; the MIDI file goes into the
/// rack's `timeline` (played by its `SongClock`).
/// Thread: control (a value).
public struct SetlistSong: Sendable, Equatable {
    static let keys = ["track", "player", "tempo", "key", "timeSignature", "bars", "countIn", "sections", "lyrics", "midi", "transpose", "transposeAt", "cues"]

    /// The track file, resolved against the setlist's folder; nil: the rack's own.
    public var track: String?
    /// The track as written (for messages).
    public var trackAsWritten: String?
    public var trackLocation: SourceLocation?
    /// The player unit's id; nil: the rack's only player.
    public var player: String?
    public var playerLocation: SourceLocation?
    public var tempo: Double?
    /// A key such as "C", "F#" or "Bb".
    public var key: String?
    public var keyLocation: SourceLocation?
    /// The time signature, length and sections (`SongTimeline`, racks/README.md "Sections").
    public var timeline = SongTimeline()
    /// The song's ChordPro file (`"lyrics"`, resolved against the setlist's folder), as
    /// written, where, and the song it holds (read with the setlist: `RackFiles.readLyrics`).
    public var lyricsFile: String?
    public var lyricsAsWritten: String?
    public var lyricsLocation: SourceLocation?
    public var lyrics: ChordProSong?
    /// The MIDI file played as backing (`"midi"`), resolved against the setlist's folder,
    /// as written, and where; `RackFiles.readSetlist` reads it into `timeline.backing`.
    public var midi: String?
    public var midiAsWritten: String?
    public var midiLocation: SourceLocation?
    /// Semitones the song is moved by (`"transpose"`, −12…12; 0 by default): the synths'
    /// notes (the keyboard's and the MIDI file's), the harmony and tune keys (`apply`).
    public var transpose = 0
    /// The transposes a song may have.
    public static let transposeRange = -12...12

    public init() {}

    /// Reads the song keys of a setlist entry, reporting bad values at their place.
    static func read(
        _ e: JSONNode, path: String, folder: String, report: (SourceLocation?, String, String) -> Void
    ) -> SetlistSong {
        var song = SetlistSong()
        if let t = e["track"] {
            if let s = t.value.string, !s.isEmpty {
                song.track = SetlistReader.joined(folder, s)
                song.trackAsWritten = s
                song.trackLocation = t.value.location
            } else {
                report(t.value.location, "\(path).track", "must be the backing track's file name (relative to the setlist)")
            }
        }
        if let p = e["player"] {
            if let s = p.value.string, !s.isEmpty {
                song.player = s
                song.playerLocation = p.value.location
            } else {
                report(p.value.location, "\(path).player", "must be the id of the rack's player unit that plays the track")
            }
            if e["track"] == nil { report(p.keyLocation, "\(path).player", "names the player of a \"track\"; add \"track\": FILE") }
        }
        if let t = e["tempo"] {
            if let v = t.value.number, v >= 20, v <= 400 { song.tempo = v } else {
                report(t.value.location, "\(path).tempo", "must be the song's tempo in BPM, 20…400")
            }
        }
        if let k = e["key"] {
            if let s = k.value.string, KeyRange.key(s + "4") != nil, !s.contains(where: \.isNumber) {
                song.key = s
                song.keyLocation = k.value.location
            } else {
                report(k.value.location, "\(path).key", "must be a key such as \"C\", \"F#\" or \"Bb\"")
            }
        }
        if let m = e["midi"] {
            if let s = m.value.string, !s.isEmpty {
                song.midi = SetlistReader.joined(folder, s)
                song.midiAsWritten = s
                song.midiLocation = m.value.location
            } else {
                report(m.value.location, "\(path).midi", "must be the backing's MIDI file name (a .mid, relative to the setlist)")
            }
        }
        if let t = e["transpose"] {
            if let v = t.value.number, v == v.rounded(), transposeRange.contains(Int(exactly: v) ?? 99) {
                song.transpose = Int(v)
            } else {
                report(t.value.location, "\(path).transpose", "must be the song's transpose in semitones, −12…12")
            }
        }
        song.timeline = SongTimeline.read(e, path: path, report: report)
        if song.timeline.placedByTime && song.track == nil {
            report(e["sections"]?.value.location, "\(path).sections", "sections placed by \"time\" need the song's \"track\" (its position is their clock)")
        }
        song.timeline.transpose = song.transpose
        if let a = e["transposeAt"] {
            switch a.value.string {
            case "section": song.timeline.transposeAtSection = true
            case "now": song.timeline.transposeAtSection = false
            default: report(a.value.location, "\(path).transposeAt", "must be \"section\" (the next section's first frame) or \"now\"")
            }
        }
        if let c = e["cues"], c.value.bool != false {
            report(c.value.location, "\(path).cues", "can only be false (no spoken cues in this song)")
        }
        for i in song.timeline.sections.indices {
            if e["cues"]?.value.bool == false { song.timeline.sections[i].cue = "" }
            if let cue = song.timeline.sections[i].cue, !cue.isEmpty { song.timeline.sections[i].cue = SetlistReader.joined(folder, cue) }
        }
        if let l = e["lyrics"] {
            if let s = l.value.string, !s.isEmpty {
                song.lyricsFile = SetlistReader.joined(folder, s)
                song.lyricsAsWritten = s
                song.lyricsLocation = l.value.location
            } else {
                report(l.value.location, "\(path).lyrics", "must be the song's ChordPro file (relative to the setlist)")
            }
        }
        return song
    }

    /// Gives `rack` this song's track, tempo and key. `typeSettings(type)`: the setting
    /// keys of a unit type (the registry's), to find the units with a `key`. Errors are
    /// located in `setlistFile`. Thread: control.
    public func apply(
        to rack: inout RackDescription, setlistFile: String, songPath: String, typeSettings: (String) -> [String]
    ) throws(RackError) {
        if let tempo = tempo ?? backingTempo {
            rack.tempo = tempo
            rack.songTempo = tempo
        }
        if !timeline.sections.isEmpty {
            let problems = timeline.problems(in: rack, setlistFile: setlistFile, songPath: songPath)
            if !problems.isEmpty { throw RackError(problems) }
        }
        rack.timeline = timeline
        // Once the sections are final (a count-in may add "start" in front).
        defer { rack.giveCuesToClicks() }
        for u in rack.units.indices where typeSettings(rack.units[u].type).contains("key") {
            // The song's key (or the unit's own), moved by the song's transpose.
            guard let own = key ?? rack.units[u].settings.node("key")?.string else { continue }
            rack.units[u].settings.set("key", .string(Self.transposed(key: own, by: transpose)), at: keyLocation)
        }
        if transpose != 0 { transposeUnits(&rack, typeSettings: typeSettings) }
        guard let track else {
            // No track of the song's own: the rack's players that start on load wait for the count-in.
            if timeline.countInBars > 0 {
                for u in rack.units.indices where rack.units[u].type == "player" && rack.units[u].settings.node("startOnLoad")?.bool == true {
                    rack.units[u].settings.set("startOnLoad", .bool(false), at: nil)
                    rack.timeline.startOnTheDownbeat(player: rack.units[u].id)
                }
            }
            return
        }
        let players = rack.units.indices.filter { rack.units[$0].type == "player" }
        func fail(_ location: SourceLocation?, _ path: String, _ message: String) -> RackError {
            RackError([RackDiagnostic(file: setlistFile, location: location, path: "\(songPath).\(path)", message: message)])
        }
        let target: Int
        if let player {
            guard let u = rack.units.firstIndex(where: { $0.id == player }) else {
                let ids = players.map { rack.units[$0].id }
                throw fail(playerLocation, "player", "\(rack.file) has no unit \"\(player)\"\(Suggest.hint(for: player, in: ids))")
            }
            guard rack.units[u].type == "player" else {
                throw fail(playerLocation, "player", "\"\(player)\" is a \(rack.units[u].type) unit, not a player")
            }
            target = u
        } else {
            guard players.count == 1 else {
                throw fail(
                    trackLocation, "track",
                    players.isEmpty
                        ? "\(rack.file) has no player unit to play the track; add { \"type\": \"player\", \"file\": ... }"
                        : "\(rack.file) has \(players.count) players (\(players.map { rack.units[$0].id }.joined(separator: ", "))): name one with \"player\"")
            }
            target = players[0]
        }
        rack.units[target].settings.set("file", .string(track), at: trackLocation)
        rack.timeline.trackPlayer = rack.units[target].id
        if timeline.countInBars > 0 {
            // The count-in first, then the track: it starts on the downbeat, not at the load.
            rack.units[target].settings.set("startOnLoad", .bool(false), at: trackLocation)
            rack.timeline.startOnTheDownbeat(player: rack.units[target].id)
        }
    }
}

extension SetlistSong {
    /// Key `name` ("Bb") moved by `semitones`, named as `MusicalKey` names keys ("C", "Eb",
    /// "F#"); `name` unchanged when it does not read. Thread: any.
    public static func transposed(key name: String, by semitones: Int) -> String {
        guard semitones != 0, let note = KeyRange.key(name + "4") else { return name }
        return ParameterSpec.pitchClassNames[((note + semitones) % 12 + 12) % 12]
    }

    /// Adds the song's transpose to the `transpose` setting of every unit whose type has one
    /// (the synth: the keyboard's notes and the MIDI file's move together). Thread: control.
    func transposeUnits(_ rack: inout RackDescription, typeSettings: (String) -> [String]) {
        for u in rack.units.indices where typeSettings(rack.units[u].type).contains("transpose") {
            let own = rack.units[u].settings.node("transpose")?.number.flatMap { Int(exactly: $0) } ?? 0
            rack.units[u].settings.set("transpose", .number(Double(own + transpose)), at: nil)
        }
        // The backing track moves too: each player's `transpose` parameter (its audio
        // pitch-shifted on its disk thread), from its own value in the rack.
        for u in rack.units.indices where rack.units[u].type == "player" {
            let values = rack.units[u].parameterValues
            let own = values.first { $0.id == "transpose" }.map { Int($0.value) } ?? 0
            let moved = Float(min(max(own + transpose, Self.transposeRange.lowerBound), Self.transposeRange.upperBound))
            if let i = values.firstIndex(where: { $0.id == "transpose" }) {
                rack.units[u].parameterValues[i].value = moved
            } else {
                rack.units[u].parameterValues.append(ParameterValueDescription(id: "transpose", value: moved))
            }
            rack.units[u].settings.set(RackDescription.songTransposeKey, .number(Double(moved)), at: nil)
        }
    }

    /// The MIDI-file backing's own tempo at its start in the song's beats (eighths in 6/8),
    /// the song's tempo when it names none. Thread: control.
    var backingTempo: Double? {
        guard let quarters = timeline.backing?.initialTempo else { return nil }
        let bpm = quarters * SongMIDIBacking.beatsPerQuarter(beatUnit: timeline.beatUnit)
        return min(max(bpm, 20), 400)
    }
}

extension UnitSettings {
    /// Sets (or adds) setting `key` to `value`. Thread: control.
    mutating func set(_ key: String, _ value: JSONValue, at location: SourceLocation?) {
        let loc = location ?? SourceLocation(line: 0, column: 0)
        let member = JSONMember(key: key, keyLocation: loc, value: JSONNode(value, at: loc))
        if let i = members.firstIndex(where: { $0.key == key }) { members[i] = member } else { members.append(member) }
    }
}
