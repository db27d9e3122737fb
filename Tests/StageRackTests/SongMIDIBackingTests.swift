import CAllocCounter
import Foundation
import StageControl
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// A setlist song's MIDI-file backing (`"midi"`) through the FluidSynth unit: its notes on
/// the frames of their beats in the song's tempo (after the count-in), on FluidSynth's
/// 64-frame grid; the same at 64 and 512 frames a block; relocated by a section jump with
/// its held notes ended; read errors at their line:column; nothing allocated on the render
/// thread.
final class SongMIDIBackingTests: XCTestCase {
    static let font = Fixtures.repository.appendingPathComponent("soundfonts/stagerack-basic.sf2").path
    static let rate = 48000.0
    static let tempo = 130.0
    /// 22,153.8… frames a beat: the notes' frames are rounded up, never exact.
    static let framesPerBeat: Double = 60 * rate / tempo

    /// The first frame at or after song beat `beat` (bar 1 beat 1 at `start`).
    static func frame(_ beat: Double, start: Int = 0) -> Int {
        let frames: Double = beat * framesPerBeat
        return start + Int(frames.rounded(.up))
    }

    /// The saw lead (program 3 of the bundled font, 4 ms attack, 0.12 s release: clear onsets), note 100 jumps to the next section.
    static let rack = """
        { "format": 2,
          "units": { "synth": { "type": "synth", "soundfont": "\(font)", "channel": "all", "program": 3 },
                     "out": { "type": "output" } },
          "connections": ["synth -> out"],
          "midi": { "map": [ { "note": 100, "action": "next-section" } ] } }
        """

