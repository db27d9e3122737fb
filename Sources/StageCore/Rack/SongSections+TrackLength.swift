/// The check of a song's sections against its track's length (racks/README.md,
/// "Sections"): a section that starts at or past the end of the track would never start
/// while it plays, so it is an error when the song is read, never a silence on stage.
extension SongTimeline {
    /// Errors for sections that start at or past the end of the song's track,
    /// `trackSeconds` long. Placed by time: its `"time"`. Placed by bar (only with the
    /// song's `tempo`, and a track that starts on a known beat, `trackStartBeat`): the
    /// bar's time in the track, its beats from that start (in the song's beat unit, the one
    /// the tempo counts) × 60 / tempo. The count-in comes before bar 1, so it adds nothing.
    /// Thread: control.
    public func sectionsPastTrack(
        seconds trackSeconds: Double, tempo: Double? = nil, trackStartBeat: Int? = nil, setlistFile: String, songPath: String
    ) -> [RackDiagnostic] {
        sections.enumerated().compactMap { i, section in
            if let seconds = section.seconds {
                guard seconds >= trackSeconds else { return nil }
                return RackDiagnostic(
                    file: setlistFile, location: section.timeLocation ?? section.location,
                    path: "\(songPath).sections[\(section.listIndex ?? i)].time",
                    message: "\(formatNumber(seconds)) s is past the end of the track (\(formatNumber(trackSeconds)) s long)")
            }
            // A section the setlist placed (not the "start" a count-in makes), after the track starts.
            guard let tempo, tempo > 0, let trackStartBeat, let listIndex = section.listIndex else { return nil }
            let beats = section.startBeat(beatsPerBar: beatsPerBar) - trackStartBeat
            let seconds = Double(beats) * 60 / tempo
            guard beats >= 0, seconds >= trackSeconds else { return nil }
            return RackDiagnostic(
                file: setlistFile, location: section.atLocation ?? section.location, path: "\(songPath).sections[\(listIndex)].at",
                message: "bar \(section.bar):\(section.beat) is \(formatNumber(seconds)) s into the track at \(formatNumber(tempo)) BPM, "
                    + "past its end (\(formatNumber(trackSeconds)) s long)")
        }
    }

    /// The song beat the track's player (`trackPlayer`) starts on in `rack` (this song's
    /// rack, the song applied): 0, bar 1 beat 1, when it starts on load or after the
    /// count-in; else the start of the first section whose actions play it (`play`,
    /// `toggle`, `restart`); nil when nothing starts it (no bar of the song is then known
    /// to be a time in the track). Thread: control.
    public static func trackStartBeat(in rack: RackDescription) -> Int? {
        guard let player = rack.timeline.trackPlayer, let unit = rack.unit(player) else { return nil }
        if unit.settings.node("startOnLoad")?.bool == true { return 0 }
        let starts = ["play", "toggle", "restart"]
        let timeline = rack.timeline
        let first = timeline.sections.first { section in
            section.actions.contains { action in
                if case .command(let u, let command) = action.kind { return u == player && starts.contains(command) }
                return false
            }
        }
        return first.map { $0.startBeat(beatsPerBar: timeline.beatsPerBar) }
    }
}
