import Foundation
import StageCore

/// Reading rack files from disk. Thread: control.
public enum RackFiles {
    /// The largest rack or setlist file read (a hand-written rack is a few kB); a bigger one
    /// is an error rather than minutes of reading.
    public static let maxFileBytes = 4 << 20

    /// The file's text, or why there is none (missing, unreadable, too big, not UTF-8).
    static func text(_ path: String) throws(RackError) -> String {
        func fail(_ reason: String) -> RackError {
            RackError([RackDiagnostic(file: path, location: nil, path: "", message: reason)])
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw fail(FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file")
        }
        if data.count > maxFileBytes {
            throw fail("the file has \(data.count / 1_048_576) MB; a rack or setlist file is at most \(maxFileBytes >> 20) MB")
        }
        guard let s = String(data: data, encoding: .utf8) else { throw fail("the file is not UTF-8 text") }
        return s
    }

    /// Reads and checks the rack at `path`: syntax, keys, types, values (not the graph).
    public static func read(_ path: String, registry: UnitRegistry) throws(RackError) -> RackDescription {
        let text = try text(path)
        return try RackReader(registry: registry).read(text: text, file: path)
    }

    /// Reads, checks and compiles: every problem of the file and of its graph.
    public static func load(
        _ path: String, registry: UnitRegistry, options: GraphCompiler.Options
    ) throws(RackError) -> RenderPlan {
        let rack = try read(path, registry: registry)
        return try GraphCompiler(registry: registry).compile(rack, options: options)
    }
}

/// Reading MIDI files from disk. Thread: control.
public enum MIDIFiles {
    public struct ReadError: Error, CustomStringConvertible {
        public var path: String
        public var message: String
        public var description: String { "\(path): \(message)" }
    }

    public static func read(_ path: String) throws(ReadError) -> StandardMIDIFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ReadError(path: path, message: FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file")
        }
        do {
            return try StandardMIDIFile(bytes: [UInt8](data))
        } catch {
            throw ReadError(path: path, message: error.description)
        }
    }
}

extension RackFiles {
    /// Reads a setlist, or a rack as a setlist of one. Thread: control.
    /// Songs whose rack file does not exist (found at load, not on stage at the program change),
    /// by index in the setlist,
    /// each at its place in the setlist with the files of that folder it may have meant.
    public static func missingSongs(_ setlist: Setlist) -> [(song: Int, diagnostic: RackDiagnostic)] {
        var found: [(song: Int, diagnostic: RackDiagnostic)] = []
        var listings: [String: [String]] = [:]  // a folder is listed once, however many songs
        for (i, entry) in setlist.entries.enumerated() where !FileManager.default.fileExists(atPath: entry.rack) {
            let folder = (entry.rack as NSString).deletingLastPathComponent
            let written = entry.rackAsWritten.isEmpty ? entry.rack : entry.rackAsWritten
            let writtenFolder = (written as NSString).deletingLastPathComponent
            if listings[folder] == nil {
                listings[folder] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? [])
                    .filter { $0.hasSuffix(".json") }.sorted()
            }
            let neighbours = listings[folder, default: []].map { writtenFolder.isEmpty ? $0 : writtenFolder + "/" + $0 }
            found.append((
                i,
                RackDiagnostic(
                    file: setlist.file, location: entry.rackLocation ?? entry.location, path: "songs[\(i)].rack",
                    message: "no such file \"\(written)\"\(found.count < 100 ? Suggest.hint(for: written, in: neighbours) : "")")))
        }
        return found
    }

    /// `checkSongs`: a song whose file is missing is an error (located in the setlist); off
    /// for `validate`, which reports it beside the other songs' problems.
    public static func readSetlist(_ path: String, checkSongs: Bool = true) throws(RackError) -> Setlist {
        let text = try text(path)
        if let root = try? JSONParser.parse(text), Setlist.isSetlist(root) {
            // The setlist's own problems and its missing files reported at once (also
            // without `checkSongs`, whose caller checks them itself, when it throws anyway).
            var (setlist, problems) = try SetlistReader.readReportingAll(text: text, file: path)
            problems += readLyrics(&setlist)
            // A track is relative to the setlist (resolved so far against the working
            // folder); the player reads its `file` relative to the rack's folder: absolute.
            for i in setlist.entries.indices {
                if let t = setlist.entries[i].song.track, !t.hasPrefix("/") {
                    setlist.entries[i].song.track = FileManager.default.currentDirectoryPath + "/" + t
                }
            }
            problems += readBackings(&setlist)
            let checks = checkSongs || !problems.isEmpty
            let missing = checks ? (missingSongs(setlist) + missingTracks(setlist)).sorted { $0.song < $1.song } : []
            if !problems.isEmpty || !missing.isEmpty { throw RackError(problems + missing.map(\.diagnostic)) }
            return setlist
        }
        var single = Setlist()
        single.file = path
        single.entries = [Setlist.Entry(rack: path, name: path, program: nil, bank: 0, location: nil)]
        return single
    }
}

