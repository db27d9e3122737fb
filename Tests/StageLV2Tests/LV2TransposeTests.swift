import Foundation
import StageControl
import StageCore
import StageDrivers
import StageLV2
import StageTestSupport
import XCTest
import CAllocCounter

/// An LV2 instrument's notes move with the unit's `transpose`, the song's `transpose` and
/// `transpose-up` live, as the synth's: measured on Debian's mda ePiano (mda-lv2), each
/// moved note's fundamental against the unmoved note N semitones up; a note held while the
/// transpose changes ends on its own key.
final class LV2TransposeTests: XCTestCase {
    static let ePiano = "http://drobilla.net/plugins/mda/EPiano"

    override func setUpWithError() throws {
        try LV2Testing.require(Self.ePiano, package: "mda-lv2")
    }

    /// The ePiano (no random detune) to the output, `extra` settings, `map` MIDI actions.
    static func rack(_ extra: String = "", map: String = "") -> String {
        """
        { "format": 2, "units": { "keys": { "type": "lv2", "plugin": "\(ePiano)", "params": { "random_tuning": 0 }\(extra) },
          "out": { "type": "output" } }, "connections": ["keys -> out"]\(map) }
        """
    }

    /// Renders `messages` (seconds, message) through `plan` for `seconds`; the left channel.
    static func render(_ plan: RenderPlan, _ messages: [(Double, MIDIMessage)], seconds: Double) -> [Float] {
        let renderer = OfflineRenderer(plan: plan)
        let midi = StandardMIDIFile(
            messages: messages.map { StandardMIDIFile.TimedMessage(seconds: $0.0, message: $0.1) }, duration: messages.last?.0 ?? 0)
        var left: [Float] = []
        renderer.render(input: nil, midi: midi, frames: Int(seconds * 48000), blockSize: 128) { bus, n in
            left += UnsafeBufferPointer(start: bus[0], count: n)
        }
        return left
    }

    static func plan(_ rack: String) throws -> RenderPlan { try LV2Testing.plan(rack, maxFrames: 128, inputChannels: 0) }

    /// Key `key` on `channel` held 0…0.5 s; its fundamental over 0.05…0.45 s.
    static func pitch(_ rack: String, key: Int, channel: Int = 0) throws -> Double {
        let x = render(
            try plan(rack), [(0, .noteOn(channel: channel, note: key, velocity: 100)), (0.5, .noteOff(channel: channel, note: key))],
            seconds: 0.5)
        return fundamental(x, from: 0.05, to: 0.45)
    }

    static func fundamental(_ x: [Float], from: Double, to: Double) -> Double {
        XCTAssertGreaterThan(Measure.rms(x[Int(from * 48000)..<Int(to * 48000)]), 1e-3, "the note sounds")
        return PitchMeasure.fundamental(x[Int(from * 48000)..<Int(to * 48000)], sampleRate: 48000, low: 80, high: 1000)
    }

    func testTheTransposeSettingMovesTheNotesBySemitones() throws {
        let a3 = try Self.pitch(Self.rack(), key: 57)
        for n in [-5, 2, 7] {
            let moved = try Self.pitch(Self.rack(", \"transpose\": \(n)"), key: 57)
            let played = try Self.pitch(Self.rack(), key: 57 + n)
            XCTAssertEqual(Measure.cents(moved, from: played), 0, accuracy: 1, "transpose \(n): A3 sounds as key \(57 + n) (\(moved) Hz, \(played) Hz)")
            let ratio: Double = exp2(Double(n) / 12)
            print("LV2TransposeTests: transpose \(n): \(moved) Hz, key \(57 + n) \(played) Hz, A3 \(a3) Hz × 2^(\(n)/12) = \(a3 * ratio) Hz")
            XCTAssertEqual(Measure.cents(moved, from: a3 * ratio), 0, accuracy: 5, "transpose \(n): \(n) semitones from A3's \(a3) Hz")
        }
        // Channel 10 (General MIDI's drums) stays put unless the unit listens to it alone.
        let drums = try Self.pitch(Self.rack(", \"transpose\": 7"), key: 57, channel: 9)
        XCTAssertEqual(Measure.cents(drums, from: a3), 0, accuracy: 1, "channel 10 kept")
        let alone = try Self.pitch(Self.rack(", \"transpose\": 7, \"channel\": 10"), key: 57, channel: 9)
        XCTAssertEqual(Measure.cents(alone, from: a3 * exp2(7.0 / 12)), 0, accuracy: 5, "channel 10 moved when it is the unit's only one")
        XCTAssertTrue(LV2Testing.errors(Self.rack(", \"transpose\": 49")).contains { $0.contains("units.keys.transpose") }, "beyond −48…48")
    }

