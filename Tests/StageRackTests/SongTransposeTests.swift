import Foundation
import StageControl
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// A setlist song's `transpose` (semitones, −12…12) moves together the synth's notes, the
/// MIDI file's and the keyboard's, and the harmony and tune keys; beyond ±12 it is an
/// error at its place.
final class SongTransposeTests: XCTestCase {
    typealias Backing = SongMIDIBackingTests

    /// The fundamental of `x[from..<to]` (frames) in Hz.
    func pitch(_ x: [Float], _ from: Int, _ to: Int) -> Double {
        PitchMeasure.fundamental(x[from..<to], sampleRate: 48000, low: 100, high: 1000)
    }

    func testTheFilesNotesAndTheKeyboardsMoveTogether() throws {
        // The file holds A4 for two beats; the keyboard plays C4 from 1.5 s.
        let midi: [(Int, MIDIMessage)] = [(0, .noteOn(channel: 0, note: 69, velocity: 100)), (960, .noteOff(channel: 0, note: 69))]
        let live: [(Double, MIDIMessage)] = [(1.5, .noteOn(channel: 0, note: 60, velocity: 100)), (2.4, .noteOff(channel: 0, note: 60))]
        for (transpose, fileHz, keysHz) in [(0, 440.0, 261.63), (2, 493.88, 293.66), (-5, 329.63, 196.0)] {
            let dir = Backing.folder(song: "\"tempo\": 120, \"transpose\": \(transpose)", midi: MIDIFileBytes.make(midi))
            let x = try Backing.render(dir, frames: 120000, block: 128, live: live)
            let file = pitch(x, 4800, 38400)
            let keys = pitch(x, 76800, 110000)
            XCTAssertEqual(Measure.cents(file, from: fileHz), 0, accuracy: 5, "transpose \(transpose): the file's A4 at \(file) Hz")
            XCTAssertEqual(Measure.cents(keys, from: keysHz), 0, accuracy: 5, "transpose \(transpose): the keyboard's C4 at \(keys) Hz")
        }
    }

    static let harmonyRack = """
        { "format": 2,
          "units": { "mic": { "type": "input" }, "h": { "type": "harmony", "source": "scale", "key": "G" },
                     "t": { "type": "tune", "key": "E" }, "out": { "type": "output" } },
          "connections": ["mic -> t -> h -> out"] }
        """

    func keys(song: String) throws -> [String?] {
        let dir = Backing.folder(song: song, midi: MIDIFileBytes.make(Backing.notes([0])))
        FileManager.default.createFile(atPath: dir + "/r.json", contents: Data(Self.harmonyRack.utf8))
        let setlist = try RackFiles.readSetlist(dir + "/set.json")
        let rack = try RackFiles.readSong(setlist, 0, registry: Fixtures.registry)
        XCTAssertNoThrow(try GraphCompiler(registry: Fixtures.registry).compile(rack, options: GraphCompiler.Options()))
        return ["h", "t"].map { id in rack.unit(id)?.settings.node("key")?.string }
    }

    func testTheHarmonyAndTuneKeysMoveWithTheSong() throws {
        XCTAssertEqual(try keys(song: "\"key\": \"Bb\", \"transpose\": 2"), ["C", "C"], "the song's key, moved")
        XCTAssertEqual(try keys(song: "\"transpose\": -3"), ["E", "C#"], "the units' own keys, moved")
        XCTAssertEqual(try keys(song: "\"key\": \"F#\""), ["F#", "F#"], "no transpose: the song's key")
        XCTAssertEqual(SetlistSong.transposed(key: "B", by: 12), "B")
        XCTAssertEqual(SetlistSong.transposed(key: "C", by: -1), "B")
    }

