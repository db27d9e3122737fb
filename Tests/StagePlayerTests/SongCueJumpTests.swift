import Foundation
import StageControl
import StageCore
import StageDrivers
import StagePlayer
import XCTest
import CAllocCounter

/// The spoken cue of a section reached by a jump (at once when the jump is armed a beat or
/// more before its bar line, else on that bar line; a vamp speaks the repeated section), and
/// of sections placed by time (one bar before their time in the track): each cue's samples
/// from its exact frame, a later cue cutting the one sounding, at blocks of 64, 97 and 512.
final class SongCueJumpTests: XCTestCase {
    let clicks = SongCueRenders()
    static let rate = 48000.0
    static let framesPerBeat: Double = 60 * rate / 130
    /// The cues' own lengths, to tell them apart in the output (with their signs).
    static let lengths = ["A": 20000, "B": 20000, "C": 7000]
    static let signs: [String: Float] = ["A": 1, "B": -1, "C": 1]

    /// The first frame at or after `beats` beats from frame 0 (the count-in's first beat).
    static func frame(_ beats: Double) -> Int {
        let frames: Double = beats * framesPerBeat
        return Int(frames.rounded(.up))
    }

    /// The first frame at or after song beat `beat` on a line through `anchor` at `anchorBeat`.
    static func frame(beat: Double, anchor: Int, anchorBeat: Double) -> Int {
        let frames: Double = (beat - anchorBeat) * framesPerBeat
        return anchor + Int(frames.rounded(.up))
    }

    /// A click at −20 dB, notes 60 and 62 mapped to next-section and repeat-section, and
    /// (with `track`) the song's player, heard with the click through a mixer (a centred
    /// input passes at unity).
    static func rack(track: Bool) -> String {
        let player = track ? #""backing": { "type": "player", "file": "dc.wav", "startOnLoad": true }, "mix": { "type": "mixer" }, "# : ""
        let connections = track ? #""click -> mix:1", "backing -> mix:2", "mix -> out""# : #""click -> out""#
        return """
            { "format": 2, "units": { \(player)"click": { "type": "click", "params": { "level": -20 } }, "out": { "type": "output" } },
              "connections": [\(connections)],
              "midi": { "map": [ { "note": 60, "action": "next-section" }, { "note": 62, "action": "repeat-section" } ] } }
            """
    }

    /// Writes the cue files A.wav, B.wav, C.wav (constants of their sign: peak-normalised,
    /// the click's level then sets them) and the 9 s track dc.wav into `dir`.
    static func writeFiles(_ dir: String) {
        for (name, length) in lengths {
            let samples = [Float](repeating: 0.25 * signs[name]!, count: length)
            TrackFiles.write(dir + "/\(name).wav", channels: [samples], rate: 48000)
        }
        TrackFiles.write(dir + "/dc.wav", channels: [[Float](repeating: 0.3, count: 48000 * 9)], rate: 48000)
    }

    /// The song rendered with its cues minus the same song with `"cues": false`: the cues alone.
    func cuesAlone(_ song: String, track: Bool = false, frames: Int, block: Int, presses: [(Double, Int)] = []) throws -> [Float] {
        let rack = Self.rack(track: track)
        let with = clicks.folder(song: song, rack: rack)
        let without = clicks.folder(song: "\"cues\": false, " + song, rack: rack)
        Self.writeFiles(with)
        Self.writeFiles(without)
        let a = try render(with, frames: frames, block: block, presses: presses)
        let b = try render(without, frames: frames, block: block, presses: presses)
        return zip(a, b).map { $0 - $1 }
    }

