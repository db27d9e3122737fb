import Foundation
import StageCore
import StageControl
import StageDrivers
import StagePlayer
import XCTest

/// A setlist song's sections drive the rack on the frames of their bar lines (snapshot
/// recalls, a player's commands), whatever the block size; a MIDI button jumps to the next
/// section or repeats the current one from the next bar line; bad sections are errors at
/// their line:column in the setlist.
final class SongSectionTests: XCTestCase {
    static let rate = 48000.0
    static let tempo = 130.0
    /// 22,153.8… frames a beat: the sections' frames are rounded up, never exact.
    static let framesPerBeat: Double = 60 * rate / tempo

    /// The first frame at or after `beat` (from bar 1 beat 1 at frame 0).
    static func frame(beat: Double, from start: Int = 0, startBeat: Double = 0) -> Int {
        let frames: Double = (beat - startBeat) * framesPerBeat
        return start + Int(frames.rounded(.up))
    }

    /// A rack: the player `backing` (a constant 0.3) through gain `g` to the output, three
    /// snapshots of `g`, and note 60 / 62 mapped to next-section / repeat-section.
    static let rack = """
        { "format": 2,
          "units": { "backing": { "type": "player", "file": "dc.wav"STARTS },
                     "g": { "type": "gain" }, "out": { "type": "output" } },
          "connections": ["backing -> g -> out"],
          "snapshots": { "quiet": { "morph": 0, "params": { "g.gain": -40 } },
                         "half": { "morph": 0, "params": { "g.gain": -20 } },
                         "loud": { "morph": 0, "params": { "g.gain": 0 } } },
          "midi": { "map": [ { "note": 60, "action": "next-section" }, { "note": 62, "action": "repeat-section" } ] } }
        """

    func folder(sections: String, startOnLoad: Bool = false, extra: String = "") -> String {
        let setlist = """
            { "format": 2, "songs": [
              { "rack": "r.json", "tempo": 130, "timeSignature": "4/4"\(extra),
                "sections": \(sections) } ] }
            """
        let rack = Self.rack.replacingOccurrences(of: "STARTS", with: startOnLoad ? ", \"startOnLoad\": true" : "")
        let dir = SongFiles.write(["set.json": setlist, "r.json": rack])
        TrackFiles.write(dir + "/dc.wav", channels: [[Float](repeating: 0.3, count: 48000 * 9)], rate: 48000)
        return dir
    }

