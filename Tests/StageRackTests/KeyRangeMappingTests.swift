import StageCore
import StageControl
import StageDrivers
import StageTestSupport
import XCTest

/// `midi.map` entries with a `keys` range set the `key` of harmony and tune units from a
/// played note (racks/README.md, section "MIDI"): through the live MIDI router, at the
/// note's frame, measured on the harmony's voice; and checked with line:column.
final class KeyRangeMappingTests: XCTestCase {
    let sr = 48000.0
    let block = 128

    /// A sung D4; harmony a diatonic third above in C major (F4); tune corrects to C major.
    /// Channel 16's keys C1…B1 set both units' key.
    let rack = """
        { "format": 2,
          "units": { "mic": { "type": "input" },
                     "tune": { "type": "tune", "scale": "major" },
                     "harm": { "type": "harmony", "voices": 1, "source": "scale", "key": "C", "intervals": [3],
                               "params": { "leadLevel": -96, "pan1": 0 } },
                     "out": { "type": "output" } },
          "connections": [ "mic -> tune -> harm -> out" ],
          "midi": { "map": [ { "keys": "C1..B1", "channel": 16, "to": "harm.key" },
                             { "keys": "24..35", "channel": 16, "to": "tune.key" } ] } }
        """

    func nanoseconds(_ frame: Int64) -> UInt64 { 1_000_000_000 + UInt64(Double(frame) / sr * 1e9) }

