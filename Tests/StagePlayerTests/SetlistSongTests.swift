import Foundation
import StageCore
import StageControl
import StageDrivers
import StagePlayer
import XCTest

/// A setlist song names its backing track (played by the rack's player), its tempo and its
/// key; bad values are errors at their line:column in the setlist.
final class SetlistSongTests: XCTestCase {
    static func playerRack(players: [String] = ["track"], extra: String = "") -> String {
        let units = players.map { "\"\($0)\": { \"type\": \"player\", \"file\": \"default.wav\" }" }.joined(separator: ", ")
        let sum = players.count > 1 ? "\"mix\": { \"type\": \"mixer\", \"inputs\": \(players.count) }, " : ""
        let connections = players.count > 1
            ? players.enumerated().map { "\"\($0.element) -> mix:\($0.offset + 1)\"" }.joined(separator: ", ") + ", \"mix -> out\""
            : "\"\(players[0]) -> out\""
        return """
            { "format": 2, "units": { \(units), \(sum)\(extra)"out": { "type": "output" } },
              "connections": [\(connections)] }
            """
    }

    func folder(setlist: String, racks: [String: String]) -> String {
        var files = racks
        files["set.json"] = setlist
        let dir = SongFiles.write(files)
        TrackFiles.write(dir + "/default.wav", channels: [[Float](repeating: 0.01, count: 4800)], rate: 48000)
        return dir
    }

    func errors(_ dir: String, song: Int = 0) -> String {
        do {
            _ = try SongFiles.plan(setlist: dir + "/set.json", song: song)
            return ""
        } catch {
            return (error as? RackError)?.diagnostics.map(\.description).joined(separator: "\n") ?? "\(error)"
        }
    }

    func testTheSongsTrackPlaysThroughThePlayerAtTheFilesLevel() throws {
        let dir = folder(
            setlist: """
                { "format": 2, "songs": [
                  { "rack": "r.json", "track": "tracks/song.wav", "tempo": 96 } ] }
                """,
            racks: ["r.json": Self.playerRack().replacingOccurrences(of: "\"file\": \"default.wav\"", with: "\"file\": \"default.wav\", \"startOnLoad\": true")])
        try FileManager.default.createDirectory(atPath: dir + "/tracks", withIntermediateDirectories: true)
        let sine = (0..<48000).map { Float(0.4 * sin(2 * Double.pi * 440 * Double($0) / 48000)) }
        TrackFiles.write(dir + "/tracks/song.wav", channels: [sine], rate: 48000)
        let plan = try SongFiles.plan(setlist: dir + "/set.json")
        XCTAssertEqual(plan.rack.songTempo, 96)
        let renderer = OfflineRenderer(plan: plan)
        var left: [Float] = []
        renderer.render(input: nil, midi: StandardMIDIFile(messages: [], duration: 0), frames: 24000, blockSize: 128) { bus, n in
            left += UnsafeBufferPointer(start: bus[0], count: n)
        }
        // The song's file (a 440 Hz sine at 0.4), not the rack's (a constant 0.01), sample for sample.
        var worst: Float = 0
        for i in 0..<24000 { worst = max(worst, abs(left[i] - sine[i])) }
        XCTAssertLessThan(worst, 1e-6)
    }

