import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// The preset racks in racks/: each rendered with `stagerack render --demo` (the built-in
/// sung phrase and chord progression) and measured against what its comment promises.
///
/// The demo voice sings MIDI notes 64 67 69 67 64 62 60 (0–6 s; the last, note 60 at
/// 261.6 Hz, from 4 to 6 s) and is silent after 6 s. An "s" opens notes 2 and 6, a "t"
/// note 3, a "k" note 5 (each under 100 ms, the vowel after it), and a breath ends 20 ms
/// before the last (DemoVoiceTests). The demo chords are C, Am, F, G (2 s each, the F chord
/// 41 57 60 65 from 4 to 5.9 s).
final class PresetLibraryTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    let rate = 48000.0

    /// `stagerack` next to the test bundle (`swift build --build-tests` builds it there).
    var stagerack: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("stagerack").path
    }

    lazy var folder: String = {
        let dir = NSTemporaryDirectory() + "stagerack-presets-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }()

    /// Renders `rack` (a racks/ file name, or rack text when `text` is set) with --demo.
    func demo(_ rack: String, text: String? = nil) throws -> (audio: AudioData, log: String) {
        var path = Self.repository + "/racks/" + rack
        if let text {
            path = folder + "/" + rack
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        let output = folder + "/" + rack + ".wav"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: stagerack)
        p.arguments = ["render", path, "--demo", "--output", output]
        p.currentDirectoryURL = URL(fileURLWithPath: Self.repository)
        let errors = Pipe()
        p.standardError = errors
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "\(rack): \(log)")
        return (try AudioData.read(path: output), log)
    }

    /// A racks/ file with `replace` applied to its text (the same rack with one knob moved).
    func variant(_ rack: String, _ replacements: [(String, String)]) throws -> AudioData {
        var text = try String(contentsOfFile: Self.repository + "/racks/" + rack, encoding: .utf8)
        for (a, b) in replacements {
            XCTAssertTrue(text.contains(a), "\(rack) has no \(a)")
            text = text.replacingOccurrences(of: a, with: b)
        }
        return try demo("variant-" + rack, text: text).audio
    }

    /// The demo voice through a plain mixer: the reference.
    func dry() throws -> AudioData {
        try demo(
            "dry.json",
            text: #"{ "format": 1, "units": { "mic": { "type": "input" }, "mix": { "type": "mixer", "inputs": 1 }, "out": { "type": "output" } }, "connections": [ "mic -> mix -> out" ] }"#
        ).audio
    }

    func window(_ x: [Float], _ from: Double, _ to: Double) -> ArraySlice<Float> {
        let a = min(Int(from * rate), x.count), b = min(Int(to * rate), x.count)
        return x[a..<b]
    }

    func level(_ x: [Float], _ from: Double, _ to: Double) -> Double { Double(Measure.decibels(Measure.rms(window(x, from, to)))) }

    func component(_ x: [Float], _ f: Double, _ from: Double, _ to: Double) -> Double {
        20 * log10(max(Measure.magnitude(at: f, in: window(x, from, to), sampleRate: rate), 1e-12))
    }

    /// The notes of the demo phrase (start, end in seconds), 60 ms trimmed at each edge.
    let notes: [(Double, Double)] = [(0, 0.5), (0.5, 1), (1, 2), (2, 2.5), (2.5, 3), (3, 4), (4, 6)].map { ($0.0 + 0.06, $0.1 - 0.06) }

    /// Loudest minus quietest note (dB): how uneven the phrase is.
    func spread(_ x: [Float]) -> Double {
        let levels = notes.map { level(x, $0.0, $0.1) }
        return levels.max()! - levels.min()!
    }

    // MARK: The library

    func testTheLibraryShipsTenRacksAndAnExampleSetlist() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.repository + "/racks").filter { $0.hasSuffix(".json") }
        XCTAssertGreaterThanOrEqual(files.filter { $0 != "default.json" }.count, 10)
        let setlist = try String(contentsOfFile: Self.repository + "/racks/setlists/example-gig.json", encoding: .utf8)
        for f in files {
            let text = try String(contentsOfFile: Self.repository + "/racks/" + f, encoding: .utf8)
            XCTAssertTrue(text.hasPrefix("//"), "\(f) starts with a comment saying what it is for")
            XCTAssertTrue(text.contains("Knobs:"), "\(f) says which knobs do what")
            XCTAssertTrue(setlist.contains("\"../\(f)\""), "the example setlist uses \(f)")
        }
    }

    func testCleanVocalEvensTheLevelAndKeepsIt() throws {
        let reference = try dry().channels[0]
        let out = try demo("vocal-clean.json").audio.channels[0]
        XCTAssertEqual(level(out, 0, 6), level(reference, 0, 6), accuracy: 3, "about the voice's own level")
        XCTAssertLessThan(spread(out), 0.75 * spread(reference), "the notes come out more even (compression)")
        XCTAssertLessThan(level(out, 6.3, 8.5), -90, "no effect tails")
    }

    func testSpokenWordEvensTheLevelFirmly() throws {
        let reference = try dry().channels[0]
        let out = try demo("spoken-word.json").audio.channels[0]
        XCTAssertLessThan(spread(out), 0.6 * spread(reference))
        XCTAssertEqual(level(out, 0, 6), level(reference, 0, 6), accuracy: 3)
    }

    func testBalladHallRingsOnWithoutMakingTheVoiceQuieter() throws {
        let out = try demo("ballad-hall.json").audio.channels[0]
        let noHall = try variant("ballad-hall.json", [("\"gain2\": -8", "\"gain2\": -96")]).channels[0]
        let louderHall = try variant("ballad-hall.json", [("\"gain2\": -8", "\"gain2\": 0")]).channels[0]
        // A send: the hall adds to the voice; turning it up never turns the voice down.
        XCTAssertGreaterThanOrEqual(level(out, 4.1, 5.9), level(noHall, 4.1, 5.9) - 0.2)
        XCTAssertGreaterThanOrEqual(level(louderHall, 4.1, 5.9), level(out, 4.1, 5.9) - 0.2)
        // The hall rings after the voice stops: 1 s later still within 35 dB of the voice
        // (the return sits 8 dB down; a dry rack is silent there).
        XCTAssertGreaterThan(level(out, 7.0, 7.3), level(out, 4.1, 5.9) - 35)
        XCTAssertLessThan(level(noHall, 7.0, 7.3), -90)
    }

    func testRockSlapbackIsOneEchoAt110Milliseconds() throws {
        let out = try demo("rock-slapback.json").audio.channels[0]
        let noSlap = try variant("rock-slapback.json", [("\"gain2\": -6", "\"gain2\": -96")]).channels[0]
        let echo = zip(out, noSlap).map { $0 - $1 }
        let onset = echo.firstIndex { abs($0) > 1e-4 } ?? echo.count
        XCTAssertEqual(Double(onset) / rate, 0.11, accuracy: 0.01, "the echo starts 110 ms after the voice")
        // About 6 dB under the voice, and a single repeat (8 % feedback: the second is 22 dB lower).
        XCTAssertEqual(level(echo, 0.2, 5.9) - level(noSlap, 0.2, 5.9), -6, accuracy: 3)
    }

    func testUncleAndChipmunkVoicesAreAnOctaveDownAndUp() throws {
        for (rack, expected) in [("uncle-voice.json", 130.81), ("chipmunk-voice.json", 523.25)] {
            let out = try demo(rack).audio.channels[0]
            let f = PitchMeasure.fundamental(window(out, 4.4, 5.8), sampleRate: rate, low: 80, high: 1000)
            XCTAssertEqual(f / expected, 1, accuracy: 0.02, "\(rack): sung 261.6 Hz, heard \(formatNumber(f)) Hz")
        }
    }

    func testMonitorAddsNoLatency() throws {
        let reference = try dry().channels[0]
        let (audio, log) = try demo("monitor.json")
        XCTAssertFalse(log.contains("latency"), "the render reports no latency: \(log)")
        let out = audio.channels[0]
        let a = reference.firstIndex { abs($0) > 1e-3 }!, b = out.firstIndex { abs($0) > 1e-3 }!
        XCTAssertLessThanOrEqual(abs(a - b), 2, "onset at \(b), the voice's at \(a)")
    }

    func testSynthPadSitsUnderTheVoice() throws {
        let out = try demo("synth-pad.json").audio.channels[0]
        let alone = level(out, 6.3, 7.8)
        XCTAssertGreaterThan(alone, -45, "the pad sounds after the voice stops")
        XCTAssertGreaterThan(level(out, 4.2, 5.8), alone + 4, "the voice is on top")
    }

    func testKeyboardSplitPutsBassLeftAndStringsRight() throws {
        let audio = try demo("keyboard-split.json").audio
        let l = audio.channels[0], r = audio.channels[1]
        // F2 (87.3 Hz, under C4): the bass, left. F4 (349.2 Hz): the strings, right.
        XCTAssertGreaterThan(component(l, 87.31, 4.1, 5.8), component(r, 87.31, 4.1, 5.8) + 20)
        XCTAssertGreaterThan(component(r, 349.23, 4.1, 5.8), component(l, 349.23, 4.1, 5.8) + 6)
    }

    func testTelephoneKeepsOnlyTheMiddle() throws {
        let reference = try dry().channels[0]
        let out = try demo("telephone.json").audio.channels[0]
        func gain(_ f: Double) -> Double { component(out, f, 4.2, 5.8) - component(reference, f, 4.2, 5.8) }
        let middle = gain(1569.8)  // 6th harmonic of 261.6 Hz
        XCTAssertLessThan(gain(261.63), middle - 15, "lows cut")
        XCTAssertLessThan(gain(4709.4), middle - 15, "highs cut")
    }

    func testDefaultRackIsAVocalStripWithSends() throws {
        let out = try demo("default.json").audio.channels[0]
        let moreReverb = try variant("default.json", [("\"gain5\": -12", "\"gain5\": 0")]).channels[0]
        let noSends = try variant("default.json", [("\"gain4\": -16, \"gain5\": -12", "\"gain4\": -96, \"gain5\": -96")]).channels[0]
        XCTAssertGreaterThanOrEqual(level(moreReverb, 4.1, 5.9), level(out, 4.1, 5.9) - 0.2, "more reverb never makes the voice quieter")
        XCTAssertGreaterThanOrEqual(level(out, 4.1, 5.9), level(noSends, 4.1, 5.9) - 0.2)
        XCTAssertLessThan(spread(out), spread(try dry().channels[0]), "the strip compresses")
        // The sends alone (the synth plays alike in both and cancels): they ring on after the voice.
        let sends = zip(out, noSends).map { $0 - $1 }
        XCTAssertGreaterThan(level(sends, 6.2, 7.0), level(out, 4.1, 5.9) - 35, "echo and reverb ring on")
    }
}

