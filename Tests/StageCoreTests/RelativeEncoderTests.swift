import StageCore
import XCTest

/// Relative encoders: the three encodings, sensitivity, clamping, step curves.
final class RelativeEncoderTests: XCTestCase {
    func testEncodingTables() {
        let twos = MIDIControlMode.relativeTwos
        XCTAssertEqual([1, 2, 63, 64, 65, 126, 127].map(twos.steps), [1, 2, 63, -64, -63, -2, -1])
        let sign = MIDIControlMode.relativeSignbit
        XCTAssertEqual([1, 2, 63, 64, 65, 66, 127].map(sign.steps), [1, 2, 63, 0, -1, -2, -63])
        let offset = MIDIControlMode.relativeOffset
        XCTAssertEqual([0, 63, 64, 65, 66, 127].map(offset.steps), [-64, -1, 0, 1, 2, 63])
        XCTAssertEqual(MIDIControlMode.absolute.steps(5), 0)
    }

    /// fx.mix 0…100 %, default 50: one step is 100/127 %.
    func run(_ mode: String, up: Int, down: Int, sensitivity: String = "") throws -> (Float, Float) {
        let p = try MapperProbe(#"{ "map": [ { "cc": 16, "to": "fx.mix", "mode": "\#(mode)"\#(sensitivity) } ] }"#)
        for _ in 0..<10 { p.cc(16, up) }
        let afterUp = try XCTUnwrap(p.value("fx.mix"))
        for _ in 0..<4 { p.cc(16, down) }
        return (afterUp, try XCTUnwrap(p.value("fx.mix")))
    }

    func testEachEncodingMovesFromTheCurrentValue() throws {
        let step: Float = 100 / 127
        for (mode, up, down) in [("relative-twos", 1, 127), ("relative-signbit", 1, 65), ("relative-offset", 65, 63)] {
            let (u, d) = try run(mode, up: up, down: down)
            XCTAssertEqual(u, 50 + 10 * step, accuracy: 1e-3, mode)
            XCTAssertEqual(d, 50 + 6 * step, accuracy: 1e-3, mode)
        }
        // Bigger steps from fast turns: +3 per message.
        let (u, _) = try run("relative-twos", up: 3, down: 125)
        XCTAssertEqual(u, 50 + 30 * step, accuracy: 1e-3)
    }

    func testSensitivityScalesTheStep() throws {
        let (u, d) = try run("relative-twos", up: 1, down: 127, sensitivity: #", "sensitivity": 0.25"#)
        XCTAssertEqual(u, 50 + 2.5 * 100 / 127, accuracy: 1e-3)
        XCTAssertEqual(d, 50 + 1.5 * 100 / 127, accuracy: 1e-3)
    }

    func testClampsAtTheEnds() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 16, "to": "fx.mix", "mode": "relative-offset" } ] }"#)
        for _ in 0..<20 { p.cc(16, 127) }
        XCTAssertEqual(p.value("fx.mix"), 100)
        XCTAssertEqual(p.cc(16, 127), [], "already at the end")
        p.cc(16, 63)
        XCTAssertEqual(try XCTUnwrap(p.value("fx.mix")), 100 - 100 / 127, accuracy: 1e-3, "comes back at once")
    }

    func testNoMotionSendsNothing() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 16, "to": "fx.mix", "mode": "relative-offset" } ] }"#)
        XCTAssertEqual(p.cc(16, 64), [])
    }

    func testSlowTurnsAccumulateAcrossSteps() throws {
        // Four choices: each zone is a quarter of the travel, about 32 steps.
        let p = try MapperProbe(#"{ "map": [ { "cc": 16, "to": "fx.mode", "mode": "relative-twos" } ] }"#)
        var changes: [Float] = []
        for _ in 0..<127 { changes += p.values(p.cc(16, 1), "fx.mode") }
        XCTAssertEqual(changes, [1, 2, 3], "single steps walk through every choice")
    }

    func testContinuesFromAValueSetElsewhere() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 16, "to": "fx.mix", "mode": "relative-twos" } ] }"#)
        p.cc(16, 1)
        p.mapper.noteParameterMoved(try XCTUnwrap(p.address("fx.mix")), to: 10)
        p.cc(16, 1)
        XCTAssertEqual(try XCTUnwrap(p.value("fx.mix")), 10 + 100 / 127, accuracy: 1e-3)
    }

    func testLogCurveStepsAreEqualRatios() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 16, "to": "fx.cutoff", "mode": "relative-twos" } ] }"#)
        var values: [Float] = []
        for _ in 0..<5 { values += p.values(p.cc(16, 1), "fx.cutoff") }
        let ratio = pow(Float(1000), 1 / 127)
        for (a, b) in zip(values, values.dropFirst()) { XCTAssertEqual(b / a, ratio, accuracy: 1e-3) }
    }
}