    /// The backing track moves with the song: each player's `transpose` parameter is its
    /// own value plus the song's when the song loads, and follows `transpose-up` at once.
    func testTheBackingTracksPlayerMovesWithTheSong() throws {
        let dir = Fixtures.temporaryPath("player-transpose-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let writer = try AudioFileWriter(path: dir + "/t.wav", channels: 1, sampleRate: 48000, maxFrames: 4800)
        try writer.write(channels: [[Float](repeating: 0.1, count: 4800)])
        try writer.close()
        let rack = """
            { "format": 2,
              "units": { "track": { "type": "player", "file": "t.wav", "params": { "transpose": -1 } }, "out": { "type": "output" } },
              "connections": ["track -> out"],
              "midi": { "map": [ { "cc": 20, "action": "transpose-up" } ] } }
            """
        FileManager.default.createFile(atPath: dir + "/p.json", contents: Data(rack.utf8))
        let setlist = """
            { "format": 2, "songs": [ { "rack": "p.json", "transpose": 3, "transposeAt": "now" } ] }
            """
        FileManager.default.createFile(atPath: dir + "/set.json", contents: Data(setlist.utf8))
        let song = try RackFiles.readSong(try RackFiles.readSetlist(dir + "/set.json"), 0, registry: Fixtures.registry)
        let value = song.unit("track")?.parameterValues.first { $0.id == "transpose" }?.value
        XCTAssertEqual(value, 2, "the player's own -1 moved by the song's +3")
        let primed = song.unit("track")?.settings.node(RackDescription.songTransposeKey)?.number
        XCTAssertEqual(primed, 2, "the player preloads its file's start at that pitch")
        let plan = try GraphCompiler(registry: Fixtures.registry).compile(song, options: GraphCompiler.Options())
        let clock = try XCTUnwrap(SongClock(plan: plan))
        let transposer = try XCTUnwrap(clock.transposer)
        let events = UnsafeMutablePointer<EngineEvent>.allocate(capacity: 8)
        defer { events.deallocate() }
        events[0] = .transpose(1, at: 100)
        transposer.take(events, count: 1, blockStart: 0, clock: clock)
        let n = transposer.advance(sectionStart: -1, blockStart: 0, blockEnd: 512, clock: clock, list: events, count: 0, capacity: 8)
        XCTAssertEqual(n, 1, "one parameter event: the player's transpose")
        XCTAssertEqual(events[0].kind, .parameter)
        XCTAssertEqual(events[0].value, 3, "the player one semitone up from its 2")
        XCTAssertEqual(transposer.published, 4, "the song's +3 and one up")
    }

    func testATransposeBeyondAnOctaveIsAnErrorAtItsPlace() throws {
        for bad in ["13", "-12.5", "\"up\""] {
            let dir = Backing.folder(song: "\"transpose\": \(bad)", midi: MIDIFileBytes.make(Backing.notes([0])))
            do {
                _ = try RackFiles.readSetlist(dir + "/set.json")
                XCTFail("transpose \(bad)")
            } catch {
                XCTAssertTrue("\(error)".contains("set.json:2:56: songs[0].transpose: must be the song's transpose in semitones, −12…12"), "\(error)")
            }
        }
    }

    /// The synth rack with note 101 mapped to transpose-up and 102 to transpose-down.
    static let liveRack = Backing.rack.replacingOccurrences(
        of: #"{ "note": 100, "action": "next-section" }"#,
        with: #"{ "note": 100, "action": "next-section" }, { "note": 101, "action": "transpose-up" }, { "note": 102, "action": "transpose-down" }"#)

    /// A4 an eighth long on every beat for 12 beats at 120 BPM (0.5 s a beat); sections at
    /// bars 1 and 3; `extra` song keys. Returns the pitch of each beat's note.
    func livePitches(extra: String, live: [(Double, MIDIMessage)]) throws -> (pitches: [Double], published: Int?) {
        let midi: [(Int, MIDIMessage)] = (0..<12).flatMap { b -> [(Int, MIDIMessage)] in
            [(b * 480, .noteOn(channel: 0, note: 69, velocity: 100)), (b * 480 + 240, .noteOff(channel: 0, note: 69))]
        }
        let dir = Backing.folder(
            song: #""tempo": 120, "sections": [ { "name": "A", "at": 1 }, { "name": "B", "at": 3 } ]"# + extra,
            midi: MIDIFileBytes.make(midi))
        FileManager.default.createFile(atPath: dir + "/r.json", contents: Data(Self.liveRack.utf8))
        let renderer = OfflineRenderer(plan: try Backing.plan(dir, block: 128))
        var x: [Float] = []
        let file = StandardMIDIFile(
            messages: live.map { StandardMIDIFile.TimedMessage(seconds: $0.0, message: $0.1) }, duration: live.last?.0 ?? 0)
        renderer.render(input: nil, midi: file, frames: 12 * 24000, blockSize: 128) { bus, n in
            x += UnsafeBufferPointer(start: bus[0], count: n)
        }
        let pitches = (0..<12).map { b in pitch(x, b * 24000 + 960, b * 24000 + 10560) }
        return (pitches, renderer.player.current.songClock?.transposer?.published)
    }

    func press(_ note: Int, at seconds: Double) -> [(Double, MIDIMessage)] {
        [(seconds, .noteOn(channel: 0, note: note, velocity: 100)), (seconds + 0.05, .noteOff(channel: 0, note: note))]
    }

    func semitones(_ pitches: [Double]) -> [Int] { pitches.map { Int((Measure.cents($0, from: 440) / 100).rounded()) } }

    func testTransposeUpWaitsForTheNextSection() throws {
        // Up at 0.7 s (bar 1): from bar 3 (beat 8) on, a semitone up.
        let (pitches, published) = try livePitches(extra: "", live: press(101, at: 0.7))
        XCTAssertEqual(semitones(pitches), [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1], "\(pitches)")
        XCTAssertEqual(published, 1)
        for p in pitches[8...] { XCTAssertEqual(Measure.cents(p, from: 466.16), 0, accuracy: 5) }
    }

    func testTransposeAtOnceFromTheNextNote() throws {
        // "now": up twice at 0.7 s and 0.8 s, down once at 2.7 s, on top of the song's −1.
        let live = press(101, at: 0.7) + press(101, at: 0.8) + press(102, at: 2.7)
        let (pitches, published) = try livePitches(extra: #", "transpose": -1, "transposeAt": "now""#, live: live)
        XCTAssertEqual(semitones(pitches), [-1, -1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0], "\(pitches)")
        XCTAssertEqual(published, 0)
    }

    /// A box in sync (`transposesEverySong`) takes its leader's transpose in all, at once,
    /// though its song maps no transpose action and has sections (`transposeAt` would wait
    /// for one): +3 asked at 1.25 s (beat 2.5) sounds from beat 3, +3 and not +3 on +3 when
    /// asked again; a plan without the option has no transpose at all.
    func testASyncFollowersTransposeLandsAtOnceWhateverTheSongMaps() throws {
        let midi: [(Int, MIDIMessage)] = (0..<8).flatMap { b -> [(Int, MIDIMessage)] in
            [(b * 480, .noteOn(channel: 0, note: 69, velocity: 100)), (b * 480 + 240, .noteOff(channel: 0, note: 69))]
        }
        let dir = Backing.folder(
            song: #""tempo": 120, "sections": [ { "name": "A", "at": 1 }, { "name": "B", "at": 3 } ]"#, midi: MIDIFileBytes.make(midi))
        let setlist = try RackFiles.readSetlist(dir + "/set.json")
        let rack = try RackFiles.readSong(setlist, 0, registry: Fixtures.registry)
        var options = GraphCompiler.Options(sampleRate: 48000, maxFrames: 128, realTime: false)
        XCTAssertNil(RenderEngine(plan: try GraphCompiler(registry: Fixtures.registry).compile(rack, options: options)).songClock?.transposer)
        options.transposesEverySong = true
        let renderer = OfflineRenderer(plan: try GraphCompiler(registry: Fixtures.registry).compile(rack, options: options))
        XCTAssertEqual(renderer.player.current.songClock?.transposer?.published, 0)
        XCTAssertTrue(renderer.player.controlEvents.push(.transpose(to: 3, at: 60000)))
        XCTAssertTrue(renderer.player.controlEvents.push(.transpose(to: 3, at: 130000)))
        var x: [Float] = []
        renderer.render(input: nil, midi: nil, frames: 8 * 24000, blockSize: 128) { bus, n in
            x += UnsafeBufferPointer(start: bus[0], count: n)
        }
        let pitches = (0..<8).map { b in pitch(x, b * 24000 + 960, b * 24000 + 10560) }
        XCTAssertEqual(semitones(pitches), [0, 0, 0, 3, 3, 3, 3, 3], "\(pitches)")
        XCTAssertEqual(renderer.player.current.songClock?.transposer?.published, 3)
    }
}