extension PresetLibraryTests {
    /// A Standard MIDI File (format 0, 480 ticks per quarter at 120 BPM) with one program
    /// change (1-based `program`, channel 1) at `seconds`, ending at `end` seconds.
    func programChangeFile(program: Int, at seconds: Double, end: Double) -> [UInt8] {
        func vlq(_ v: Int) -> [UInt8] {
            var bytes = [UInt8(v & 0x7f)]
            var rest = v >> 7
            while rest > 0 {
                bytes.insert(UInt8(0x80 | (rest & 0x7f)), at: 0)
                rest >>= 7
            }
            return bytes
        }
        let at = Int(seconds * 960), stop = Int(end * 960)
        let track = vlq(at) + [0xC0, UInt8(program - 1)] + vlq(stop - at) + [0xFF, 0x2F, 0x00]
        let n = track.count
        return [0x4D, 0x54, 0x68, 0x64, 0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
            + [0x4D, 0x54, 0x72, 0x6B, UInt8(n >> 24), UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff), UInt8(n & 0xff)] + track
    }

    /// The example setlist, rendered with the demo voice as input and a program change to
    /// song 8 ("Duet with uncle") at 3 s: the voice is at its own pitch before and an octave
    /// down after.
    func testExampleSetlistSwitchesSongsOnProgramChanges() throws {
        let voicePath = folder + "/dry.json.wav"
        _ = try dry()
        let midiPath = folder + "/switch.mid"
        FileManager.default.createFile(atPath: midiPath, contents: Data(programChangeFile(program: 8, at: 3, end: 6)))
        let output = folder + "/gig.wav"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: stagerack)
        p.arguments = [
            "render", Self.repository + "/racks/setlists/example-gig.json", "--input", voicePath, "--midi", midiPath,
            "--output", output, "--duration", "6.5",
        ]
        let errors = Pipe()
        p.standardError = errors
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, log)
        let out = try AudioData.read(path: output).channels[0]
        let before = PitchMeasure.fundamental(window(out, 1.1, 1.9), sampleRate: rate, low: 80, high: 1000)
        let after = PitchMeasure.fundamental(window(out, 4.4, 5.8), sampleRate: rate, low: 80, high: 1000)
        XCTAssertEqual(before / 440, 1, accuracy: 0.02, "song 1 (spoken word) sings 440 Hz: \(formatNumber(before)) Hz")
        XCTAssertEqual(after / 130.81, 1, accuracy: 0.02, "song 8 (uncle voice) an octave down: \(formatNumber(after)) Hz; \(log)")
    }
}