    /// A3 struck, the transpose moved to +5 while it is held, then its note-off: the note
    /// ends as one never moved does (the off reached A3, not D4), and the next A3 sounds D4.
    func testANoteHeldWhileTheTransposeChangesEndsOnItsOwnKey() throws {
        func tail(change: Bool, off: Bool) throws -> (level: Float, next: Double) {
            let plan = try Self.plan(Self.rack())
            let u = try XCTUnwrap(plan.unitIndex("keys"))
            let unit = try XCTUnwrap(plan.units[u] as? LV2Unit)
            let engine = RenderEngine(plan: plan)
            var x: [Float] = []
            func run(_ seconds: Double) {
                for _ in 0..<Int(seconds * 48000 / 128) {
                    engine.render(frameCount: 128)
                    x += UnsafeBufferPointer(start: plan.hostOutput[0], count: 128)
                }
            }
            engine.inject(.midi(.noteOn(channel: 0, note: 57, velocity: 100), toUnit: u, at: 0))
            run(0.3)
            if change { unit.transpose = 5 }
            if off { engine.inject(.midi(.noteOff(channel: 0, note: 57), toUnit: u, at: engine.sampleTime)) }
            run(0.7)
            engine.inject(.midi(.noteOn(channel: 0, note: 57, velocity: 100), toUnit: u, at: engine.sampleTime))
            run(0.5)
            let level = Measure.rms(x[Int(0.31 * 48000)..<Int(0.45 * 48000)])  // the release, from 10 ms after the off
            return (level, Self.fundamental(x, from: 1.05, to: 1.45))
        }
        let held = try tail(change: true, off: false)
        let ended = try tail(change: false, off: true)
        let moved = try tail(change: true, off: true)
        print("LV2TransposeTests: levels in the 0.14 s after the off: held \(held.level), ended \(ended.level), moved while held \(moved.level)")
        XCTAssertLessThan(ended.level, held.level * 0.5, "the ePiano's release is shorter than its decay (\(ended.level) against \(held.level))")
        XCTAssertEqual(moved.level / ended.level, 1, accuracy: 0.1, "the off reached the held A3 (\(moved.level) against \(ended.level))")
        XCTAssertEqual(Measure.cents(moved.next, from: ended.next * exp2(5.0 / 12)), 0, accuracy: 5, "the next A3 sounds 5 semitones up")
    }

    /// The song's `transpose` (+2) adds to the unit's setting when the song loads, and
    /// `transpose-up` (a CC, `"transposeAt": "now"`) moves the next notes a semitone more.
    func testTheSongsTransposeAndTransposeUpMoveTheNotes() throws {
        let dir = LV2Testing.temporaryDirectory("transpose-\(UUID().uuidString)")
        let rack = Self.rack(map: #", "midi": { "map": [ { "cc": 20, "action": "transpose-up" } ] }"#)
        FileManager.default.createFile(atPath: dir + "/r.json", contents: Data(rack.utf8))
        let setlist = #"{ "format": 2, "songs": [ { "rack": "r.json", "transpose": 2, "transposeAt": "now" } ] }"#
        FileManager.default.createFile(atPath: dir + "/set.json", contents: Data(setlist.utf8))
        let song = try RackFiles.readSong(try RackFiles.readSetlist(dir + "/set.json"), 0, registry: LV2Testing.registry)
        XCTAssertEqual(song.unit("keys")?.settings.node("transpose")?.number, 2, "the song's +2 in the unit's setting")
        let plan = try GraphCompiler(registry: LV2Testing.registry).compile(
            song, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 128, realTime: false))
        let x = Self.render(
            plan,
            [
                (0, .noteOn(channel: 0, note: 57, velocity: 100)), (0.5, .noteOff(channel: 0, note: 57)),
                (0.55, .controlChange(channel: 0, controller: 20, value: 127)), (0.56, .controlChange(channel: 0, controller: 20, value: 0)),
                (0.6, .noteOn(channel: 0, note: 57, velocity: 100)), (1.1, .noteOff(channel: 0, note: 57)),
            ], seconds: 1.1)
        let a3 = try Self.pitch(Self.rack(), key: 57)
        let first = Self.fundamental(x, from: 0.05, to: 0.45)
        let second = Self.fundamental(x, from: 0.65, to: 1.05)
        XCTAssertEqual(Measure.cents(first, from: a3 * exp2(2.0 / 12)), 0, accuracy: 5, "the song's +2: \(first) Hz")
        XCTAssertEqual(Measure.cents(second, from: a3 * exp2(3.0 / 12)), 0, accuracy: 5, "one up live: \(second) Hz")
    }

    /// Notes through the transposer while the transpose changes, held notes and all:
    /// nothing allocated on the render thread.
    func testTransposedNotesAllocateNothing() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter needs glibc") }
        #if DEBUG
        throw XCTSkip("counts are for release builds; `make test` runs release")
        #else
        let plan = try Self.plan(Self.rack(", \"transpose\": 3"))
        let u = try XCTUnwrap(plan.unitIndex("keys"))
        let unit = try XCTUnwrap(plan.units[u] as? LV2Unit)
        let engine = RenderEngine(plan: plan)
        engine.render(frameCount: 128)  // warm-up
        alloc_counter_start()
        for block in 0..<2000 {
            let key = 48 + block % 24
            if block % 3 == 0 { engine.inject(.midi(.noteOn(channel: block % 2, note: key, velocity: 90), toUnit: u, at: engine.sampleTime + 7)) }
            if block % 3 == 1 { engine.inject(.midi(.polyPressure(channel: block % 2, note: key - 1, value: 40), toUnit: u, at: engine.sampleTime)) }
            if block % 3 == 2 { engine.inject(.midi(.noteOff(channel: block % 2, note: key - 2), toUnit: u, at: engine.sampleTime + 60)) }
            if block % 50 == 0 { unit.transpose = block % 100 == 0 ? 5 : -2 }
            engine.render(frameCount: 128)
        }
        let count = alloc_counter_stop()
        XCTAssertEqual(count, 0, "\(count) allocations in 2000 blocks of transposed notes")
        #endif
    }
}
