import Foundation
import StageCore
import StageControl
import StageDrivers
import StagePlayer
import StageSynth
import StageTestSupport
import StageUnits
import XCTest

/// The example setlist's song with sections ("Karaoke in sections", racks/ktv.json) has its
/// count-in, click and spoken cues in the singer's ears (the rack's output "ears", channels
/// 3-4) and none of them on the PA (channels 1-2): measured in offline renders of the song
/// as the program compiles it (the click speaking the shipped cues, racks/cues/).
final class ExampleSongClickTests: XCTestCase {
    /// The program's unit types (Sources/stagerack/Registry.swift, less LV2): the click
    /// decodes its cues with the player's reader.
    static let registry = UnitRegistry(
        StandardUnits.types.filter { $0.name != "click" } + SynthUnits.types + PlayerUnits.types
            + [ClickUnitType(decodeCue: { try CueDecoding.decode(path: $0, sampleRate: $1) })])
    static let rate = 48000.0
    /// 120 BPM: 24,000 frames a beat; a bar of count-in, so bar 1 beat 1 is frame 96,000.
    static let framesPerBeat = 24000
    static let barOne = 4 * framesPerBeat

    /// The frame of song beat `beat` (0: bar 1 beat 1; −4…−1 the count-in).
    static func frame(beat: Int) -> Int { barOne + beat * framesPerBeat }

    struct Render {
        var pa: [Float] = []
        var ears: [Float] = []
        var earsRight: [Float] = []
    }