    func testTheKeyReachesEveryUnitWithAKeySetting() throws {
        let rack = """
            { "format": 2, "units": { "mic": { "type": "input" },
                "harm": { "type": "harmony", "source": "scale", "key": "C", "scale": "major" },
                "fix": { "type": "tune", "key": "C", "scale": "major" }, "out": { "type": "output" } },
              "connections": ["mic -> fix -> harm -> out"] }
            """
        let dir = folder(setlist: #"{ "format": 2, "songs": [ { "rack": "h.json", "key": "Eb" } ] }"#, racks: ["h.json": rack])
        let setlist = try RackFiles.readSetlist(dir + "/set.json")
        let described = try RackFiles.readSong(setlist, 0, registry: PlayerRacks.registry)
        XCTAssertEqual(described.unit("harm")?.settings.string("key"), "Eb")
        XCTAssertEqual(described.unit("fix")?.settings.string("key"), "Eb")
        XCTAssertEqual(errors(dir), "", "the units take the key")
    }

    func testBadSongValuesAreErrorsAtTheirPlace() throws {
        let dir = folder(
            setlist: """
                { "format": 2, "songs": [
                  { "rack": "r.json", "tempo": 500, "key": "H#", "track": 3 },
                  { "rack": "r.json", "player": "track" } ] }
                """,
            racks: ["r.json": Self.playerRack()])
        do {
            _ = try RackFiles.readSetlist(dir + "/set.json")
            XCTFail("invalid")
        } catch {
            let text = error.diagnostics.map(\.description).joined(separator: "\n")
            XCTAssertTrue(text.contains("set.json:2:32: songs[0].tempo: must be the song's tempo in BPM, 20…400"), text)
            XCTAssertTrue(text.contains("set.json:2:44: songs[0].key: must be a key"), text)
            XCTAssertTrue(text.contains("set.json:2:59: songs[0].track: must be the backing track's file name"), text)
            XCTAssertTrue(text.contains("set.json:3:23: songs[1].player: names the player of a \"track\""), text)
        }
    }

    func testATrackNeedsAPlayerAndAnExistingFile() throws {
        let dir = folder(
            setlist: """
                { "format": 2, "songs": [
                  { "rack": "none.json", "track": "default.wav" },
                  { "rack": "two.json", "track": "default.wav" },
                  { "rack": "two.json", "track": "default.wav", "player": "b" },
                  { "rack": "two.json", "track": "default.wav", "player": "mix" },
                  { "rack": "two.json", "track": "default.wav", "player": "c" } ] }
                """,
            racks: [
                "none.json": #"{ "format": 2, "units": { "mic": { "type": "input" }, "out": { "type": "output" } }, "connections": ["mic -> out"] }"#,
                "two.json": Self.playerRack(players: ["a", "b"]),
            ])
        XCTAssertTrue(errors(dir, song: 0).contains("set.json:2:35: songs[0].track: \(dir)/none.json has no player unit"), errors(dir, song: 0))
        XCTAssertTrue(errors(dir, song: 1).contains("songs[1].track: \(dir)/two.json has 2 players (a, b): name one with \"player\""), errors(dir, song: 1))
        XCTAssertEqual(errors(dir, song: 2), "")
        XCTAssertTrue(errors(dir, song: 3).contains("set.json:5:59: songs[3].player: \"mix\" is a mixer unit, not a player"), errors(dir, song: 3))
        XCTAssertTrue(errors(dir, song: 4).contains("songs[4].player: \(dir)/two.json has no unit \"c\""), errors(dir, song: 4))
        let missing = folder(setlist: #"{ "format": 2, "songs": [ { "rack": "r.json", "track": "gone.wav" } ] }"#, racks: ["r.json": Self.playerRack()])
        XCTAssertTrue(errors(missing).contains("set.json:1:56: songs[0].track: no such file \"gone.wav\""), errors(missing))
    }

    func testACuePastTheEndOfTheFileIsAnErrorNotAClamp() throws {
        let dir = TrackFiles.folder()
        TrackFiles.write(dir + "/short.wav", channels: [[Float](repeating: 0.1, count: 48000)], rate: 48000)
        do {
            _ = try PlayerRacks.plan(PlayerRacks.text(file: dir + "/short.wav", settings: #""cues": { "intro": 0.5, "outro": 1.5 }"#))
            XCTFail("a cue past the end")
        } catch {
            let text = "\(error)"
            XCTAssertTrue(text.contains("cues: \"outro\" at 1.5 s is past the end of \(dir)/short.wav (1 s long)"), text)
        }
        XCTAssertNoThrow(try PlayerRacks.plan(PlayerRacks.text(file: dir + "/short.wav", settings: #""cues": { "intro": 0.5 }"#)))
    }
}
