import Foundation
import StageCore
import XCTest

/// Absolute knobs: ranges, inversion, curves, step lists, the natural curve of each unit.
final class MIDIMappingCurveTests: XCTestCase {
    func testLinearRangeAndInversion() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "channel": 1, "to": "fx.level", "min": -40, "max": 6 }, { "cc": 8, "to": "fx.level", "min": 6, "max": -40 } ] }"#)
        XCTAssertEqual(p.values(p.cc(7, 0), "fx.level"), [-40])
        XCTAssertEqual(p.values(p.cc(7, 127), "fx.level"), [6])
        XCTAssertEqual(p.values(p.cc(7, 64), "fx.level").first!, -40 + 46 * 64 / 127, accuracy: 1e-4)
        // Channel 2 is not channel 1: the message goes to the synth instead.
        XCTAssertEqual(p.values(p.cc(7, 0, channel: 1), "fx.level"), [])
        XCTAssertEqual(p.mapper.outcome(0).kind, .toUnits)
        // min > max inverts.
        XCTAssertEqual(p.values(p.cc(8, 0), "fx.level"), [6])
        XCTAssertEqual(p.values(p.cc(8, 127), "fx.level"), [-40])
        XCTAssertEqual(p.values(p.cc(8, 32), "fx.level").first!, 6 - 46 * 32 / 127, accuracy: 1e-4)
    }

    func testNaturalCurveOfHertzIsLogarithmic() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 1, "to": "fx.cutoff" } ] }"#)
        for v in [0, 1, 32, 64, 100, 127] {
            let got = try XCTUnwrap(p.values(p.cc(1, v), "fx.cutoff").first ?? p.value("fx.cutoff"))
            let expected = 20 * pow(1000, Float(v) / 127)
            XCTAssertEqual(got, expected, accuracy: expected * 1e-4, "cc \(v)")
        }
    }

    func testExpAndLinearCurvesOnHertz() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 1, "to": "fx.cutoff", "curve": "exp", "min": 100, "max": 1100 }, { "cc": 2, "to": "fx.mix", "curve": "linear" } ] }"#)
        let e = try XCTUnwrap(p.values(p.cc(1, 64), "fx.cutoff").first)
        let x: Float = 64 / 127
        XCTAssertEqual(e, 100 + 1000 * x * x, accuracy: 1e-2)
        XCTAssertEqual(try XCTUnwrap(p.values(p.cc(2, 100), "fx.mix").first), 100 * 100 / 127, accuracy: 1e-4)
    }

    func testStepListSplitsTheTravelIntoEqualZones() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 20, "to": "fx.mode", "curve": [ "clean", "fuzz", "lead" ] }, { "cc": 21, "to": "fx.level", "curve": [ -20, -10, 0 ] } ] }"#)
        var seen: [Int: Float] = [:]
        for v in 0...127 {
            p.cc(20, v)
            seen[v] = p.mapper.currentValue(mapping: 0)
        }
        // fuzz is index 3, lead index 2.
        XCTAssertEqual(seen[0], 0)
        XCTAssertEqual(seen[42], 0)
        XCTAssertEqual(seen[43], 3)
        XCTAssertEqual(seen[84], 3)
        XCTAssertEqual(seen[85], 2)
        XCTAssertEqual(seen[127], 2)
        XCTAssertEqual(p.values(p.cc(21, 0), "fx.level"), [-20])
        XCTAssertEqual(p.values(p.cc(21, 64), "fx.level"), [-10])
        XCTAssertEqual(p.values(p.cc(21, 127), "fx.level"), [0])
    }

    func testEnumParameterDefaultsToOneZonePerChoice() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 20, "to": "fx.mode" } ] }"#)
        var firstOf: [Float: Int] = [:]
        for v in 0...127 {
            p.cc(20, v)
            let m = try XCTUnwrap(p.mapper.currentValue(mapping: 0))
            if firstOf[m] == nil { firstOf[m] = v }
        }
        XCTAssertEqual(firstOf, [0: 0, 1: 32, 2: 64, 3: 96], "four equal zones of 32 values")
    }

    func testBoolParameterSwitchesAtTheMiddle() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 64, "to": "fx.on" } ] }"#)
        XCTAssertEqual(p.values(p.cc(64, 63), "fx.on"), [0])
        XCTAssertEqual(p.values(p.cc(64, 64), "fx.on"), [1])
    }

    func testUnchangedValueSendsNoEvent() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.mix" } ] }"#)
        XCTAssertEqual(p.cc(7, 10).count, 1)
        XCTAssertEqual(p.cc(7, 10).count, 0)
        XCTAssertEqual(p.mapper.outcome(0).kind, .unchanged)
    }

    func testPositionIsTheInverseOfValue() throws {
        let (mapper, _) = try MIDITestRack.mapper(
            #"{ "map": [ { "cc": 1, "to": "fx.cutoff" }, { "cc": 2, "to": "fx.level", "min": 6, "max": -60 }, { "cc": 3, "to": "fx.mix", "curve": "exp" } ] }"#)
        for m in mapper.mappings {
            for i in 0...20 {
                let x = Float(i) / 20
                XCTAssertEqual(m.position(ofValue: m.value(atPosition: x)), x, accuracy: 1e-4, "\(m.targetName) at \(x)")
            }
        }
    }

    func testDescribeNamesTheParameterAndItsUnit() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 7, "to": "fx.level", "min": -40, "max": 6 } ] }"#)
        p.cc(7, 64)
        XCTAssertEqual(p.mapper.describe(p.mapper.outcome(0)), "fx.level = -16.819 dB")
        p.send(.noteOn(channel: 0, note: 60, velocity: 100))
        XCTAssertEqual(p.mapper.describe(p.mapper.outcome(0)), "synth")
    }
}
