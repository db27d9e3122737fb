import StageCore
import XCTest

/// Soft takeover: jump, pickup, scale; pickup by default after a preset moved a parameter.
final class SoftTakeoverTests: XCTestCase {
    // fx.level −60…+6 dB, default 0 dB: position 60/66 = 0.909, controller value ≈ 115.5.

    func testJumpIsTheDefaultAtLoad() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level" } ] }"#)
        XCTAssertEqual(p.values(p.cc(7, 0), "fx.level"), [-60])
    }

    func testPickupIgnoresTheKnobUntilItCrossesTheValue() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level", "takeover": "pickup" } ] }"#)
        for v in [20, 60, 100] {
            XCTAssertEqual(p.cc(7, v), [], "knob at \(v) is below the value: ignored")
            XCTAssertEqual(p.mapper.outcome(0).kind, .waiting)
            XCTAssertEqual(p.mapper.outcome(0).value, 0)
        }
        XCTAssertEqual(p.mapper.describe(p.mapper.outcome(0)), "fx.level stays 0 dB (pickup: move the knob to it)")
        // 100 → 120 crosses 115.5: from now on it follows.
        XCTAssertEqual(p.values(p.cc(7, 120), "fx.level").first!, -60 + 66 * 120 / 127, accuracy: 1e-4)
        XCTAssertTrue(p.mapper.isSynced(mapping: 0))
        XCTAssertEqual(p.values(p.cc(7, 10), "fx.level").first!, -60 + 66 * 10 / 127, accuracy: 1e-4)
    }

    func testPickupFromAboveAndWithinTolerance() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level", "takeover": "pickup" } ] }"#)
        XCTAssertEqual(p.cc(7, 127), [])
        XCTAssertEqual(p.cc(7, 118), [])
        XCTAssertEqual(p.values(p.cc(7, 110), "fx.level").count, 1, "118 → 110 crosses 115.5")

        let q = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level", "takeover": "pickup" } ] }"#)
        XCTAssertEqual(q.values(q.cc(7, 116), "fx.level").count, 1, "the first message lands within 1.5 steps")
    }

    func testPickupWithAFastJumpAcrossTheValue() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level", "takeover": "pickup" } ] }"#)
        XCTAssertEqual(p.cc(7, 0), [])
        XCTAssertEqual(p.values(p.cc(7, 127), "fx.level"), [6], "one message from 0 to 127 crosses it")
    }

    func testScaleMovesProportionallyAndConverges() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level", "takeover": "scale" } ] }"#)
        let m = p.mapper.mappings[0]
        XCTAssertEqual(p.cc(7, 0), [], "the knob's position is not known yet")
        var previous: Float = 0
        var knob = 0
        for v in stride(from: 8, through: 127, by: 8) + [127] {
            let out = p.values(p.cc(7, v), "fx.level")
            guard let value = out.first else { continue }
            // Moving up from knob k: p' = p + (k' − k)(1 − p)/(1 − k).
            let k = Float(knob) / 127
            let k2 = Float(v) / 127
            let pos = m.position(ofValue: previous)
            let expected = min(pos + (k2 - k) * (1 - pos) / (1 - k), 1)
            if !p.mapper.isSynced(mapping: 0) {
                XCTAssertEqual(m.position(ofValue: value), expected, accuracy: 1e-4, "knob \(v)")
            }
            XCTAssertGreaterThanOrEqual(value, previous, "moves toward the knob's end")
            previous = value
            knob = v
        }
        XCTAssertEqual(previous, 6, "knob and parameter arrive at the end together")
        XCTAssertTrue(p.mapper.isSynced(mapping: 0))
    }

    func testScaleDownwardMeetsTheKnob() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.mix", "takeover": "scale" } ] }"#, params: #"{ "mix": 20 }"#)
        // Parameter at 20 %, knob at the top: going down, the parameter moves by p/k of the knob's travel.
        XCTAssertEqual(p.cc(7, 127), [])
        let v = try XCTUnwrap(p.values(p.cc(7, 64), "fx.mix").first)
        XCTAssertEqual(v, 20 - (1 - 64.0 / 127) * 20, accuracy: 1e-3)
        var last = v
        var knob = 64
        while !p.mapper.isSynced(mapping: 0) && knob > 0 {
            knob -= 4
            if let x = p.values(p.cc(7, knob), "fx.mix").first { last = x }
        }
        XCTAssertTrue(p.mapper.isSynced(mapping: 0), "they meet on the way down (at 0 at the latest)")
        XCTAssertEqual(last, 100 * Float(knob) / 127, accuracy: 1e-3, "from the meeting point it follows the knob")
    }

    func testPickupByDefaultAfterAPresetMovedTheParameter() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level" } ] }"#)
        XCTAssertEqual(p.values(p.cc(7, 127), "fx.level"), [6])
        let address = try XCTUnwrap(p.address("fx.level"))
        XCTAssertTrue(p.mapper.noteParameterMoved(address, to: -30, byPreset: true))
        // −30 dB is position 0.4545, controller ≈ 57.7: the knob at the top must come down to it.
        XCTAssertEqual(p.cc(7, 120), [])
        XCTAssertEqual(p.mapper.outcome(0).kind, .waiting)
        XCTAssertEqual(p.mapper.outcome(0).value, -30)
        XCTAssertEqual(p.cc(7, 70), [])
        XCTAssertEqual(p.values(p.cc(7, 50), "fx.level").count, 1, "70 → 50 crosses 57.7")
        // Caught: it jumps again as before.
        XCTAssertEqual(p.values(p.cc(7, 127), "fx.level"), [6])
    }

    func testAChangeThatIsNotAPresetKeepsTheDefaultMappingJumping() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level" } ] }"#)
        p.mapper.noteParameterMoved(try XCTUnwrap(p.address("fx.level")), to: -30, byPreset: false)
        XCTAssertEqual(p.values(p.cc(7, 127), "fx.level"), [6])
    }

    func testExplicitJumpIgnoresPresetChanges() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level", "takeover": "jump" } ] }"#)
        p.mapper.noteParameterMoved(try XCTUnwrap(p.address("fx.level")), to: -30)
        XCTAssertEqual(p.values(p.cc(7, 127), "fx.level"), [6])
    }

    func testAnotherControlOnTheSameParameterUnsyncsAPickupKnob() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.mix", "takeover": "pickup" }, { "cc": 8, "to": "fx.mix" } ] }"#)
        XCTAssertEqual(p.values(p.cc(7, 64), "fx.mix").count, 1, "64 is within tolerance of 50 % (63.5)")
        XCTAssertTrue(p.mapper.isSynced(mapping: 0))
        XCTAssertEqual(p.values(p.cc(8, 0), "fx.mix"), [0], "the second knob jumps")
        XCTAssertFalse(p.mapper.isSynced(mapping: 0))
        XCTAssertEqual(p.cc(7, 70), [], "the first knob must pick up again")
        XCTAssertEqual(p.cc(7, 0), [], "reaches the value (0 %): nothing to change")
        XCTAssertTrue(p.mapper.isSynced(mapping: 0))
        XCTAssertEqual(p.values(p.cc(7, 10), "fx.mix").first!, 1000 / 127, accuracy: 1e-4)
    }

    func testKnobsWaitForPickupAfterSwitchingToAnotherRack() throws {
        let old = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level" }, { "cc": 8, "to": "fx.mix" } ] }"#)
        old.cc(7, 127)
        old.cc(8, 64)
        // The next rack has the same knobs; its level is −30 dB, its mix 50 % (where knob 8 is).
        let new = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level" }, { "cc": 8, "to": "fx.mix" } ] }"#, params: #"{ "level": -30 }"#)
        new.mapper.takeOver(from: old.mapper)
        XCTAssertFalse(new.mapper.isSynced(mapping: 0), "knob 7 is at the top, the level is not")
        XCTAssertTrue(new.mapper.isSynced(mapping: 1), "knob 8 already sits at the value")
        XCTAssertEqual(new.cc(7, 120), [])
        XCTAssertEqual(new.values(new.cc(7, 50), "fx.level").count, 1, "120 → 50 crosses −30 dB (57.7)")
        XCTAssertEqual(new.values(new.cc(8, 10), "fx.mix").count, 1)
    }

    func testStepRuleDirectly() {
        typealias S = SoftTakeover.Step
        XCTAssertEqual(SoftTakeover.step(.jump, from: nil, to: 0.2, parameter: 0.8, tolerance: 0.01), S(position: 0.2, caughtUp: true))
        XCTAssertEqual(SoftTakeover.step(.pickup, from: nil, to: 0.2, parameter: 0.8, tolerance: 0.01), S(position: nil, caughtUp: false))
        XCTAssertEqual(SoftTakeover.step(.pickup, from: 0.7, to: 0.9, parameter: 0.8, tolerance: 0.01), S(position: 0.9, caughtUp: true))
        XCTAssertEqual(SoftTakeover.step(.scale, from: 0.5, to: 0.5, parameter: 0.8, tolerance: 0.01), S(position: nil, caughtUp: false))
        let s = SoftTakeover.step(.scale, from: 0.0, to: 0.5, parameter: 0.8, tolerance: 0.01)
        XCTAssertEqual(s.position!, 0.9, accuracy: 1e-6)
        XCTAssertFalse(s.caughtUp)
        // Parameter below the knob, knob going up: the parameter moves faster; they meet at the end.
        let below = SoftTakeover.step(.scale, from: 0.5, to: 0.9, parameter: 0.1, tolerance: 0.01)
        XCTAssertEqual(below.position!, 0.1 + 0.4 * 0.9 / 0.5, accuracy: 1e-6)
        XCTAssertFalse(below.caughtUp)
        XCTAssertEqual(SoftTakeover.step(.scale, from: 0.5, to: 1, parameter: 0.1, tolerance: 0.01), S(position: 1, caughtUp: true))
    }
}