    /// A folder with the setlist (song keys `song`), the rack and `song.mid` (`midi` bytes).
    static func folder(song: String, midi: [UInt8]) -> String {
        let dir = Fixtures.temporaryPath("backing-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let setlist = """
            { "format": 2, "songs": [
              { "rack": "r.json", "midi": "song.mid", \(song) } ] }
            """
        FileManager.default.createFile(atPath: dir + "/set.json", contents: Data(setlist.utf8))
        FileManager.default.createFile(atPath: dir + "/r.json", contents: Data(rack.utf8))
        FileManager.default.createFile(atPath: dir + "/song.mid", contents: Data(midi))
        return dir
    }

    static func plan(_ dir: String, block: Int) throws -> RenderPlan {
        let setlist = try RackFiles.readSetlist(dir + "/set.json")
        let rack = try RackFiles.readSong(setlist, 0, registry: Fixtures.registry)
        return try GraphCompiler(registry: Fixtures.registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: rate, maxFrames: block, realTime: false))
    }

    /// The left channel of `frames` frames of the song in blocks of `block`, with live MIDI `live`.
    static func render(_ dir: String, frames: Int, block: Int, live: [(Double, MIDIMessage)] = []) throws -> [Float] {
        let renderer = OfflineRenderer(plan: try plan(dir, block: block))
        var left: [Float] = []
        left.reserveCapacity(frames)
        let file = StandardMIDIFile(
            messages: live.map { StandardMIDIFile.TimedMessage(seconds: $0.0, message: $0.1) }, duration: live.last?.0 ?? 0)
        renderer.render(input: nil, midi: file, frames: frames, blockSize: block) { bus, n in
            left += UnsafeBufferPointer(start: bus[0], count: n)
        }
        return left
    }

    /// Frames where the signal rises above −80 dBFS after at least 4,800 frames below it.
    static func onsets(_ x: [Float]) -> [Int] {
        var found: [Int] = []
        var quiet = 4800
        for i in x.indices {
            if abs(x[i]) > 1e-4 {
                if quiet >= 4800 { found.append(i) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return found
    }

    /// Short notes (a sixteenth) on `beats` (quarter notes), key `key`.
    static func notes(_ beats: [Double], key: Int = 69, ppq: Int = 480) -> [(Int, MIDIMessage)] {
        beats.flatMap { b -> [(Int, MIDIMessage)] in
            let tick = Int(b * Double(ppq))
            return [(tick, .noteOn(channel: 0, note: key, velocity: 100)), (tick + ppq / 4, .noteOff(channel: 0, note: key))]
        }
    }

    func testNotesSoundOnTheFramesOfTheirBeatsOnFluidSynthsGrid() throws {
        // The synth's own attack: a note on beat 0 of a song with no count-in starts at frame 0.
        let attackDir = Self.folder(song: "\"tempo\": 130", midi: MIDIFileBytes.make(Self.notes([0])))
        let attack = try XCTUnwrap(Self.onsets(try Self.render(attackDir, frames: 4800, block: 64)).first)
        XCTAssertLessThan(attack, 480, "the saw lead speaks within 10 ms")
        // A bar of count-in, then notes off the frame grid; the file's own tempo (90) is not followed.
        let beats: [Double] = [0, 1, 2.5, 3.25, 5, 6.75]
        let dir = Self.folder(song: "\"tempo\": 130, \"countIn\": 1", midi: MIDIFileBytes.make(Self.notes(beats), bpm: 90))
        var first: [Int] = []
        for block in [64, 512, 97] {
            let found = Self.onsets(try Self.render(dir, frames: Self.frame(12), block: block))
            XCTAssertEqual(found.count, beats.count, "block \(block): every note, nothing in the count-in: \(found)")
            for (b, onset) in zip(beats, found) {
                // The song clock's line: beat −4 (the count-in's first) at frame 0.
                let expectedFrame = Self.frame(4 + b)
                let grid = (64 - expectedFrame % 64) % 64
                // On the first 64-frame step at or after its frame; a voice after the first
                // crosses −80 dBFS up to 3 frames sooner in its attack (measured: 3).
                let late = onset - expectedFrame - attack
                XCTAssertTrue((grid - 4...grid).contains(late), "block \(block), beat \(b): \(late) frames after its frame, its grid step \(grid)")
            }
            if first.isEmpty { first = found }
            XCTAssertEqual(found, first, "block \(block): the same frames as in blocks of 64")
        }
    }

    func testTheSameSongAt64And512FramesSoundsTheSame() throws {
        let beats: [Double] = (0..<14).map { Double($0) * 1.5 }
        let dir = Self.folder(
            song: #""tempo": 130, "countIn": 1, "sections": [ { "name": "A", "at": 1 }, { "name": "B", "at": 3 } ]"#,
            midi: MIDIFileBytes.make(Self.notes(beats, key: 64)))
        // A jump pressed in bar 1 of the song (after the count-in).
        let press = Double(Self.frame(5)) / Self.rate
        let live: [(Double, MIDIMessage)] = [(press, .noteOn(channel: 0, note: 100, velocity: 100)), (press + 0.05, .noteOff(channel: 0, note: 100))]
        let frames = Self.frame(20)
        let small = try Self.render(dir, frames: frames, block: 64, live: live)
        let large = try Self.render(dir, frames: frames, block: 512, live: live)
        let a = Self.onsets(small)
        let b = Self.onsets(large)
        XCTAssertGreaterThan(a.count, 8, "notes play")
        XCTAssertEqual(a, b, "the same onsets at 64 and 512 frames a block")
        // Level of each note's first 100 ms, in dB, compared.
        for (x, y) in zip(a, b) {
            let la = Measure.decibels(Measure.rms(small[x..<(x + 4800)]))
            let lb = Measure.decibels(Measure.rms(large[y..<(y + 4800)]))
            XCTAssertEqual(la, lb, accuracy: 0.1, "the note at frame \(x): \(la) dB against \(lb) dB")
        }
    }

    func testAJumpRelocatesTheFileToTheSectionsBarAndEndsItsHeldNotes() throws {
        // Bars 1–2: C4 held 8 beats; bars 3–4: G4 held 8 beats. Sections A (bar 1), B (bar 3).
        let ppq = 480
        let midi: [(Int, MIDIMessage)] = [
            (0, .noteOn(channel: 0, note: 60, velocity: 100)), (8 * ppq, .noteOff(channel: 0, note: 60)),
            (8 * ppq, .noteOn(channel: 0, note: 67, velocity: 100)), (16 * ppq, .noteOff(channel: 0, note: 67)),
        ]
        let dir = Self.folder(
            song: #""tempo": 130, "sections": [ { "name": "A", "at": 1 }, { "name": "B", "at": 3 } ]"#,
            midi: MIDIFileBytes.make(midi, ppq: ppq))
        // The button in bar 1: B (and the file's bar 3) from bar 2's line (beat 4).
        let press = 0.5
        let live: [(Double, MIDIMessage)] = [(press, .noteOn(channel: 0, note: 100, velocity: 100)), (press + 0.05, .noteOff(channel: 0, note: 100))]
        let jump = Self.frame(4)
        for block in [64, 512] {
            let jumped = try Self.render(dir, frames: Self.frame(8), block: block, live: live)
            let straight = try Self.render(dir, frames: Self.frame(8), block: block)
            // From 0.2 s after the bar line (the saw's 0.12 s release is over) for 0.5 s.
            let window = (jump + 9600)..<(jump + 33600)
            let c4 = 261.63
            let g4 = 392.0
            let jumpedC = Measure.magnitude(at: c4, in: jumped[window])
            let jumpedG = Measure.magnitude(at: g4, in: jumped[window])
            let straightC = Measure.magnitude(at: c4, in: straight[window])
            let straightG = Measure.magnitude(at: g4, in: straight[window])
            XCTAssertGreaterThan(jumpedG, 30 * jumpedC, "block \(block): after the jump G4 (bar 3) plays and C4 has ended")
            XCTAssertGreaterThan(straightC, 30 * straightG, "block \(block): without it C4 is still held in bar 2")
            // G4 starts on the jump's bar line: nothing of it before, all of it just after.
            let before = Measure.magnitude(at: g4, in: jumped[(jump - 9600)..<jump])
            XCTAssertLessThan(before, jumpedG / 100, "block \(block): G4 not before the bar line")
            let onsetOfG = try XCTUnwrap(
                (jump - 2000..<jump + 4800).first { i in Measure.magnitude(at: g4, in: jumped[i..<(i + 960)]) > jumpedG / 4 },
                "block \(block): G4 sounds")
            XCTAssertLessThan(abs(onsetOfG - jump), 960, "block \(block): G4 within 20 ms of the bar line")
        }
    }

    func testLeavingTheSongStopsTheFile() throws {
        // A note on every beat for 40 beats; the rack is left (as at a song switch) after ~2 s.
        let dir = Self.folder(song: "\"tempo\": 130", midi: MIDIFileBytes.make(Self.notes((0..<40).map(Double.init))))
        let engine = RenderEngine(plan: try Self.plan(dir, block: 512))
        func peak(blocks: Int) -> Float {
            var peak: Float = 0
            for _ in 0..<blocks {
                engine.render(frameCount: 512)
                peak = max(peak, Measure.peak(Array(UnsafeBufferPointer(start: engine.plan.hostOutput[0], count: 512))))
            }
            return peak
        }
        XCTAssertGreaterThan(peak(blocks: 190), 0.01, "the file plays")
        engine.releaseAllNotes()
        _ = peak(blocks: 50)  // the last note's release (0.12 s) and more
        XCTAssertLessThan(peak(blocks: 200), 1e-4, "no note of the file after the rack is left (2 s, four beats)")
        XCTAssertEqual(engine.songClock?.backing?.stopped, true)
    }

    func errors(_ body: () throws -> Void) -> [String] {
        do {
            try body()
            return []
        } catch {
            return (error as? RackError)?.diagnostics.map(\.description) ?? ["\(error)"]
        }
    }

    func testAMissingBrokenOrTimelessMIDIFileIsAnErrorAtItsPlaceWhenTheSetlistIsRead() throws {
        let good = MIDIFileBytes.make(Self.notes([0]))
        let dir = Self.folder(song: "\"tempo\": 120", midi: good)
        let cases: [(String, [UInt8]?, String)] = [
            ("gone.mid", nil, "\"gone.mid\": no such file"),
            ("broken.mid", Array("MThd garbage".utf8), "\"broken.mid\": byte"),
            ("smpte.mid", MIDIFileBytes.make(Self.notes([0]), division: 0xE728), "\"smpte.mid\": its time division counts SMPTE frames"),
            ("empty.mid", MIDIFileBytes.make([]), "\"empty.mid\": has no notes"),
        ]
        for (name, bytes, message) in cases {
            if let bytes { FileManager.default.createFile(atPath: dir + "/" + name, contents: Data(bytes)) }
            let setlist = """
                { "format": 2, "songs": [
                  { "rack": "r.json", "tempo": 120,
                    "midi": "\(name)" } ] }
                """
            FileManager.default.createFile(atPath: dir + "/set.json", contents: Data(setlist.utf8))
            let found = errors { _ = try RackFiles.readSetlist(dir + "/set.json") }
            XCTAssertEqual(found.count, 1, found.joined(separator: "\n"))
            XCTAssertTrue(found.first?.contains("set.json:3:13: songs[0].midi: \(message)") == true, "\(name): \(found)")
        }
    }

    func testTheFilesTempoIsTheSongsWhenItNamesNone() throws {
        let dir = Self.folder(song: "\"timeSignature\": \"6/8\"", midi: MIDIFileBytes.make(Self.notes([0]), bpm: 75))
        let plan = try Self.plan(dir, block: 128)
        XCTAssertEqual(plan.rack.songTempo ?? 0, 150, accuracy: 1e-9, "75 quarter notes a minute are 150 eighths")
    }

    func testTheBackingAllocatesNothingOnTheRenderThread() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds; `make test` runs release")
        #else
        let beats = (0..<400).map { Double($0) * 0.25 }
        let sections = (1...20).map { #"{ "name": "s\#($0)", "at": \#($0 * 2 - 1) }"# }.joined(separator: ", ")
        let dir = Self.folder(
            song: "\"tempo\": 240, \"countIn\": 1, \"transpose\": 1, \"sections\": [\(sections)]",
            midi: MIDIFileBytes.make(Self.notes(beats, key: 60) + Self.notes(beats.map { $0 + 0.125 }, key: 64)))
        let engine = RenderEngine(plan: try Self.plan(dir, block: 128))
        engine.warmUp()
        engine.render(frameCount: 128)
        alloc_counter_start()
        for k in 0..<6000 {
            if k % 300 == 0 { engine.inject(.section(k % 600 == 0 ? .next : .repeatCurrent, at: engine.sampleTime + 64)) }
            if k % 200 == 100 { engine.inject(.transpose(k % 400 == 100 ? 1 : -1, at: engine.sampleTime + 32)) }
            engine.render(frameCount: 128)
        }
        let count = alloc_counter_stop()
        XCTAssertEqual(count, 0, "the engine allocated \(count) times in 6000 blocks of a MIDI-file backing with jumps and transposes")
        XCTAssertEqual(engine.songClock?.backing?.eventsDeferred, 0, "every message had room in its block")
        XCTAssertNotNil(engine.songClock?.transposer, "the song's transpose is live")
        #endif
    }
}

/// Standard MIDI File bytes made in code: one track (type 0), `ppq` ticks a quarter note,
/// a Set Tempo at tick 0 if `bpm` is given. Thread: any.
enum MIDIFileBytes {
    static func make(_ events: [(Int, MIDIMessage)], ppq: Int = 480, bpm: Double? = nil, division: UInt16? = nil) -> [UInt8] {
        var track: [UInt8] = []
        if let bpm {
            let micros = Int(60_000_000 / bpm)
            track += [0, 0xFF, 0x51, 3, UInt8(micros >> 16 & 0xFF), UInt8(micros >> 8 & 0xFF), UInt8(micros & 0xFF)]
        }
        var last = 0
        for (tick, m) in events.sorted(by: { $0.0 < $1.0 }) {
            track += variableLength(tick - last)
            last = tick
            track += [m.status, m.data1]
            if m.kind != .programChange && m.kind != .channelPressure { track.append(m.data2) }
        }
        track += [0, 0xFF, 0x2F, 0]
        let d = division ?? UInt16(ppq)
        var bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, UInt8(d >> 8), UInt8(d & 0xFF)]
        bytes += Array("MTrk".utf8) + be32(track.count) + track
        return bytes
    }

    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func variableLength(_ value: Int) -> [UInt8] {
        var v = value
        var out: [UInt8] = [UInt8(v & 0x7F)]
        v >>= 7
        while v > 0 {
            out.insert(UInt8(v & 0x7F) | 0x80, at: 0)
            v >>= 7
        }
        return out
    }
}

/// The example setlist's song with a MIDI-file backing (racks/setlists/example-gig.json,
/// racks/tracks/pad-backing.mid from tools/midi-backing.py).
final class ExampleMIDIBackingTests: XCTestCase {
    func testTheExampleSongPlaysItsFileAfterTheCountIn() throws {
        let path = Fixtures.repository.appendingPathComponent("racks/setlists/example-gig.json").path
        let setlist = try RackFiles.readSetlist(path)
        let index = try XCTUnwrap(setlist.entries.firstIndex { $0.song.midi != nil }, "a song with \"midi\"")
        let rack = try RackFiles.readSong(setlist, index, registry: Fixtures.registry)
        XCTAssertEqual(rack.songTempo ?? 0, 96, accuracy: 1e-9, "the file's tempo: the song names none")
        // The one song with all of it: sections, a count-in, cues (ExampleSongClickTests),
        // lyrics and the MIDI file.
        XCTAssertEqual(rack.timeline.countInBars, 1)
        let lyrics = try XCTUnwrap(rack.lyrics, "the song's lyrics")
        XCTAssertEqual(lyrics.sectionNames, ["verse", "chorus"])
        XCTAssertEqual(lyrics.sectionBlocks, [0, 1], "each section shows its block")
        let plan = try GraphCompiler(registry: Fixtures.registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 256, realTime: false))
        let renderer = OfflineRenderer(plan: plan)
        var left: [Float] = []
        let downbeat = 4 * 30000  // a bar of 4/4 at 96 BPM: 30,000 frames a beat
        renderer.render(input: nil, midi: StandardMIDIFile(messages: [], duration: 0), frames: downbeat + 96000, blockSize: 256) { bus, n in
            left += UnsafeBufferPointer(start: bus[0], count: n)
        }
        XCTAssertEqual(Measure.peak(left[..<downbeat]), 0, "silent in the count-in")
        let chord = Measure.decibels(Measure.rms(left[(downbeat + 24000)..<(downbeat + 96000)]))
        XCTAssertGreaterThan(chord, -50, "the first chord sounds after the downbeat: \(chord) dBFS")
    }
}