    /// The example setlist's song `name` rendered for `frames` (default: `bars` bars at 120
    /// BPM after the count-in) at `tempo` BPM.
    func render(block: Int, bars: Int, song name: String = "Karaoke in sections", tempo: Double = 120, frames: Int? = nil) throws -> Render {
        let path = Fixtures.repository.appendingPathComponent("racks/setlists/example-gig.json").path
        let setlist = try RackFiles.readSetlist(path)
        let index = try XCTUnwrap(setlist.entries.firstIndex { $0.name == name }, "the example song \(name)")
        let rack = try RackFiles.readSong(setlist, index, registry: Self.registry)
        XCTAssertEqual(rack.songTempo ?? 0, tempo, accuracy: 1e-9, "the song's tempo")
        let plan = try GraphCompiler(registry: Self.registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: Self.rate, maxFrames: block, realTime: false))
        XCTAssertEqual(plan.outputChannelCount, 4, "the PA on channels 1-2, the ears on 3-4")
        var out = Render()
        let frames = frames ?? Self.frame(beat: 4 * bars)
        OfflineRenderer(plan: plan).render(input: nil, midi: StandardMIDIFile(messages: [], duration: 0), frames: frames, blockSize: block) {
            bus, n in
            out.pa += UnsafeBufferPointer(start: bus[0], count: n)
            out.ears += UnsafeBufferPointer(start: bus[2], count: n)
            out.earsRight += UnsafeBufferPointer(start: bus[3], count: n)
        }
        return out
    }

    func testTheClickCountsInAndClicksOnInTheEarsOnTheBeatFrames() throws {
        for block in [97, 512] {
            let r = try render(block: block, bars: 8)
            // What the ears have more than the PA (the ears' mixer takes the PA's mix at 0 dB):
            // the click and the cues alone.
            let extra: [Float] = zip(r.ears, r.pa).map { $0 - $1 }
            let downbeat = abs(extra[0])
            XCTAssertEqual(Double(Measure.decibels(downbeat)), -12, accuracy: 3.5, "block \(block): the count-in's downbeat at the click's level")
            for beat in -4..<32 {
                let f = Self.frame(beat: beat)
                let isDownbeat = (beat + 4) % 4 == 0
                let want: Float = isDownbeat ? downbeat : downbeat / 2
                // A cue starts with the downbeats of bars 0, 2, 4 and 6: its first sample adds
                // to the click's (the chorus cue's is −14 % of its peak).
                let cueToo = isDownbeat && ((beat + 4) / 4) % 2 == 0
                let accuracy: Float = cueToo ? 0.2 : 0.05
                let before = Measure.peak(extra[max(f - 50, 0)..<f])
                XCTAssertEqual(abs(extra[f]) / want, 1, accuracy: accuracy, "block \(block), beat \(beat): its click starts on its frame")
                XCTAssertLessThan(before, 1e-4, "block \(block), beat \(beat): nothing before it")
                XCTAssertEqual(abs(r.earsRight[f] - r.pa[f]) / want, 1, accuracy: accuracy, "block \(block), beat \(beat): in both ears")
            }
            // The PA never has them: silent in the count-in (no voice, the track waits for bar 1)
            // and after the track (8 s: bars 1-4) while the ears click on.
            XCTAssertEqual(Measure.peak(r.pa[..<Self.barOne]), 0, "block \(block): the PA is silent in the count-in")
            XCTAssertGreaterThan(Measure.peak(r.ears[..<Self.barOne]), downbeat * 0.9, "block \(block): the ears count in")
            let afterTrack = Self.frame(beat: 17)  // the track's last frame is beat 16 (10 s), plus a beat
            XCTAssertLessThan(Measure.peak(r.pa[afterTrack...]), 1e-6, "block \(block): the PA is silent after the track")
            XCTAssertGreaterThan(Measure.peak(r.ears[afterTrack...]), downbeat * 0.9, "block \(block): the ears click on")
            // The track plays on the PA from bar 1 (its first chord).
            let chord = Measure.rms(r.pa[Self.barOne..<(Self.barOne + 48000)])
            XCTAssertGreaterThan(Measure.decibels(chord), -50, "block \(block): the track on the PA from bar 1")
        }
    }

    /// A cue ("intro", "verse", "chorus", "outro") is spoken a bar before each section (bars
    /// 1, 3, 5, 7): on the downbeats of the count-in and of bars 2, 4 and 6, 50-400 ms after
    /// their click has died away (40 ms); nothing is spoken after the other downbeats.
    func testTheCuesAreSpokenInTheEarsABarBeforeEachSection() throws {
        let r = try render(block: 256, bars: 8)
        let extra: [Float] = zip(r.ears, r.pa).map { $0 - $1 }
        for bar in 0..<8 {
            let f = Self.frame(beat: 4 * (bar - 1))
            let window = extra[(f + 2400)..<(f + 19200)]
            let level = Measure.decibels(Measure.rms(window))
            if bar % 2 == 0 {
                XCTAssertGreaterThan(level, -40, "a cue after the downbeat of bar \(bar) (0: the count-in): \(level) dBFS")
                XCTAssertLessThan(Measure.peak(window), abs(extra[0]) * 1.1, "at the click's level")
            } else {
                XCTAssertLessThan(Measure.peak(window), 1e-5, "no cue after the downbeat of bar \(bar): \(level) dBFS")
            }
        }
    }

    /// The pad song with a MIDI-file backing (racks/synth-pad.json, its own 96 BPM: 30,000
    /// frames a beat) clicks in its count-in only (the click's `"mode": "count-in"`) and
    /// speaks its cues ("verse" in the count-in, "chorus" a bar before bar 5) in the ears;
    /// the PA has neither.
    func testThePadSongCountsInAndSpeaksItsCuesInTheEars() throws {
        let beat = 30000
        let barOne = 4 * beat
        let r = try render(block: 256, bars: 0, song: "Pad song with a MIDI backing", tempo: 96, frames: barOne + 5 * 4 * beat)
        let extra: [Float] = zip(r.ears, r.pa).map { $0 - $1 }
        XCTAssertEqual(Measure.peak(r.pa[..<barOne]), 0, "the PA is silent in the count-in")
        let downbeat = abs(extra[0])
        XCTAssertEqual(Double(Measure.decibels(downbeat)), -12, accuracy: 3.5, "the count-in's downbeat (with the verse cue's first sample)")
        for k in 1..<4 {
            XCTAssertEqual(Double(Measure.decibels(abs(extra[k * beat]))), -18, accuracy: 0.5, "count-in beat \(k + 1) on frame \(k * beat)")
            XCTAssertLessThan(Measure.peak(extra[(k * beat - 50)..<(k * beat)]), 1e-4)
        }
        for bar in 0..<6 {
            let f = barOne + (bar - 1) * 4 * beat
            let window = extra[(f + 2400)..<(f + 19200)]
            if bar == 0 || bar == 4 {
                XCTAssertGreaterThan(Measure.decibels(Measure.rms(window)), -40, "a cue after the downbeat of bar \(bar)")
            } else {
                XCTAssertLessThan(Measure.peak(window), 1e-5, "no cue after the downbeat of bar \(bar)")
            }
        }
        // No click after the count-in: nothing on the beats of bars 1-3.
        for b in 0..<12 {
            let f = barOne + b * beat
            XCTAssertLessThan(Measure.peak(extra[f..<(f + 1920)]), 1e-5, "no click on song beat \(b)")
        }
    }

    /// `stagerack render SETLIST --song 18` starts the set at that song and writes its
    /// outputs: the PA (`OUT.wav`), silent in the count-in, and the ears (`OUT-ears.wav`),
    /// whose count-in clicks are on their beats' frames. A song the setlist has not is a
    /// usage error.
    func testRenderOfTheSongWritesItsEarsWithTheCountIn() throws {
        let setlist = Fixtures.repository.appendingPathComponent("racks/setlists/example-gig.json").path
        let output = Fixtures.temporaryPath("song18-\(UUID().uuidString).wav")
        let (status, log) = try stagerack(["render", setlist, "--song", "18", "--duration", "2.5", "--output", output])
        XCTAssertEqual(status, 0, log)
        let pa = try AudioData.read(path: output).channels[0]
        let ears = try AudioData.read(path: String(output.dropLast(4)) + "-ears.wav").channels[0]
        XCTAssertEqual(Measure.peak(pa[..<Self.barOne]), 0, "the PA is silent in the count-in")
        let downbeat = abs(ears[0])
        XCTAssertEqual(Double(Measure.decibels(downbeat)), -12, accuracy: 3.5, "the count-in's downbeat on frame 0")
        for beat in 1..<4 {
            let f = Self.frame(beat: beat - 4)
            XCTAssertEqual(abs(ears[f]) / (downbeat / 2), 1, accuracy: 0.05, "count-in beat \(beat + 1) on frame \(f)")
            XCTAssertLessThan(Measure.peak(ears[(f - 50)..<f]), 1e-4, "nothing just before count-in beat \(beat + 1)")
        }
        let (bad, message) = try stagerack(["render", setlist, "--song", "20", "--duration", "1", "--output", output])
        XCTAssertEqual(bad, 2, message)
        XCTAssertTrue(message.contains("--song 20: \(setlist) has 19 songs"), message)
    }

    /// Runs `stagerack` (beside the test bundle) with `arguments`: its exit status and stderr.
    func stagerack(_ arguments: [String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("stagerack")
        p.arguments = arguments
        let errors = Pipe()
        p.standardError = errors
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, log)
    }
}
