import Foundation
import StageCore

extension RackFiles {
    /// The largest ChordPro file read (a song's lyrics are a few kB): it bounds the page's
    /// lyrics message (`WebProtocol.maxLyricsMessage`).
    public static let maxLyricsBytes = 64 << 10

    /// Reads the ChordPro file of every song of `setlist` that names one (`"lyrics"`) into
    /// its `song.lyrics`; a missing, unreadable or broken file is a problem located in the
    /// setlist (missing) or in the ChordPro file (line and column). Thread: control.
    public static func readLyrics(_ setlist: inout Setlist) -> [RackDiagnostic] {
        var problems: [RackDiagnostic] = []
        for i in setlist.entries.indices {
            guard let file = setlist.entries[i].song.lyricsFile else { continue }
            let song = setlist.entries[i].song
            switch readChordPro(file) {
            case .success(let lyrics):
                setlist.entries[i].song.lyrics = lyrics
            case .failure(.file(let reason)):
                problems.append(RackDiagnostic(
                    file: setlist.file, location: song.lyricsLocation, path: "songs[\(i)].lyrics",
                    message: "\"\(song.lyricsAsWritten ?? file)\": \(reason)"))
            case .failure(.text(let error)):
                problems += error.problems.map {
                    RackDiagnostic(file: file, location: $0.location, path: "", message: $0.message)
                }
            }
        }
        return problems
    }

    enum LyricsProblem: Error {
        case file(String)
        case text(ChordProError)
    }

    static func readChordPro(_ path: String) -> Result<ChordProSong, LyricsProblem> {
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(.file(FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file"))
        }
        if data.count > maxLyricsBytes {
            return .failure(.file("the file has \(data.count >> 10) kB; a ChordPro file is at most \(maxLyricsBytes >> 10) kB"))
        }
        guard let text = String(data: data, encoding: .utf8) else { return .failure(.file("not UTF-8 text")) }
        do {
            return .success(try ChordProReader.read(text))
        } catch {
            return .failure(.text(error))
        }
    }

    /// `rack`'s lyrics from `song`'s ChordPro file, matched to the sections of the rack's
    /// timeline (after `SetlistSong.apply`, which may add a "start" section). Thread: control.
    static func matchLyrics(_ song: SetlistSong, into rack: inout RackDescription) {
        rack.lyrics = song.lyrics.map { SongLyrics($0, sections: rack.timeline.sections.map(\.name)) }
    }
}
