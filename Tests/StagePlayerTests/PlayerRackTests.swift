import Foundation
import StageCore
import StagePlayer
import XCTest

/// Rack files with players: settings and `unit.command` actions are checked with clear
/// errors; a command mapping fires on the press, at the message's frame.
final class PlayerRackTests: XCTestCase {
    lazy var file: String = {
        let dir = TrackFiles.folder()
        TrackFiles.write(dir + "/t.wav", channels: [[Float](repeating: 0.1, count: 4800)], rate: 48000)
        return dir + "/t.wav"
    }()

    func errors(_ text: String) -> String {
        do {
            _ = try PlayerRacks.plan(text)
            return ""
        } catch {
            return "\(error)"
        }
    }

    func testCommandsAreCheckedWithSuggestions() {
        let cues = "\"cues\": { \"chorus\": 0.05 }"
        XCTAssertEqual(errors(PlayerRacks.text(file: file, settings: cues, map: "{ \"note\": 36, \"action\": \"track.cue chorus\" }")), "")
        let typo = errors(PlayerRacks.text(file: file, map: "{ \"note\": 36, \"action\": \"track.paly\" }"))
        XCTAssertTrue(typo.contains("a player unit takes \"play\""), typo)
        XCTAssertTrue(typo.contains("did you mean \"play\""), typo)
        let cue = errors(PlayerRacks.text(file: file, settings: cues, map: "{ \"note\": 36, \"action\": \"track.cue verse\" }"))
        XCTAssertTrue(cue.contains("not \"cue verse\""), cue)
        let unit = errors(PlayerRacks.text(file: file, map: "{ \"note\": 36, \"action\": \"trak.play\" }"))
        XCTAssertTrue(unit.contains("no unit named \"trak\""), unit)
        let none = errors(PlayerRacks.text(file: file, map: "{ \"note\": 36, \"action\": \"out.play\" }"))
        XCTAssertTrue(none.contains("takes no commands"), none)
        let extra = errors(PlayerRacks.text(file: file, map: "{ \"cc\": 3, \"action\": \"track.play\", \"min\": 0 }"))
        XCTAssertTrue(extra.contains("does not apply to a unit's command"), extra)
    }

    func testBadSettingsAndMissingFilesAreErrorsOfTheRack() {
        let missing = errors(PlayerRacks.text(file: "/nonexistent/song.wav"))
        XCTAssertTrue(missing.contains("/nonexistent/song.wav"), missing)
        XCTAssertTrue(errors(PlayerRacks.text(file: file, settings: "\"loop\": [10, 5]")).contains("loop"))
        XCTAssertTrue(errors(PlayerRacks.text(file: file, settings: "\"loop\": [0, 999999]")).contains("after the file's end"))
        XCTAssertTrue(errors(PlayerRacks.text(file: file, settings: "\"cues\": { \"a\": -1 }")).contains("cues"))
        XCTAssertTrue(errors(PlayerRacks.text(file: file, settings: "\"startOnLoad\": 1")).contains("true or false"))
        XCTAssertTrue(errors(PlayerRacks.text(file: file, settings: "\"trigger\": \"once\"")).contains("oneShot"))
        let dir = TrackFiles.folder()
        FileManager.default.createFile(atPath: dir + "/junk.wav", contents: Data("not a sound file".utf8))
        XCTAssertTrue(errors(PlayerRacks.text(file: dir + "/junk.wav")).contains("junk.wav"))
    }

    /// The mapper turns the press into a command event for the player at the message's
    /// frame, and the release into a release (which the player ignores).
    func testAPressIsACommandAtItsFrame() throws {
        let plan = try PlayerRacks.plan(PlayerRacks.text(file: file, map: "{ \"cc\": 85, \"action\": \"track.toggle\" }"))
        let mapper = MIDIMapper(plan: plan)
        var events: [EngineEvent] = []
        mapper.handle(.controlChange(channel: 3, controller: 85, value: 127), at: 777) { events.append($0) }
        mapper.handle(.controlChange(channel: 3, controller: 85, value: 0), at: 900) { events.append($0) }
        XCTAssertEqual(events.count, 2)
        XCTAssertEqual(events[0].kind, .midi)
        XCTAssertEqual(events[0].sampleTime, 777)
        XCTAssertEqual(Int(events[0].unit), plan.unitIndex("track"))
        XCTAssertEqual(UnitCommand.index(of: events[0].message), 2)  // play, stop, toggle
        XCTAssertTrue(UnitCommand.isPress(events[0].message))
        XCTAssertFalse(UnitCommand.isPress(events[1].message))
    }
}