    /// D1 played on channel 16 halfway through a period: the router schedules both key
    /// changes one period later (the live path's rule, to the clock's frame), the note reaches
    /// no unit, and the voice moves from F4 (a third above D in C major) to F#4 (in D major)
    /// after that frame, not before.
    func testAKeyRangeSetsTheKeyAtTheNotesFrameThroughTheRouter() throws {
        let plan = try RackBuilding.plan(rack, maxFrames: block)
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let router = MIDIRouter(mapper: MIDIMapper(plan: plan), events: player.events, clock: player.clock, monitor: false)
        let input = BusStorage(bufferCount: 1, maxFrames: block)
        let output = BusStorage(bufferCount: 2, maxFrames: block)
        let total = Int(2 * sr)
        let vowel = PitchMeasure.vowel(f0: 293.66, frames: total)
        var out: [Float] = []
        let arrival = Int64(sr) + 64  // mid-period, 1 s in
        var scheduled: [EngineEvent] = []
        var frame: Int64 = 0
        while frame < Int64(total) {
            player.clock.periodStarted(frame: player.sampleTime, nanoseconds: nanoseconds(frame), periodFrames: block, sampleRate: sr)
            if frame <= arrival && arrival < frame + Int64(block) {
                router.handle(.noteOn(channel: 15, note: 26, velocity: 90), arrivalNanoseconds: nanoseconds(arrival))
                router.handle(.noteOff(channel: 15, note: 26), arrivalNanoseconds: nanoseconds(arrival + 10))
                // Everything the two notes made, in order (the queue is read, then refilled).
                while let e = player.events.pop() { scheduled.append(e) }
                for e in scheduled { XCTAssertTrue(player.events.push(e)) }
            }
            input.buffer(0).update(from: vowel.withUnsafeBufferPointer { $0.baseAddress! } + Int(frame), count: block)
            player.render(frameCount: block, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
            out += UnsafeBufferPointer(start: output.buffer(0), count: block)
            frame += Int64(block)
        }
        // Two key changes (harm.key, tune.key) to D (2) at the note's frame, one period after
        // its arrival; no note for any unit (the note off is taken too).
        XCTAssertEqual(scheduled.count, 2, "\(scheduled.map(\.kind))")
        let expected = try XCTUnwrap(scheduled.first?.sampleTime)
        XCTAssertLessThanOrEqual(abs(expected - (arrival + Int64(block))), 1, "one period after the note (within the clock's frame)")
        for e in scheduled {
            XCTAssertEqual(e.kind, .parameter)
            XCTAssertEqual(e.value, 2)
            XCTAssertEqual(e.sampleTime, expected, "both keys change at the note's frame")
        }
        XCTAssertEqual(player.eventsLate.load(ordering: .relaxed), 0)
        let f = Int(expected)
        let before = PitchMeasure.fundamental(out[(f - 24000)..<f], sampleRate: sr, low: 150, high: 600)
        let after = PitchMeasure.fundamental(out[(f + 2400)..<(f + 24000)], sampleRate: sr, low: 150, high: 600)
        print("key range: voice \(String(format: "%.2f", before)) Hz in C major, \(String(format: "%.2f", after)) Hz after D1 (D major)")
        XCTAssertLessThanOrEqual(abs(Measure.cents(before, from: 349.23)), 5, "F4 before the key change")
        XCTAssertLessThanOrEqual(abs(Measure.cents(after, from: 369.99)), 5, "F#4 after it")
        // Not before its frame: the last 50 ms up to the frame are still F4.
        let edge = PitchMeasure.fundamental(out[(f - 2400)..<f], sampleRate: sr, low: 150, high: 600)
        XCTAssertLessThanOrEqual(abs(Measure.cents(edge, from: 349.23)), 10, "F4 up to the frame (\(edge) Hz)")
    }

    /// Notes outside the range, or on another channel, are not taken: they reach the units.
    func testNotesOutsideTheRangeOrChannelPassOn() throws {
        let plan = try RackBuilding.plan(rack, maxFrames: block)
        let mapper = MIDIMapper(plan: plan)
        var events: [EngineEvent] = []
        mapper.handle(.noteOn(channel: 15, note: 36, velocity: 90), at: 100) { events.append($0) }
        mapper.handle(.noteOn(channel: 0, note: 38, velocity: 90), at: 200) { events.append($0) }
        mapper.handle(.noteOn(channel: 15, note: 35, velocity: 90), at: 300) { events.append($0) }
        XCTAssertEqual(events.filter { $0.kind == .midi }.map(\.sampleTime), [100, 100, 200, 200], "to harm and tune")
        XCTAssertEqual(events.filter { $0.kind == .parameter }.map(\.value), [11, 11], "B1 sets B")
        XCTAssertEqual(events.filter { $0.kind == .parameter }.map(\.sampleTime), [300, 300])
    }

    /// The mapping's errors, each at its line and column.
    func testKeyRangeMistakesAreReportedWithTheirPlace() throws {
        func errors(_ mapping: String) -> [String] {
            let text = rack.replacingOccurrences(of: "{ \"keys\": \"C1..B1\", \"channel\": 16, \"to\": \"harm.key\" }", with: mapping)
            do {
                _ = try RackBuilding.plan(text)
                return []
            } catch {
                return ((error as? RackError)?.diagnostics ?? []).map { String($0.description.dropFirst("test.json:".count)) }
            }
        }
        XCTAssertEqual(errors("{ \"keys\": \"C1..B1\", \"channel\": 16, \"to\": \"harm.key\" }"), [])
        let cases: [(String, String)] = [
            ("{ \"keys\": \"C1..X1\", \"to\": \"harm.key\" }", "8:32: midi.map[0].keys: must be a key range"),
            ("{ \"keys\": \"C1..B1\", \"to\": \"harm.glide\" }", "8:48: midi.map[0].to: a key range sets a key"),
            ("{ \"keys\": \"C1..B1\", \"to\": \"harm.key\", \"max\": 3 }", "8:60: midi.map[0].max: does not apply to a key range"),
            ("{ \"keys\": \"C1..B1\", \"to\": \"harm.kee\" }", "8:48: midi.map[0].to: a harmony unit has no parameter \"kee\""),
            ("{ \"keys\": \"C1..B1\", \"channel\": 16 }", "8:22: midi.map[0].to: missing"),
        ]
        for (mapping, start) in cases {
            let found = errors(mapping)
            XCTAssertTrue(found.contains { $0.hasPrefix(start) }, "\(mapping): \(found)")
        }
    }
}
