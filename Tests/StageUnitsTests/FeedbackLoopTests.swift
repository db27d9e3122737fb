import Foundation
import StageCore
import StageTestSupport
import StageUnits
import XCTest

/// The `feedback` unit in a closed loop (`FeedbackLoop`): its output goes back into its
/// input through a room (a delay of 3–9 ms, a speaker band and three resonances; three
/// rooms), excited by a little noise (−50 dBFS). Measured: the gain before feedback with
/// and without the unit (goal: 6 dB more with it), and a howl as the gain is pushed past
/// the point where the loop howls without the unit (goal: a notch within 100 ms, and the
/// level never 6 dB over where it was).
final class FeedbackLoopTests: XCTestCase {
    let sr = 48000.0

    /// RMS in dB of `x[from..<to]`.
    func level(_ x: [Float], _ from: Int, _ to: Int) -> Double {
        Double(Measure.decibels(Measure.rms(x[max(0, from)..<min(x.count, to)])))
    }

    /// Raises the loop gain 1 dB every 2 s from 6 dB under the room's critical gain; returns
    /// the highest gain (dB over the critical one) whose last half second is stable: no
    /// more than 10 dB over the first step's level and not growing (under 2 dB over the
    /// half second before).
    func gainBeforeFeedback(_ room: FeedbackRoom, unit: Bool) throws -> Double {
        let critical = room.criticalGain().dB
        let loop = try FeedbackLoop(room: room, unit: unit)
        let step = Int(2 * sr), half = Int(0.5 * sr)
        var reference: Double?
        var stable = -7.0
        for k in 0...20 {
            let over = Double(k) - 6
            let out = loop.run(frames: step, gainDB: { _ in critical + over })
            let last = level(out, step - half, step), before = level(out, step - 2 * half, step - half)
            let ref = reference ?? last
            reference = ref
            if last > ref + 10 || last > before + 2 { break }
            stable = over
        }
        return stable
    }

    func testGainBeforeFeedbackIsAtLeast6dBHigherWithTheUnit() throws {
        var report: [String] = []
        for room in FeedbackRoom.rooms {
            let without = try gainBeforeFeedback(room, unit: false)
            let with = try gainBeforeFeedback(room, unit: true)
            let c = room.criticalGain()
            report.append("\(room.name) (critical \(String(format: "%.1f", c.dB)) dB at \(Int(c.hz)) Hz): stable up to \(without) dB without, \(with) dB with the unit: +\(with - without) dB")
            XCTAssertGreaterThanOrEqual(with - without, 6, "\(room.name): gain before feedback")
            XCTAssertLessThanOrEqual(without, 0, "\(room.name): without the unit the loop must howl at its critical gain")
        }
        print("feedback gain before feedback: " + report.joined(separator: "; "))
    }

    /// The fader pushed at 2 dB/s from 6 dB under the critical gain to 4 dB over it. The
    /// howl starts when the gain passes the critical gain: the first notch must come no later
    /// than 100 ms after, and the level (50 ms windows) never 6 dB over the 200 ms before.
    /// Without the unit the same push must make the level grow by 20 dB (else the test
    /// would prove nothing).
    func testHowlIsCaughtWithin100msAndNever6dBOver() throws {
        var report: [String] = []
        for room in FeedbackRoom.rooms {
            let critical = room.criticalGain().dB
            let hold = Int(2 * sr), crossing = hold + Int(3 * sr), end = crossing + Int(3 * sr)
            func gain(_ t: Int) -> Double { critical - 6 + min(10, max(0, Double(t - hold) / sr * 2)) }
            var firstNotch: Int?
            let loop = try FeedbackLoop(room: room, unit: true)
            let unit = try XCTUnwrap(loop.unit)
            let out = loop.run(frames: end, gainDB: gain) { t in
                if firstNotch == nil && !unit.notchReadings.isEmpty { firstNotch = t }
            }
            let bare = try FeedbackLoop(room: room, unit: false).run(frames: end, gainDB: gain)
            let window = Int(0.05 * sr)
            let start = level(out, crossing - Int(0.2 * sr), crossing)
            /// The worst 50 ms window after the crossing (dB over the 200 ms before) and when.
            func worst(_ x: [Float]) -> (rise: Double, at: Int) {
                let before = level(x, crossing - Int(0.2 * sr), crossing)
                var high = (-240.0, crossing)
                var t = crossing
                while t + window <= end {
                    let l = level(x, t, t + window) - before
                    if l > high.0 { high = (l, t) }
                    t += window
                }
                return high
            }
            // The howl becomes audible without the unit: its first window 3 dB over the level before.
            var audible = crossing
            while audible + window <= end && level(bare, audible, audible + window) < level(bare, crossing - Int(0.2 * sr), crossing) + 3 {
                audible += window
            }
            let rise = worst(out), bareRise = worst(bare)
            let caught = try XCTUnwrap(firstNotch, "\(room.name): no notch at all")
            let ms = Double(caught - crossing) / sr * 1000, afterAudible = Double(caught - audible) / sr * 1000
            let notches = unit.notchReadings.map { "\(Int($0.hz)) Hz -\(Int($0.depth)) dB" }.joined(separator: ", ")
            let audibleMs: Double = Double(audible - crossing) / sr * 1000
            let riseAt: Double = Double(rise.at - crossing) / sr
            let when: String = "first notch \(String(format: "%.0f", ms)) ms after the critical gain"
            let heard: String = "the howl audible without the unit \(String(format: "%.0f", audibleMs)) ms after it: caught \(String(format: "%.0f", afterAudible)) ms after that"
            let grew: String = "worst rise \(String(format: "%+.1f", rise.rise)) dB at \(String(format: "%.2f", riseAt)) s"
            let bareText: String = "without the unit \(String(format: "%+.1f", bareRise.rise)) dB; level before \(String(format: "%.1f", start)) dBFS"
            report.append("\(room.name): \(when) (\(heard)), \(grew) (\(bareText)); notches \(notches)")
            XCTAssertLessThanOrEqual(afterAudible, 100, "\(room.name): caught late")
            XCTAssertLessThanOrEqual(rise.rise, 6, "\(room.name): howl grew")
            XCTAssertGreaterThan(bareRise.rise, 20, "\(room.name): without the unit the push must howl")
        }
        print("feedback howl: " + report.joined(separator: "; "))
    }
}