    func render(_ dir: String, frames: Int, block: Int, presses: [(Double, Int)]) throws -> [Float] {
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: block)
        let renderer = OfflineRenderer(plan: plan)
        var messages: [StandardMIDIFile.TimedMessage] = []
        for (seconds, note) in presses {
            messages.append(StandardMIDIFile.TimedMessage(seconds: seconds, message: .noteOn(channel: 0, note: note, velocity: 100)))
            messages.append(StandardMIDIFile.TimedMessage(seconds: seconds + 0.01, message: .noteOff(channel: 0, note: note)))
        }
        var left: [Float] = []
        let midi = StandardMIDIFile(messages: messages, duration: messages.last?.seconds ?? 0)
        renderer.render(input: nil, midi: midi, frames: frames, blockSize: block) { bus, n in
            left += UnsafeBufferPointer(start: bus[0], count: n)
        }
        return left
    }

    /// What the click should speak: each cue from its frame at 0.1 (−20 dB) with its sign,
    /// to its end or to the next cue's start.
    static func expected(_ starts: [(frame: Int, cue: String)], frames: Int) -> [Float] {
        var x = [Float](repeating: 0, count: frames)
        for (k, start) in starts.enumerated() {
            let next = k + 1 < starts.count ? starts[k + 1].frame : frames
            let end = min(start.frame + lengths[start.cue]!, next, frames)
            for i in start.frame..<end { x[i] = 0.1 * signs[start.cue]! }
        }
        return x
    }

    /// The first frame where `x` and `want` differ by more than 0.001, if any.
    static func firstDifference(_ x: [Float], _ want: [Float]) -> Int? {
        zip(x, want).enumerated().first { abs($0.element.0 - $0.element.1) > 0.001 }?.offset
    }

    func check(_ song: String, track: Bool = false, presses: [(Double, Int)], starts: [(frame: Int, cue: String)], frames: Int, _ what: String) throws {
        let want = Self.expected(starts, frames: frames)
        for block in [64, 97, 512] {
            let x = try cuesAlone(song, track: track, frames: frames, block: block, presses: presses)
            let at = Self.firstDifference(x, want)
            XCTAssertNil(at, "block \(block), \(what): cues at \(starts.map { "\($0.cue)@\($0.frame)" }); first wrong frame \(at ?? -1): \(at.map { x[$0] } ?? 0)")
        }
    }

    /// A, B, C at bars 1, 5, 9 with a bar of count-in: their own cues one bar before them.
    static let barSong = #""countIn": 1, "sections": [ { "name": "A", "at": "1:1", "cue": "A.wav" }, { "name": "B", "at": "5:1", "cue": "B.wav" }, { "name": "C", "at": "9:1", "cue": "C.wav" } ]"#

    func testAJumpArmedABeatOrMoreBeforeItsBarLineSpeaksItsSectionAtOnce() throws {
        // Next at 2.5 s (song beat 1.42, in A's first bar): B's cue at once, B from bar 2
        // (frame of beat 8 counted from the count-in); a second press at 2.7 s does not
        // speak it again; C's cue a bar before C, 12 beats after B's jumped start.
        let landing = Self.frame(8)
        let c = Self.frame(beat: 12, anchor: landing, anchorBeat: 0)
        try check(
            Self.barSong, presses: [(2.5, 60), (2.7, 60)], starts: [(0, "A"), (120000, "B"), (c, "C")], frames: c + 9000,
            "next a beat or more before the bar line")
    }

    func testAJumpArmedUnderABeatBeforeItsBarLineSpeaksOnTheBarLine() throws {
        // Next at 3.45 s (song beat 3.475): 0.525 of a beat before bar 2's line; B's cue on it.
        let landing = Self.frame(8)
        try check(Self.barSong, presses: [(3.45, 60)], starts: [(0, "A"), (landing, "B")], frames: landing + 22000, "next under a beat before")
    }

    func testAVampSpeaksTheRepeatedSectionCuttingTheNextOnesCue() throws {
        // B's cue on song beat 12 (bar 4); a repeat at 7.6 s (song beat 12.47) speaks A's
        // cue at once, cutting B's; A again from beat 16's line; B's cue 12 beats after.
        let bCue = Self.frame(16)
        let landing = Self.frame(20)
        let bAgain = Self.frame(beat: 12, anchor: landing, anchorBeat: 0)
        try check(
            Self.barSong, presses: [(7.6, 62)], starts: [(0, "A"), (bCue, "B"), (364800, "A"), (bAgain, "B")], frames: bAgain + 22000,
            "a vamp in the bar before B")
    }

    func testAJumpToTheSectionWhoseCueWasJustSpokenDoesNotSpeakItAgain() throws {
        // Next at 7.6 s, after B's own cue at beat 12: B comes at beat 16 as it would have.
        try check(Self.barSong, presses: [(7.6, 60)], starts: [(0, "A"), (Self.frame(16), "B")], frames: Self.frame(20) + 22000, "next after B's cue")
    }

    /// Sections placed by time: the cue where the track reaches the time less a bar (4 beats
    /// at 130 BPM); with a count-in, a section less than a bar into the track speaks in the
    /// count-in, on the bar clock.
    func testSectionsPlacedByTimeSpeakOneBarBeforeTheirTime() throws {
        let bar: Double = 4 * Self.framesPerBeat
        let song = #""track": "dc.wav", "sections": [ { "name": "A", "time": 1.0, "cue": "A.wav" }, { "name": "B", "time": 3.0, "cue": "B.wav" }, { "name": "C", "time": 5.0, "cue": "C.wav" } ]"#
        // No count-in: the track from frame 0; A (less than a bar in) has no cue.
        let b: Double = 3 * Self.rate - bar
        let c: Double = 5 * Self.rate - bar
        try check(
            song, track: true, presses: [], starts: [(Int(b.rounded(.up)), "B"), (Int(c.rounded(.up)), "C")],
            frames: Int(c) + 9000, "placed by time")
        // A bar of count-in: the track from the downbeat (4 beats in); A's cue in the count-in.
        let downbeat = Self.frame(4)
        let aBeat: Double = (1 * Self.rate - bar) / Self.framesPerBeat
        let a = Self.frame(aBeat + 4)
        try check(
            "\"countIn\": 1, " + song, track: true, presses: [],
            starts: [(a, "A"), (downbeat + Int(b.rounded(.up)), "B"), (downbeat + Int(c.rounded(.up)), "C")],
            frames: downbeat + Int(c) + 9000, "placed by time, after a count-in")
    }

    /// A jump among sections placed by time speaks the section it leads to, as by bar.
    func testAJumpAmongSectionsPlacedByTimeSpeaksItsSection() throws {
        let song = #""track": "dc.wav", "sections": [ { "name": "A", "time": 0.5, "cue": false }, { "name": "B", "time": 6.0, "cue": "B.wav" } ]"#
        // Next at 1.0 s (beat 2.17 of the bar clock): B's cue at once; B's own cue (at
        // 6 s less a bar) is not spoken again once B plays.
        try check(song, track: true, presses: [(1.0, 60)], starts: [(48000, "B")], frames: 48000 * 6, "a jump by time")
    }

    func testJumpAndTimeCuesAllocateNothingOnTheRenderThread() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds; `make test` runs release")
        #else
        let sections = (1...40).map { #"{ "name": "s\#($0)", "time": \#(Double($0) * 0.2), "cue": "A.wav" }"# }
        let dir = clicks.folder(song: "\"track\": \"dc.wav\", \"sections\": [\(sections.joined(separator: ", "))]", rack: Self.rack(track: true))
        Self.writeFiles(dir)
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: 128)
        let engine = RenderEngine(plan: plan)
        engine.warmUp()
        engine.render(frameCount: 128)
        alloc_counter_start()
        for k in 0..<3000 {
            if k % 100 == 0 { engine.inject(.section(k % 200 == 0 ? .next : .repeatCurrent, at: engine.sampleTime + 64)) }
            engine.render(frameCount: 128)
        }
        let count = alloc_counter_stop()
        XCTAssertEqual(count, 0, "the engine allocated \(count) times in 3000 blocks of cues by time and jumps")
        #endif
    }
}
