import StageCore
import StageTestSupport
import StageUnits
import XCTest

/// The looper, measured: a phrase plays back sample-exact at the loop's length, an overdub
/// sums, undo and redo restore layers exactly, no click at the seam or on stop, and the
/// one-button cycle follows its state table.
final class LooperTests: XCTestCase {
    enum C: Int { case record, overdub, play, stop, undo, redo, clear, cycle }
    let seam = 240  // 5 ms at 48 kHz

    func harness(dry: Float = -96, maxLength: Double? = nil) throws -> UnitHarness {
        var settings: [String: JSONValue] = [:]
        if let maxLength { settings["maxLength"] = .number(maxLength) }
        return try UnitHarness(type: LooperUnitType(), settings: settings, parameters: ["dry": dry])
    }

    func press(_ h: UnitHarness, _ c: C, _ frame: Int) { h.send(UnitCommand.message(c.rawValue, pressed: true), atFrame: Int64(frame)) }
    func release(_ h: UnitHarness, _ c: C, _ frame: Int) { h.send(UnitCommand.message(c.rawValue, pressed: false), atFrame: Int64(frame)) }

    func noise(_ n: Int, seed: UInt32, level: Float) -> [Float] {
        var s = seed
        return (0..<n).map { _ in
            s = s &* 1_664_525 &+ 1_013_904_223
            return level * (Float(s >> 8) / Float(1 << 24) - 0.5)
        }
    }

    func state(_ h: UnitHarness) -> String { (h.unit as! UnitTransport).transportState }

    /// Asserts `got` equals `want` sample for sample; on failure says where and by how much.
    func assertSame(_ got: [Float], _ want: [Float], _ what: String, line: UInt = #line) {
        XCTAssertEqual(got.count, want.count, what, line: line)
        guard got.count == want.count, let first = got.indices.first(where: { got[$0] != want[$0] }) else { return }
        let worst = zip(got, want).map { abs($0 - $1) }.max()!
        XCTFail("\(what): first difference at \(first) (\(got[first]) vs \(want[first])), worst \(worst)", line: line)
    }

    /// Record P, play it three times, overdub Q over one pass, then undo and redo.
    func testPhraseIsSampleExactOverdubSumsUndoAndRedoRestore() throws {
        let h = try harness()
        let length = 24000
        let start = 1000
        let close = start + length
        let p = noise(length, seed: 1, level: 0.5)
        let q = noise(length, seed: 2, level: 0.3)
        var input = [Float](repeating: 0, count: close + 6 * length)
        for i in 0..<length { input[start + i] = p[i] }
        for i in 0..<length { input[close + 2 * length + i] = q[i] }  // overdubbed over pass 3
        press(h, .record, start)
        press(h, .record, close)
        press(h, .overdub, close + 2 * length)
        press(h, .overdub, close + 3 * length)
        press(h, .undo, close + 4 * length)
        press(h, .redo, close + 5 * length)
        let out = h.render(input: [input], frames: input.count, blockSize: 100)[0]
        XCTAssertEqual((h.unit as! LooperUnit).loopFrames, length)
        // The loop as played: P, with its first 5 ms faded in (what followed the close, here
        // silence, is folded into them: the seam).
        let loop = (0..<length).map { i in i < seam ? p[i] * (Float(i) / Float(seam)) : p[i] }
        for pass in 0..<2 {
            let got = Array(out[(close + pass * length)..<(close + (pass + 1) * length)])
            assertSame(got, loop, "pass \(pass + 1) is not the phrase")
        }
        let summed = (0..<length).map { loop[$0] + q[$0] }
        assertSame(Array(out[(close + 2 * length)..<(close + 3 * length)]), summed, "the overdub pass")
        assertSame(Array(out[(close + 3 * length)..<(close + 4 * length)]), summed, "the overdubbed loop")
        assertSame(Array(out[(close + 4 * length)..<(close + 5 * length)]), loop, "undo does not restore the first layer")
        assertSame(Array(out[(close + 5 * length)..<(close + 6 * length)]), summed, "redo does not restore the overdub")
        XCTAssertEqual(Measure.peak(Array(out[0..<close])), 0, "the loop sounds while recording (dry is off)")
    }

    /// A continuous tone recorded for a length that is not a whole number of its periods:
    /// the seam (crossfaded with what followed the close) and the stop (a 10 ms fade) have
    /// no step beyond the tone's own.
    func testNoClickAtTheSeamOrOnStop() throws {
        let h = try harness()
        let frames = 48000 * 4
        let tone = (0..<frames).map { 0.5 * sinf(2 * .pi * 441.3 * Float($0) / 48000) }
        let length = 30011
        press(h, .record, 500)
        press(h, .record, 500 + length)
        press(h, .stop, 500 + length + 2 * length + 7000)
        let out = h.render(input: [tone], frames: frames, blockSize: 64)[0]
        let own = zip(tone.dropFirst(), tone).map { abs($0 - $1) }.max()!
        func step(_ r: Range<Int>) -> Float { r.dropFirst().map { abs(out[$0] - out[$0 - 1]) }.max()! }
        let close = 500 + length
        let seams = [close, close + length, close + 2 * length]
        for s in seams {
            let worst = step((s - 300)..<(s + 600))
            XCTAssertLessThan(worst, own * 1.5, "a click at the seam at \(s)")
        }
        let stop = close + 2 * length + 7000
        let worstStop = step((stop - 100)..<(stop + 1000))
        print("looper: tone's own step \(own), seams \(seams.map { step(($0 - 300)..<($0 + 600)) }), stop \(worstStop)")
        XCTAssertLessThan(worstStop, own * 1.5, "a click on stop")
        XCTAssertEqual(Measure.peak(Array(out[(stop + 480)...])), 0, "the loop goes on after stop")
    }

    /// The one-button cycle: press records, press plays, press overdubs, press plays, a
    /// double press stops, play resumes, a 1 s hold clears.
    func testOneButtonCycleFollowsItsStateTable() throws {
        let h = try harness()
        let input = noise(48000 * 4, seed: 3, level: 0.2)
        let presses = [1000, 25000, 50000, 74000, 98000, 98000 + 9600]  // the last two: a double press
        for f in presses {
            press(h, .cycle, f)
            release(h, .cycle, f + 200)
        }
        var states: [String] = []
        var frame = 0
        for f in presses {
            let until = f + 1000  // after the 10 ms fade of a stop
            _ = h.render(input: [Array(input[frame..<until])], frames: until - frame, blockSize: 100)
            frame = until
            states.append(state(h))
        }
        XCTAssertEqual(states, ["recording", "playing", "overdubbing", "playing", "overdubbing", "stopped"])
        // Press again: plays; 0.4 s later press and hold it a second: clears.
        press(h, .cycle, frame + 10)
        _ = h.render(frames: 200, blockSize: 100)
        XCTAssertEqual(state(h), "playing")
        frame += 200
        press(h, .cycle, frame + 20000)
        _ = h.render(frames: 20000 + 48000 + 1000, blockSize: 100)
        XCTAssertEqual(state(h), "empty", "a 1 s hold clears")
    }

    /// Recording past `maxLength` closes the loop at the preallocated end.
    func testALoopLongerThanTheMemoryClosesAtTheEnd() throws {
        let h = try harness(maxLength: 1)
        press(h, .record, 0)
        _ = h.render(input: [noise(48000 * 2, seed: 4, level: 0.2)], frames: 48000 * 2, blockSize: 256)
        XCTAssertEqual((h.unit as! LooperUnit).loopFrames, 48000)
        XCTAssertEqual(state(h), "playing")
    }
}
