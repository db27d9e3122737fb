import StageCore
import XCTest

/// Buttons and pads: toggle, momentary, trigger; actions; bypass.
final class MIDIButtonTests: XCTestCase {
    func testToggleFlipsOnEachPressAndIgnoresReleases() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 80, "button": "toggle", "to": "fx.on" } ] }"#)
        XCTAssertEqual(p.values(p.cc(80, 127), "fx.on"), [0], "on by default: the first press turns it off")
        XCTAssertEqual(p.cc(80, 0), [])
        XCTAssertEqual(p.values(p.cc(80, 127), "fx.on"), [1])
        XCTAssertEqual(p.cc(80, 127), [], "a repeated press without release is one press")
        XCTAssertEqual(p.cc(80, 0), [])
        XCTAssertEqual(p.values(p.cc(80, 100), "fx.on"), [0], "≥ 64 is pressed")
    }

    func testNotePadTogglesAndIsNotPlayed() throws {
        let p = try MapperProbe(#"{ "map": [ { "note": 36, "channel": 10, "to": "fx.on" } ] }"#)
        let press = p.send(.noteOn(channel: 9, note: 36, velocity: 90))
        XCTAssertEqual(press.map(\.kind), [.parameter], "a mapped pad does not reach the synth")
        XCTAssertEqual(p.values(press, "fx.on"), [0])
        XCTAssertEqual(p.send(.noteOff(channel: 9, note: 36)), [])
        XCTAssertEqual(p.values(p.send(.noteOn(channel: 9, note: 36, velocity: 1)), "fx.on"), [1])
        XCTAssertEqual(p.send(.noteOn(channel: 9, note: 36, velocity: 0)), [], "velocity 0 is a release")
        // The same key on another channel plays.
        XCTAssertEqual(p.send(.noteOn(channel: 0, note: 36, velocity: 90)).map(\.kind), [.midi])
    }

    func testToggleBetweenMinAndMax() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 80, "button": "toggle", "to": "fx.level", "min": -20, "max": -3 } ] }"#)
        // 0 dB is nearer max (on), so the first press turns it off.
        XCTAssertEqual(p.values(p.cc(80, 127), "fx.level"), [-20])
        p.cc(80, 0)
        XCTAssertEqual(p.values(p.cc(80, 127), "fx.level"), [-3])
    }

    func testMomentaryHoldsWhilePressed() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 81, "button": "momentary", "to": "fx.mix", "min": 0, "max": 100 } ] }"#)
        XCTAssertEqual(p.values(p.cc(81, 127), "fx.mix"), [100])
        XCTAssertEqual(p.values(p.cc(81, 0), "fx.mix"), [0])
        let q = try MapperProbe(#"{ "map": [ { "note": 40, "button": "momentary", "to": "fx.on", "min": true, "max": false } ] }"#)
        XCTAssertEqual(q.values(q.send(.noteOn(channel: 0, note: 40, velocity: 100)), "fx.on"), [0], "a mute pad")
        XCTAssertEqual(q.values(q.send(.noteOff(channel: 0, note: 40)), "fx.on"), [1])
    }

    func testTriggerSetsItsValueOnEveryPress() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 82, "button": "trigger", "to": "fx.mode", "max": "lead" } ] }"#)
        XCTAssertEqual(p.values(p.cc(82, 127), "fx.mode"), [2])
        p.cc(82, 0)
        p.mapper.noteParameterMoved(try XCTUnwrap(p.address("fx.mode")), to: 0)
        XCTAssertEqual(p.values(p.cc(82, 127), "fx.mode"), [2])
    }

    func testPresetActionsGoToTheControlQueue() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 90, "action": "next-preset" }, { "note": 37, "action": "previous-preset" } ] }"#)
        XCTAssertEqual(p.cc(90, 127), [])
        p.cc(90, 0)
        p.cc(90, 127)
        p.send(.noteOn(channel: 0, note: 37, velocity: 100))
        XCTAssertEqual(p.actions().map(\.kind), [.nextPreset, .nextPreset, .previousPreset])
        XCTAssertEqual(p.mapper.describe(p.mapper.outcome(0)), "previous preset")
    }

    func testTapTempoFromAPad() throws {
        let p = try MapperProbe(#"{ "map": [ { "note": 50, "action": "tap-tempo" } ] }"#)
        func tap(after dt: Double) -> [EngineEvent] {
            let e = p.send(.noteOn(channel: 0, note: 50, velocity: 100), after: dt)
            p.send(.noteOff(channel: 0, note: 50), after: 0.05)
            return e
        }
        XCTAssertEqual(tap(after: 1), [], "one tap says nothing")
        var tempos: [Float] = []
        for _ in 0..<4 { tempos += tap(after: 0.45).filter { $0.kind == .tempo }.map(\.value) }
        XCTAssertEqual(tempos, [120, 120, 120, 120])  // 0.05 + 0.45 = 0.5 s per beat
        // Slower taps (more than 40 % off) start a new average at once.
        let slow = tap(after: 0.95).filter { $0.kind == .tempo }.map(\.value)
        XCTAssertEqual(slow, [60])
        // A long pause starts a new series.
        XCTAssertEqual(tap(after: 5), [])
    }

    func testTapTempoAveragesTheLastFourIntervals() {
        var t = TempoTracker()
        var time = 0.0
        _ = t.tap(at: time)
        var last: Double?
        for interval in [0.5, 0.52, 0.48, 0.5, 0.51] {
            time += interval
            last = t.tap(at: time)
        }
        XCTAssertEqual(last!, 60 / ((0.52 + 0.48 + 0.5 + 0.51) / 4), accuracy: 0.01)
    }

    func testBypassIsMappableLikeAParameter() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 85, "button": "toggle", "to": "fx.bypass", "feedback": true } ] }"#)
        let on = p.cc(85, 127)
        XCTAssertEqual(on.map(\.kind), [.bypass])
        XCTAssertEqual(on.first?.value, 1)
        XCTAssertEqual(on.first?.unit, Int32(try XCTUnwrap(p.plan.unitIndex("fx"))))
        XCTAssertEqual(p.feedback(), [.controlChange(channel: 0, controller: 85, value: 127)], "the button's light")
        p.cc(85, 0)
        XCTAssertEqual(p.cc(85, 127).first?.value, 0)
    }
}