extension RackFiles {
    /// Reads the rack of song `index` of `setlist` and gives it the song's track, tempo and
    /// key (`SetlistSong`): what plays when the song is chosen. Thread: control.
    public static func readSong(_ setlist: Setlist, _ index: Int, registry: UnitRegistry) throws(RackError) -> RackDescription {
        let entry = setlist.entries[index]
        var rack = try read(entry.rack, registry: registry)
        try entry.song.apply(to: &rack, setlistFile: setlist.file, songPath: "songs[\(index)]") { type in
            registry.type(named: type)?.settings.map(\.key) ?? []
        }
        // Sections within the track, checked once its length can be read: placed by time,
        // or by bar in a song with a tempo (the bar's time from where the track starts).
        let timeline = entry.song.timeline
        if !timeline.sections.isEmpty, let track = entry.song.track,
            let seconds = (registry.type(named: "player") as? any TrackLengthReading)?.trackSeconds(track)
        {
            let past = timeline.sectionsPastTrack(
                seconds: seconds, tempo: entry.song.tempo, trackStartBeat: SongTimeline.trackStartBeat(in: rack),
                setlistFile: setlist.file, songPath: "songs[\(index)]")
            if !past.isEmpty { throw RackError(past) }
        }
        matchLyrics(entry.song, into: &rack)
        return rack
    }

    /// Reads every song's MIDI-file backing (`midi`) into its timeline; a file missing,
    /// unreadable, broken or without beats is an error at the song's `"midi"`.
    static func readBackings(_ setlist: inout Setlist) -> [RackDiagnostic] {
        var problems: [RackDiagnostic] = []
        for i in setlist.entries.indices {
            let song = setlist.entries[i].song
            guard let path = song.midi else { continue }
            func fail(_ message: String) {
                problems.append(RackDiagnostic(
                    file: setlist.file, location: song.midiLocation, path: "songs[\(i)].midi",
                    message: "\"\(song.midiAsWritten ?? path)\": \(message)"))
            }
            do {
                switch SongMIDIBacking.make(file: path, from: try MIDIFiles.read(path)) {
                case .success(let backing): setlist.entries[i].song.timeline.backing = backing
                case .failure(let error): fail(error.message)
                }
            } catch {
                fail(error.message)
            }
        }
        return problems
    }

    /// Songs whose backing track (`track`) does not exist, located in the setlist.
    public static func missingTracks(_ setlist: Setlist) -> [(song: Int, diagnostic: RackDiagnostic)] {
        setlist.entries.enumerated().compactMap { i, entry in
            guard let track = entry.song.track, !FileManager.default.fileExists(atPath: track) else { return nil }
            return (i, RackDiagnostic(
                file: setlist.file, location: entry.song.trackLocation, path: "songs[\(i)].track",
                message: "no such file \"\(entry.song.trackAsWritten ?? track)\""))
        }
    }
}