    func render(_ dir: String, frames: Int, block: Int, midi: [(Double, MIDIMessage)] = []) throws -> [Float] {
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: block)
        let renderer = OfflineRenderer(plan: plan)
        var left: [Float] = []
        left.reserveCapacity(frames)
        let file = StandardMIDIFile(
            messages: midi.map { StandardMIDIFile.TimedMessage(seconds: $0.0, message: $0.1) }, duration: midi.last?.0 ?? 0)
        renderer.render(input: nil, midi: file, frames: frames, blockSize: block) { bus, n in
            left += UnsafeBufferPointer(start: bus[0], count: n)
        }
        return left
    }

    /// The first frame from `start` on whose level is within 2 % of `level`.
    func firstFrame(_ x: [Float], at level: Float, from start: Int = 0) -> Int? {
        (start..<x.count).first { abs(x[$0] - level) <= 0.02 * level }
    }

    func testActionsLandOnTheFrameOfTheirBarLineAtAnyBlockSize() throws {
        let dir = folder(sections: """
            [ { "name": "intro", "at": "1:1", "actions": ["snapshot half"] },
              { "name": "verse", "at": 2, "actions": ["backing.play"] },
              { "name": "chorus", "at": "3:3", "actions": ["snapshot loud"] } ]
            """)
        let verse = Self.frame(beat: 4)
        let chorus = Self.frame(beat: 10)
        for block in [64, 512, 97] {
            let out = try render(dir, frames: chorus + 4800, block: block)
            XCTAssertEqual(out[..<verse].map(abs).max(), 0, "block \(block): silent before the verse starts the player")
            XCTAssertEqual(firstFrame(out, at: 0.03), verse, "block \(block): the player starts on bar 2 (−20 dB)")
            XCTAssertEqual(firstFrame(out, at: 0.3), chorus, "block \(block): the chorus snapshot on bar 3 beat 3")
        }
    }

    func testAButtonJumpsOrRepeatsAtTheNextBarLine() throws {
        let dir = folder(
            sections: """
                [ { "name": "A", "at": "1:1", "actions": ["snapshot quiet"] },
                  { "name": "B", "at": "3:1", "actions": ["snapshot half"] },
                  { "name": "C", "at": "5:1", "actions": ["snapshot loud"] } ]
                """, startOnLoad: true)
        // Next at 1 s (bar 1): B from bar 2's line (beat 4), not bar 3's.
        let jump = Self.frame(beat: 4)
        // Repeat at 2.5 s (in B's first bar): B again from B's second bar line.
        let repeatFrame = Self.frame(beat: 12, from: jump, startBeat: 8)
        // C then comes 8 beats after B's second start, not after its first.
        let c = Self.frame(beat: 16, from: repeatFrame, startBeat: 8)
        let midi: [(Double, MIDIMessage)] = [
            (1.0, .noteOn(channel: 0, note: 60, velocity: 100)), (1.1, .noteOff(channel: 0, note: 60)),
            (2.5, .noteOn(channel: 0, note: 62, velocity: 100)), (2.6, .noteOff(channel: 0, note: 62)),
        ]
        for block in [64, 512, 97] {
            let out = try render(dir, frames: c + 2400, block: block, midi: midi)
            XCTAssertEqual(firstFrame(out, at: 0.03), jump, "block \(block): B at the bar line after the button")
            let unrepeated = Self.frame(beat: 16, from: jump, startBeat: 8)
            XCTAssertEqual(out[unrepeated + 100], 0.03, accuracy: 0.001, "block \(block): C waits: B repeats")
            XCTAssertEqual(firstFrame(out, at: 0.3), c, "block \(block): C 8 beats after B's repeat")
        }
    }

    /// A sync leader's jump (`EngineEvent.section(_:atBar:)`) lands on the bar line of its
    /// song beat, or on the next one when that has passed; a button's jump is published for
    /// a leader to tell (`armedJump`: count, way, the song beat of its bar line).
    func testALeadersJumpLandsOnItsBarLineOrTheNext() throws {
        let dir = folder(
            sections: """
                [ { "name": "A", "at": "1:1", "actions": ["snapshot quiet"] },
                  { "name": "B", "at": "5:1", "actions": ["snapshot half"] } ]
                """, startOnLoad: true)
        let barThree = Self.frame(beat: 8)
        for (atBar, sent) in [(8, 0), (4, Self.frame(beat: 6))] {
            let plan = try SongFiles.plan(setlist: dir + "/set.json", block: 97)
            let renderer = OfflineRenderer(plan: plan)
            XCTAssertTrue(renderer.player.controlEvents.push(.section(.next, atBar: atBar, at: Int64(sent))))
            var out: [Float] = []
            renderer.render(input: nil, midi: nil, frames: barThree + 2400, blockSize: 97) { bus, n in
                out += UnsafeBufferPointer(start: bus[0], count: n)
            }
            XCTAssertEqual(firstFrame(out, at: 0.03), barThree, "the jump for beat \(atBar), sent at frame \(sent): B from bar 3")
        }
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: 128)
        let renderer = OfflineRenderer(plan: plan)
        let midi = StandardMIDIFile(
            messages: [StandardMIDIFile.TimedMessage(seconds: 1.0, message: .noteOn(channel: 0, note: 60, velocity: 100))], duration: 1.0)
        renderer.render(input: nil, midi: midi, frames: 48000 * 2, blockSize: 128) { _, _ in }
        let armed = try XCTUnwrap(renderer.player.current.songClock?.armedJump)
        XCTAssertEqual(armed.count, 1)
        XCTAssertEqual(armed.jump, .next)
        XCTAssertEqual(armed.bar, 4, "the button at 1 s (beat 2.2) arms bar 2's line, song beat 4")
    }

    func testTheSectionPlayingAndTheNextArePublished() throws {
        let dir = folder(sections: """
            [ { "name": "A", "at": "1:1" }, { "name": "B", "at": "2:1" } ]
            """)
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: 128)
        let engine = RenderEngine(plan: plan)
        let clock = try XCTUnwrap(engine.songClock)
        XCTAssertTrue(clock.published == (nil, 0), "before the first block: none playing, A next")
        engine.render(frameCount: 128)
        XCTAssertTrue(clock.published == (0, 1), "A plays, B next")
        while engine.sampleTime < Int64(Self.frame(beat: 4)) { engine.render(frameCount: 128) }
        XCTAssertTrue(clock.published == (1, nil), "B plays, none next")
        XCTAssertEqual(plan.rack.timeline.sections.map(\.name), ["A", "B"])
    }

    /// Sections placed by time in the song's track (`"time"`) land where the track's
    /// position reaches their time, at any block size; with a count-in, the track (and so
    /// they) starts on the downbeat after it.
    func testSectionsPlacedByTimeFollowTheTracksPosition() throws {
        let sections = """
            [ { "name": "A", "time": 0.5, "actions": ["snapshot quiet"] },
              { "name": "B", "time": "0:01.25", "actions": ["snapshot half"] },
              { "name": "C", "time": 2, "actions": ["snapshot loud"] } ]
            """
        for countIn in [0, 1] {
            let dir = folder(sections: sections, startOnLoad: true, extra: ", \"track\": \"dc.wav\", \"countIn\": \(countIn)")
            let trackStart = countIn == 0 ? 0 : Self.frame(beat: 4)
            for block in [64, 97, 512] {
                let out = try render(dir, frames: trackStart + 96000 + 2400, block: block)
                XCTAssertEqual(firstFrame(out, at: 0.003), trackStart + 24000, "count-in \(countIn), block \(block): A at 0.5 s of the track")
                XCTAssertEqual(firstFrame(out, at: 0.03), trackStart + 60000, "count-in \(countIn), block \(block): B at 1.25 s")
                XCTAssertEqual(
                    firstFrame(out, at: 0.3, from: trackStart + 60000), trackStart + 96000, "count-in \(countIn), block \(block): C at 2 s")
            }
        }
    }

    func testSectionsPlacedByTimeAreCheckedWhenTheSetlistIsRead() throws {
        let dir = folder(sections: """
            [ { "name": "A", "time": 1.5 },
              { "name": "B", "time": "0:01.5" },
              { "name": "C", "at": 3 },
              { "name": "D", "time": "1:75" },
              { "name": "E", "at": 2, "time": 4 } ]
            """)
        let found = errors { _ = try RackFiles.readSetlist(dir + "/set.json") }
        let expected = [
            "songs[0].sections[1].time: section \"A\" already starts at 1.5 s",
            "songs[0].sections[2]: a song's sections are placed all by bar (\"at\") or all by time in the track (\"time\"), not both",
            "songs[0].sections[3].time: must be a time in the backing track",
            "songs[0].sections[4].time: a section starts at a bar (\"at\") or at a time in the track (\"time\"), not both",
            "songs[0].sections: sections placed by \"time\" need the song's \"track\"",
        ]
        XCTAssertEqual(found.count, expected.count, found.joined(separator: "\n"))
        for e in expected {
            XCTAssertTrue(found.contains { $0.contains(e) }, "missing \(e) in\n\(found.joined(separator: "\n"))")
        }
    }

    /// A section placed at or past the end of the song's track (9 s) is an error at its
    /// `"time"` when the song is read (the track's length from its header).
    func testASectionPlacedPastTheTracksEndIsAnErrorAtItsTime() throws {
        let dir = folder(
            sections: """
                [ { "name": "A", "time": 4 },
                  { "name": "B", "time": "0:12.5" },
                  { "name": "C", "time": 9 } ]
                """, extra: ", \"track\": \"dc.wav\"")
        let setlist = try RackFiles.readSetlist(dir + "/set.json")
        let found = errors { _ = try RackFiles.readSong(setlist, 0, registry: PlayerRacks.registry) }
        let expected = [
            "set.json:4:26: songs[0].sections[1].time: 12.5 s is past the end of the track (9 s long)",
            "set.json:5:26: songs[0].sections[2].time: 9 s is past the end of the track (9 s long)",
        ]
        XCTAssertEqual(found.count, expected.count, found.joined(separator: "\n"))
        for e in expected {
            XCTAssertTrue(found.contains { $0.contains(e) }, "missing \(e) in\n\(found.joined(separator: "\n"))")
        }
        let fine = folder(sections: #"[ { "name": "A", "time": 4 }, { "name": "B", "time": 8.99 } ]"#, extra: ", \"track\": \"dc.wav\"")
        XCTAssertNoThrow(try RackFiles.readSong(try RackFiles.readSetlist(fine + "/set.json"), 0, registry: PlayerRacks.registry))
    }

    /// A section placed by bar in a song with a track and a tempo (130 BPM: 9.231 s to bar
    /// 6) is an error at its `"at"` when its bar falls at or past the end of the track (9 s,
    /// from the WAV's header): counted from where the track starts (bar 1 beat 1, on load or
    /// after the count-in, which adds nothing; or the section that plays it), in beats of
    /// the time signature's beat unit.
    func testASectionPlacedByBarPastTheTracksEndIsAnErrorAtItsAt() throws {
        let sections = """
            [ { "name": "A", "at": "1:1" },
              { "name": "B", "at": "5:4" },
              { "name": "C", "at": "6:1" },
              { "name": "D", "at": 7 } ]
            """
        let expected = [
            "set.json:5:24: songs[0].sections[2].at: bar 6:1 is 9.231 s into the track at 130 BPM, past its end (9 s long)",
            "set.json:6:24: songs[0].sections[3].at: bar 7:1 is 11.077 s into the track at 130 BPM, past its end (9 s long)",
        ]
        // On load, and after a count-in of 2 bars (the track then starts on bar 1 too).
        for (startOnLoad, countIn) in [(true, ""), (false, ", \"countIn\": 2")] {
            let dir = folder(sections: sections, startOnLoad: startOnLoad, extra: ", \"track\": \"dc.wav\"" + countIn)
            let found = errors { _ = try RackFiles.readSong(try RackFiles.readSetlist(dir + "/set.json"), 0, registry: PlayerRacks.registry) }
            XCTAssertEqual(found, expected.map { dir + "/" + $0 }, "start on load \(startOnLoad), count-in \(countIn)")
        }
        // Started by the section of bar 2: bar 6:1 is 16 beats (7.385 s) into the track, 7:2 21 (9.692 s).
        let later = folder(
            sections: """
                [ { "name": "A", "at": "1:1" },
                  { "name": "B", "at": 2, "actions": ["backing.play"] },
                  { "name": "C", "at": "6:1" },
                  { "name": "D", "at": "7:2" } ]
                """, extra: ", \"track\": \"dc.wav\"")
        let found = errors { _ = try RackFiles.readSong(try RackFiles.readSetlist(later + "/set.json"), 0, registry: PlayerRacks.registry) }
        XCTAssertEqual(found, [later + "/set.json:6:24: songs[0].sections[3].at: bar 7:2 is 9.692 s into the track at 130 BPM, past its end (9 s long)"])
        // In 6/8 the tempo counts eighths: bar 3 is 12 of them, 5.538 s in; bar 4 is 18, 8.308 s; bar 5 is 24, 11.077 s.
        let compound = folder(
            sections: #"[ { "name": "A", "at": 3 }, { "name": "B", "at": 4 }, { "name": "C", "at": 5 } ]"#, startOnLoad: true,
            extra: ", \"track\": \"dc.wav\"")
        let text = try String(contentsOfFile: compound + "/set.json", encoding: .utf8).replacingOccurrences(of: "4/4", with: "6/8")
        try text.write(toFile: compound + "/set.json", atomically: true, encoding: .utf8)
        let sixEight = errors { _ = try RackFiles.readSong(try RackFiles.readSetlist(compound + "/set.json"), 0, registry: PlayerRacks.registry) }
        XCTAssertEqual(sixEight.count, 1, sixEight.joined(separator: "\n"))
        XCTAssertTrue(sixEight.first?.contains("sections[2].at: bar 5:1 is 11.077 s into the track") == true, sixEight.joined(separator: "\n"))
        // No check without a tempo (the bar's time is not known) or while nothing starts the track.
        let noTempo = folder(sections: sections, startOnLoad: true, extra: ", \"track\": \"dc.wav\"")
        let untimed = try String(contentsOfFile: noTempo + "/set.json", encoding: .utf8).replacingOccurrences(of: "\"tempo\": 130, ", with: "")
        try untimed.write(toFile: noTempo + "/set.json", atomically: true, encoding: .utf8)
        XCTAssertNoThrow(try RackFiles.readSong(try RackFiles.readSetlist(noTempo + "/set.json"), 0, registry: PlayerRacks.registry))
        let unstarted = folder(sections: sections, extra: ", \"track\": \"dc.wav\"")
        XCTAssertNoThrow(try RackFiles.readSong(try RackFiles.readSetlist(unstarted + "/set.json"), 0, registry: PlayerRacks.registry))
    }

    func errors(_ body: () throws -> Void) -> [String] {
        do {
            try body()
            return []
        } catch {
            return (error as? RackError)?.diagnostics.map(\.description) ?? ["\(error)"]
        }
    }

    func testBadSectionsAreErrorsAtTheirPlaceWhenTheSetlistIsRead() throws {
        let dir = folder(
            sections: """
                [ { "name": "A", "at": "1:1", "actions": ["dance"] },
                  { "name": "B", "at": "1:1" },
                  { "name": "C", "at": "9:1" },
                  { "name": "D", "at": "2:5" } ]
                """, extra: ", \"bars\": 8")
        let found = errors { _ = try RackFiles.readSetlist(dir + "/set.json") }
        let expected = [
            "set.json:3:59: songs[0].sections[0].actions[0]: must be",
            "set.json:4:24: songs[0].sections[1].at: section \"A\" already starts at 1:1",
            "set.json:5:24: songs[0].sections[2].at: bar 9 is past the song's end (\"bars\": 8)",
            "set.json:6:24: songs[0].sections[3].at: must be \"bar:beat\" (bar 1…, beat 1…4)",
        ]
        XCTAssertEqual(found.count, expected.count, found.joined(separator: "\n"))
        for e in expected {
            XCTAssertTrue(found.contains { $0.contains(e) }, "missing \(e) in\n\(found.joined(separator: "\n"))")
        }
    }

    func testActionsTheRackCannotDoAreErrorsWhenTheSongIsRead() throws {
        let dir = folder(sections: """
            [ { "name": "A", "at": "1:1", "actions": ["snapshot lowd", "backing.jump", "drums.play", "talk on"] } ]
            """)
        let setlist = try RackFiles.readSetlist(dir + "/set.json")
        let found = errors { _ = try RackFiles.readSong(setlist, 0, registry: PlayerRacks.registry) }
        let expected = [
            "set.json:3:59: songs[0].sections[0].actions[0]: \(dir)/r.json has no snapshot \"lowd\" (did you mean \"loud\"?)",
            "set.json:3:76: songs[0].sections[0].actions[1]: a player unit takes \"play\", \"stop\", \"toggle\", \"restart\", not \"jump\"",
            "set.json:3:92: songs[0].sections[0].actions[2]: \(dir)/r.json has no unit \"drums\"",
        ]
        XCTAssertEqual(found.count, expected.count, found.joined(separator: "\n"))
        for e in expected {
            XCTAssertTrue(found.contains { $0.contains(e) }, "missing \(e) in\n\(found.joined(separator: "\n"))")
        }
    }
}
