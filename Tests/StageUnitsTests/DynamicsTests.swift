import StageCore
import StageTestSupport
import StageUnits
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The `dynamics` unit, by measurement: the static curve (threshold, ratio, knee, head
/// room), attack and release times, the expander's slope, the gate's hysteresis on a
/// decaying note, lookahead latency and the gain-reduction meter.
final class DynamicsTests: XCTestCase {
    let rate = 48000.0

    func harness(_ parameters: [String: Float], lookahead: Double? = nil) throws -> UnitHarness {
        var settings: [String: JSONValue] = [:]
        if let lookahead { settings["lookahead"] = .number(lookahead) }
        // The expander is off unless a test turns it on.
        var p: [String: Float] = ["expansionRatio": 1]
        for (k, v) in parameters { p[k] = v }
        return try UnitHarness(type: DynamicsUnitType(), settings: settings, parameters: p, sampleRate: rate)
    }

    /// The compressor's static curve as the documentation gives it (output level, dB).
    func expectedOutput(_ level: Double, threshold t: Double, ratio r: Double, knee w: Double) -> Double {
        let over = level - t
        if 2 * over < -w { return level }
        if 2 * over >= w { return t + over / r }
        return level + (1 / r - 1) * (over + w / 2) * (over + w / 2) / (2 * w)
    }

    /// A 1 kHz sine whose RMS steps through `levels` (dBFS), `seconds` each.
    func staircase(_ levels: [Double], seconds: Double) -> [Float] {
        let step = Int(seconds * rate)
        var x = [Float]()
        x.reserveCapacity(step * levels.count)
        for (k, l) in levels.enumerated() {
            let amplitude = pow(10, l / 20) * 2.0.squareRoot()
            for i in 0..<step { x.append(Float(amplitude * sin(2 * Double.pi * 1000 * Double(k * step + i) / rate))) }
        }
        return x
    }

    /// The output RMS (dBFS) over the last 100 ms of each step.
    func stepLevels(_ y: [Float], steps: Int, seconds: Double) -> [Double] {
        let step = Int(seconds * rate)
        return (0..<steps).map { k in Double(Measure.decibels(Measure.rms(y[((k + 1) * step - 4800)..<((k + 1) * step)]))) }
    }

    // MARK: Static curve

    func testStaticCurveFollowsThresholdRatioAndKneeWithinHalfADecibel() throws {
        let levels = stride(from: -70.0, through: 0, by: 2).map { $0 }
        for (t, r, w) in [(-30.0, 4.0, 0.0), (-20.0, 3.0, 6.0), (-24.0, 100.0, 10.0), (-10.0, 2.0, 20.0)] {
            let h = try harness(["threshold": Float(t), "ratio": Float(r), "knee": Float(w), "attackTime": 0.005, "releaseTime": 0.05])
            let x = staircase(levels, seconds: 0.4)
            let y = h.render(input: [x], frames: x.count)[0]
            let measured = stepLevels(y, steps: levels.count, seconds: 0.4)
            for (l, m) in zip(levels, measured) {
                let e = expectedOutput(l, threshold: t, ratio: r, knee: w)
                XCTAssertEqual(m, e, accuracy: 0.5, "T \(t) R \(r) knee \(w): input \(l) dB")
            }
        }
    }

    func testHeadRoomStandsInForARatio() throws {
        // Threshold −20, head room 5: a 0 dBFS input comes out at −15 (ratio 4).
        let levels = [-30.0, -10, 0]
        let h = try harness(["threshold": -20, "knee": 0, "ratio": 1, "headRoom": 5, "releaseTime": 0.05])
        let x = staircase(levels, seconds: 0.4)
        let measured = stepLevels(h.render(input: [x], frames: x.count)[0], steps: 3, seconds: 0.4)
        for (l, m) in zip(levels, measured) {
            XCTAssertEqual(m, expectedOutput(l, threshold: -20, ratio: 4, knee: 0), accuracy: 0.5, "input \(l) dB")
        }
    }

    // MARK: Times

    /// The gain change in dB over time, from a DC input (a steady signal whose RMS is its value).
    func gainChange(_ p: [String: Float], from a: Double, to b: Double, seconds: Double) throws -> [Double] {
        let h = try harness(p)
        let n = Int(seconds * rate)
        let x = (0..<(2 * n)).map { Float(pow(10, ($0 < n ? a : b) / 20)) }
        let y = h.render(input: [x], frames: 2 * n)[0]
        return (n..<(2 * n)).map { 20 * log10(Double(y[$0]) / Double(x[$0])) }
    }

    /// Seconds until `g` has gone 63 % of its way from its first to its last value.
    func time63(_ g: [Double], before: Double) -> Double {
        let end = g.last!
        let goal = before + 0.632 * (end - before)
        let i = g.firstIndex { end < before ? $0 <= goal : $0 >= goal } ?? g.count
        return Double(i) / rate
    }

    func testAttackAndReleaseTimesWithinTenPercent() throws {
        for attack in [0.01, 0.03, 0.1] {
            let p: [String: Float] = ["threshold": -40, "ratio": 4, "knee": 0, "attackTime": Float(attack), "releaseTime": 0.5]
            let g = try gainChange(p, from: -50, to: -10, seconds: 1.5)
            XCTAssertEqual(g.last!, -22.5, accuracy: 0.05)
            let t = time63(g, before: 0)
            XCTAssertEqual(t, attack, accuracy: 0.1 * attack, "attack \(attack) s measured \(formatNumber(t)) s")
        }
        for release in [0.1, 0.3, 1.0] {
            let p: [String: Float] = ["threshold": -40, "ratio": 4, "knee": 0, "attackTime": 0.005, "releaseTime": Float(release)]
            let g = try gainChange(p, from: -10, to: -50, seconds: 8 * release)
            XCTAssertEqual(g.last!, 0, accuracy: 0.05)
            let t = time63(g, before: -22.5)
            XCTAssertEqual(t, release, accuracy: 0.1 * release, "release \(release) s measured \(formatNumber(t)) s")
        }
    }

    // MARK: Expander and gate

    func testBelowTheExpansionThresholdTheLevelFallsByTheRatio() throws {
        for ratio in [2.0, 3.0, 10.0] {
            // Loud first (gate open), then down through the threshold (−50; closes below −54).
            let levels = [-20.0, -40, -60, -64]
            let h = try harness([
                "expansionThreshold": -50, "expansionRatio": Float(ratio), "expansionHysteresis": 4, "ratio": 1,
                "attackTime": 0.005, "releaseTime": 0.02,
            ])
            let x = staircase(levels, seconds: 0.5)
            let m = stepLevels(h.render(input: [x], frames: x.count)[0], steps: levels.count, seconds: 0.5)
            XCTAssertEqual(m[0], -20, accuracy: 0.1)
            XCTAssertEqual(m[1], -40, accuracy: 0.1)
            for k in 2..<4 {
                let expected = levels[k] + (levels[k] + 50) * (ratio - 1)
                XCTAssertEqual(m[k], max(expected, levels[k] - 120), accuracy: 0.5, "ratio \(ratio), input \(levels[k]) dB")
            }
        }
    }

    /// A 150 Hz note decaying 10 dB/s from −20 dBFS with a ±2 dB tremolo at 5 Hz: in each
    /// tremolo cycle the level falls 2 dB overall but rises by 3 dB on the way, so it
    /// crosses the threshold back and forth unless the gate has more hysteresis than that. Returns how many times
    /// the gate closed and how many times it opened again.
    func gateTransitions(hysteresis: Float) throws -> (closed: Int, reopened: Int) {
        let h = try harness(["expansionThreshold": -50, "expansionRatio": 20, "expansionHysteresis": hysteresis, "ratio": 1, "attackTime": 0.002, "releaseTime": 0.02])
        let n = Int(5 * rate)
        let x: [Float] = (0..<n).map { i in
            let t = Double(i) / rate
            let db = -20 - 10 * t + 2 * sin(2 * Double.pi * 5 * t)
            return Float(pow(10, db / 20) * 2.0.squareRoot() * sin(2 * Double.pi * 150 * t))
        }
        let y = h.render(input: [x], frames: n)[0]
        var closed = 0, reopened = 0
        var isOpen = true
        let window = 480
        for k in 0..<(n / window) {
            let r = k * window..<(k + 1) * window
            let g = Measure.decibels(Measure.rms(y[r]) / Measure.rms(x[r]))
            // Closed: 30 dB down; open again: back within 10 dB (while closed the expander
            // still follows the tremolo, 20 dB per dB: that is not the gate opening).
            if isOpen && g < -30 {
                isOpen = false
                closed += 1
            } else if !isOpen && g > -10 {
                isOpen = true
                reopened += 1
            }
        }
        return (closed, reopened)
    }

    func testADecayingNoteClosesTheGateOnceWithHysteresis() throws {
        let with = try gateTransitions(hysteresis: 4)
        XCTAssertEqual(with.closed, 1)
        XCTAssertEqual(with.reopened, 0)
        // Without hysteresis the same note makes the gate chatter: the test can tell.
        let without = try gateTransitions(hysteresis: 0)
        XCTAssertGreaterThan(without.reopened, 0)
    }

    // MARK: Lookahead and meter

    func testLookaheadDelaysTheAudioAndIsReportedAsLatency() throws {
        let h = try harness(["threshold": -20], lookahead: 0.005)
        XCTAssertEqual(h.unit.latencyFrames, 240)
        var x = [Float](repeating: 0, count: 1000)
        x[10] = 0.01
        let y = h.render(input: [x], frames: 1000)[0]
        let peak = y.indices.max { abs(y[$0]) < abs(y[$1]) }!
        XCTAssertEqual(peak, 250)
        XCTAssertEqual(try harness([:]).unit.latencyFrames, 0, "lookahead is off by default")
    }

    func testGainReductionMeterShowsTheReduction() throws {
        let h = try harness(["threshold": -30, "ratio": 4, "knee": 0])
        let x = staircase([-10], seconds: 0.5)
        _ = h.render(input: [x], frames: x.count)
        let unit = try XCTUnwrap(h.unit as? DynamicsUnit)
        XCTAssertEqual(Double(unit.gainReduction), 15, accuracy: 0.5)
    }
}
