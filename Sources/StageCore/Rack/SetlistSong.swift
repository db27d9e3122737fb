/// What a setlist song says beyond its rack: the backing track the rack's player plays,
/// the song's tempo and its key (racks/README.md, "Songs: track, tempo, key").
///
/// Applied to the rack when the song is loaded (`apply`): the track becomes the `file` of
/// the player named by `player` (or of the rack's one player), the tempo the rack's song
/// tempo (`TempoSources.song`: below MIDI clock and tap tempo, above the looper's first
/// loop), the key the `key` setting of every unit whose type has one (harmony, tune).
/// Thread: control (a value).
public struct SetlistSong: Sendable, Equatable {
    static let keys = ["track", "player", "tempo", "key", "timeSignature", "bars", "countIn", "sections", "lyrics", "cues"]

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
        song.timeline = SongTimeline.read(e, path: path, report: report)
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
        if let tempo {
            rack.tempo = tempo
            rack.songTempo = tempo
        }
        if !timeline.sections.isEmpty {
            let problems = timeline.problems(in: rack, setlistFile: setlistFile, songPath: songPath)
            if !problems.isEmpty { throw RackError(problems) }
        }
        rack.timeline = timeline
        rack.giveCuesToClicks()
        if let key {
            for u in rack.units.indices where typeSettings(rack.units[u].type).contains("key") {
                rack.units[u].settings.set("key", .string(key), at: keyLocation)
            }
        }
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
        if timeline.countInBars > 0 {
            // The count-in first, then the track: it starts on the downbeat, not at the load.
            rack.units[target].settings.set("startOnLoad", .bool(false), at: trackLocation)
            rack.timeline.startOnTheDownbeat(player: rack.units[target].id)
        }
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
