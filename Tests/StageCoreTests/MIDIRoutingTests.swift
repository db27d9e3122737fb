import StageCore
import StageTestSupport
import XCTest

/// Notes and performance controllers to the synth, program changes to presets, clock to
/// tempo, feedback to controllers.
final class MIDIRoutingTests: XCTestCase {
    func testPerformanceMessagesGoToTheSynthUnchanged() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level" } ] }"#)
        let synth = Int32(try XCTUnwrap(p.plan.unitIndex("synth")))
        let messages: [MIDIMessage] = [
            .noteOn(channel: 0, note: 60, velocity: 100), .noteOff(channel: 0, note: 60),
            .pitchBend(channel: 0, value: 10000), .controlChange(channel: 0, controller: 1, value: 64),
            .controlChange(channel: 0, controller: 64, value: 127), .controlChange(channel: 0, controller: 11, value: 90),
            .channelPressure(channel: 0, value: 30), .polyPressure(channel: 3, note: 60, value: 20),
        ]
        for m in messages {
            let out = p.send(m)
            XCTAssertEqual(out.count, 1, "\(m)")
            XCTAssertEqual(out.first?.kind, .midi)
            XCTAssertEqual(out.first?.unit, synth)
            XCTAssertEqual(out.first?.message, m)
        }
        XCTAssertEqual(p.cc(7, 10).map(\.kind), [.parameter], "a mapped controller is not played")
    }

    func testEventsKeepTheirEngineTime() throws {
        let (mapper, plan) = try MIDITestRack.mapper(#"{ "map": [ { "cc": 7, "to": "fx.level" } ] }"#)
        var out: [EngineEvent] = []
        mapper.handle(.controlChange(channel: 0, controller: 7, value: 0), at: 4800) { out.append($0) }
        mapper.handle(.noteOn(channel: 0, note: 60, velocity: 1), at: 4900) { out.append($0) }
        XCTAssertEqual(out.map(\.sampleTime), [4800, 4900])
        XCTAssertEqual(plan.sampleRate, 48000)
    }

    func testProgramChangeSelectsAPresetWithItsBank() throws {
        let p = try MapperProbe(#"{ "programs": "presets", "programChannel": 1 }"#)
        XCTAssertEqual(p.send(.programChange(channel: 0, program: 5)), [])
        p.cc(0, 1)
        XCTAssertEqual(p.cc(32, 2), [], "bank select is taken")
        p.send(.programChange(channel: 0, program: 6))
        p.cc(0, 3)
        p.send(.programChange(channel: 0, program: 7))
        let actions = p.actions()
        XCTAssertEqual(actions, [
            ControlAction(kind: .selectPreset, program: 5, bank: -1, channel: 0),
            ControlAction(kind: .selectPreset, program: 6, bank: 130, channel: 0),
            ControlAction(kind: .selectPreset, program: 7, bank: 384, channel: 0),
        ])
        XCTAssertEqual(p.mapper.describe(p.mapper.outcome(0)), "select preset 7 bank 384")
        // Other channels' programs and banks go to the synth.
        XCTAssertEqual(p.send(.programChange(channel: 1, program: 5)).map(\.kind), [.midi])
        XCTAssertEqual(p.cc(0, 1, channel: 1).map(\.kind), [.midi])
        XCTAssertEqual(p.actions(), [])
    }

    func testProgramChangeDefaultsToPresetsOnlyUnderThePresetSwitcher() throws {
        let plan = try MIDITestRack.plan(midi: "{}")
        var out: [EngineEvent] = []
        let lone = MIDIMapper(plan: plan)
        lone.handle(.programChange(channel: 0, program: 5)) { out.append($0) }
        XCTAssertEqual(out.map(\.kind), [.midi], "a lone rack: the synth changes instrument")
        XCTAssertNil(lone.actions.pop())
        out = []
        let switched = MIDIMapper(plan: plan, presetsByDefault: true)
        switched.handle(.programChange(channel: 0, program: 5)) { out.append($0) }
        XCTAssertEqual(out, [])
        XCTAssertEqual(switched.actions.pop(), ControlAction(kind: .selectPreset, program: 5))
    }

    func testProgramChangeCanGoToTheUnitsOrNowhere() throws {
        let units = try MapperProbe(#"{ "programs": "units" }"#)
        XCTAssertEqual(units.send(.programChange(channel: 0, program: 5)).map(\.kind), [.midi])
        XCTAssertEqual(units.cc(0, 1).map(\.kind), [.midi])
        XCTAssertEqual(units.actions(), [])
        let none = try MapperProbe(#"{ "programs": "ignore" }"#)
        XCTAssertEqual(none.send(.programChange(channel: 0, program: 5)), [])
        XCTAssertEqual(none.actions(), [])
    }

    /// Clock ticks at `bpm` with up to ±`jitter` seconds of random timing error.
    func clock(_ p: MapperProbe, bpm: Double, beats: Int, jitter: Double) -> [Float] {
        // Seeded: the jitter is the same every run (a system generator once gave a first
        // estimate of 120.05 BPM, just outside a 0.05 bound, in one CI run in many).
        let seed: UInt64 = UInt64(bpm * 1000) &+ UInt64(beats) &* 31
        var rng = SeededGenerator(seed: seed &+ UInt64(jitter * 1e6))
        let interval = 60 / bpm / 24
        var tempos: [Float] = []
        let start = p.seconds
        var offset = 0.0
        for i in 1...(beats * 24) {
            let t = start + Double(i) * interval + Double.random(in: -jitter...jitter, using: &rng)
            let dt = max(t - p.seconds, 0)
            tempos += p.send(.clock, after: dt).filter { $0.kind == .tempo }.map(\.value)
            offset = t
        }
        _ = offset
        return tempos
    }

    func testClockSetsTheTempoSmoothly() throws {
        let p = try MapperProbe("{}", tempo: 100)
        let first = clock(p, bpm: 120, beats: 8, jitter: 0.001)
        XCTAssertFalse(first.isEmpty)
        XCTAssertLessThanOrEqual(first.count, 12, "a handful of tempo events, not one per tick: \(first)")
        XCTAssertEqual(Double(first.last!), 120, accuracy: 0.2, "\(first)")
        // A tempo change shows within two beats.
        let second = clock(p, bpm: 90, beats: 2, jitter: 0.001)
        XCTAssertEqual(Double(try XCTUnwrap(second.last)), 90, accuracy: 0.5, "\(second)")
        XCTAssertEqual(Double(p.mapper.tempo.tempo), Double(second.last!), accuracy: 0.01)
        XCTAssertEqual(p.mapper.describe(MappingOutcome(.tempo, value: 90)), "tempo 90 BPM")
    }

    func testJitteryClockReportsOnlySignificantChanges() throws {
        // ±5 ms per tick (a busy machine): the estimate must not wobble around.
        let p = try MapperProbe("{}", tempo: 100)
        let tempos = clock(p, bpm: 120, beats: 16, jitter: 0.005)
        XCTAssertLessThanOrEqual(tempos.count, 8, "\(tempos)")
        XCTAssertEqual(Double(try XCTUnwrap(tempos.last)), 120, accuracy: 1, "\(tempos)")
    }

    func testSteadyClockAtTheRackTempoClaimsTheTempoOnceThenSendsNothing() throws {
        // The clock outranks the song's tempo (TempoSources), so it says once that it leads,
        // even at the rack's own tempo; then nothing while it stays steady.
        let p = try MapperProbe("{}", tempo: 120)
        let first = clock(p, bpm: 120, beats: 4, jitter: 0.0002)
        XCTAssertEqual(first.count, 1, "\(first)")
        XCTAssertEqual(Double(first[0]), 120, accuracy: 0.05)
        XCTAssertEqual(clock(p, bpm: 120, beats: 4, jitter: 0.0002), [])
    }

    func testAStoppedOrQuietClockWithdrawsItsTempo() throws {
        let p = try MapperProbe("{}", tempo: 100)
        XCTAssertFalse(clock(p, bpm: 120, beats: 2, jitter: 0).isEmpty)
        let stop = p.send(.stop).filter { $0.kind == .tempo }
        XCTAssertEqual(stop.map(\.value), [0], "Stop withdraws the clock's tempo")
        XCTAssertEqual(stop.first?.parameter, TempoSource.clock.rawValue)
        XCTAssertEqual(clock(p, bpm: 120, beats: 2, jitter: 0), [], "ticks after Stop give no tempo")
        p.send(.continue)
        let resumed = clock(p, bpm: 120, beats: 1, jitter: 0)
        XCTAssertEqual(Double(try XCTUnwrap(resumed.last, "Continue: the clock leads again")), 120, accuracy: 0.5)
        XCTAssertEqual(p.wait(0.1).filter { $0.kind == .tempo }, [])
        XCTAssertEqual(p.wait(0.3).filter { $0.kind == .tempo }.map(\.value), [0], "quiet for 0.3 s: withdrawn")
    }

    func testClockCanBeIgnored() throws {
        let p = try MapperProbe(#"{ "clock": false }"#, tempo: 100)
        XCTAssertEqual(clock(p, bpm: 120, beats: 4, jitter: 0), [])
        p.send(.start)
        XCTAssertEqual(p.actions(), [])
    }

    func testStartContinueStopReachTheControlSide() throws {
        let p = try MapperProbe("{}")
        p.send(.start)
        p.send(.stop)
        p.send(.continue)
        XCTAssertEqual(p.actions().map(\.kind), [.transportStart, .transportStop, .transportContinue])
        XCTAssertTrue(p.mapper.tempo.running)
    }

    func testClockTimeoutStartsANewEstimate() {
        var t = TempoTracker()
        var time = 0.0
        var last: Double?
        for _ in 0..<48 {
            time += 60.0 / 120 / 24
            last = t.clockTick(at: time) ?? last
        }
        XCTAssertEqual(last!, 120, accuracy: 0.01)
        time += 2  // the clock stopped for 2 s
        for _ in 0..<24 {
            time += 60.0 / 60 / 24
            last = t.clockTick(at: time) ?? last
        }
        XCTAssertEqual(last!, 60, accuracy: 0.01, "the pause did not count as one long tick")
    }

    func testSystemExclusiveAndOtherSystemMessagesAreIgnored() throws {
        let p = try MapperProbe("{}")
        XCTAssertEqual(p.send(MIDIMessage(status: 0xF0)), [])
        XCTAssertEqual(p.send(.activeSensing), [])
        XCTAssertEqual(p.mapper.outcome(0).kind, .ignored)
    }

    // MARK: Feedback

    func testFeedbackOnLoadAndOnChange() throws {
        let p = try MapperProbe(#"""
            { "map": [
              { "cc": 7, "to": "fx.mix", "feedback": true },
              { "cc": 16, "to": "fx.mix", "mode": "relative-twos", "feedback": true },
              { "cc": 2, "hires": true, "to": "fx.mix", "channel": 2, "feedback": true },
              { "nrpn": 300, "to": "fx.level", "feedback": true },
              { "note": 36, "to": "fx.on", "feedback": true },
              { "cc": 8, "to": "fx.cutoff" } ] }
            """#)
        p.mapper.queueInitialFeedback()
        XCTAssertEqual(p.feedback(), [
            .controlChange(channel: 0, controller: 7, value: 64),  // 50 % → 63.5 → 64
            .controlChange(channel: 0, controller: 16, value: 64),
            .controlChange(channel: 1, controller: 2, value: 8192 >> 7),  // 14-bit 8191.5 → 8192
            .controlChange(channel: 1, controller: 34, value: 0),
            .controlChange(channel: 0, controller: 99, value: 2), .controlChange(channel: 0, controller: 98, value: 44),
            .controlChange(channel: 0, controller: 6, value: 14894 >> 7), .controlChange(channel: 0, controller: 38, value: 14894 & 127),
            .noteOn(channel: 0, note: 36, velocity: 127),
        ])
        // The knob that moved is not echoed; the others show the new value.
        p.cc(7, 0)
        XCTAssertEqual(p.feedback(), [
            .controlChange(channel: 0, controller: 16, value: 0),
            .controlChange(channel: 1, controller: 2, value: 0), .controlChange(channel: 1, controller: 34, value: 0),
        ])
        // An encoder's ring shows where it is, itself included.
        p.cc(16, 1)
        XCTAssertEqual(p.feedback().prefix(1), [.controlChange(channel: 0, controller: 7, value: 1)])
        // A preset change is shown everywhere; nothing repeats when nothing changed.
        p.mapper.noteParameterMoved(try XCTUnwrap(p.address("fx.on")), to: 0)
        p.wait(0.001)
        XCTAssertEqual(p.feedback(), [.noteOn(channel: 0, note: 36, velocity: 0)])
        p.mapper.noteParameterMoved(try XCTUnwrap(p.address("fx.on")), to: 0)
        p.wait(0.001)
        XCTAssertEqual(p.feedback(), [])
    }

    func testMappingsToUnitsNotInThePlanAreDropped() throws {
        // A rack where fx is not connected to the output: it is left out of the render.
        let registry = MIDITestRack.registry
        let text = """
            { "format": 1, "units": { "mic": { "type": "in" }, "fx": { "type": "knobs" }, "out": { "type": "out" } },
              "connections": [ "mic -> out" ], "midi": { "map": [ { "cc": 7, "to": "fx.mix" } ] } }
            """
        let rack = try RackReader(registry: registry).read(text: text)
        let plan = try GraphCompiler(registry: registry).compile(rack, options: GraphCompiler.Options(maxFrames: 64))
        let mapper = MIDIMapper(plan: plan)
        XCTAssertTrue(mapper.mappings.isEmpty)
        var out: [EngineEvent] = []
        mapper.handle(.controlChange(channel: 0, controller: 7, value: 1)) { out.append($0) }
        XCTAssertEqual(out, [], "and no unit plays MIDI")
    }
}
