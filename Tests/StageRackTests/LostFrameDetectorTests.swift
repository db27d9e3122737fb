import StageDrivers
import StageTestSupport
import XCTest

/// The lost-frame detector on synthetic device timestamps: steady streams with drift,
/// wake-up jitter and positions that move in steps lose nothing; a dropped packet and a
/// stalled capture are counted to the frame.
final class LostFrameDetectorTests: XCTestCase {
    /// A device at `48 kHz × (1 + ppm)` whose position moves in steps of `step` frames
    /// (a USB packet, a timer tick), read once a period with up to `jitter` seconds of
    /// wake-up lateness; `gaps` maps a time (s) to frames dropped then.
    func run(seconds: Double, period: Int, ppm: Double, step: Int, jitter: Double, gaps: [Double: Int] = [:]) -> LostFrameDetector {
        var d = LostFrameDetector(sampleRate: 48000, periodFrames: period)
        var generator = SeededGenerator(seed: 7)
        let rate = 48000 * (1 + ppm * 1e-6)
        let periods = Int(seconds * 48000) / period
        for k in 1...periods {
            let t = Double(k * period) / 48000 + Double.random(in: 0...jitter, using: &generator)
            let made = Int(t * rate)
            let dropped = gaps.filter { $0.key <= t }.values.reduce(0, +)
            let position = (made / step) * step - dropped
            d.observe(nanoseconds: UInt64(1_000_000_000 + t * 1e9), position: position)
        }
        return d
    }

    func testSteadyStreamsWithDriftJitterAndSteppedPositionsLoseNothing() {
        for ppm in [-100.0, 0, 100] {
            for (period, step) in [(32, 48), (64, 48), (128, 48), (256, 192), (1024, 192)] {
                let d = run(seconds: 120, period: period, ppm: ppm, step: step, jitter: 0.0005)
                XCTAssertEqual(d.lostFrames, 0, "\(ppm) ppm, period \(period), steps of \(step)")
            }
        }
    }

    func testADroppedPacketAndAStallAreCounted() {
        // Two USB packets (96 frames) lost at 32-frame periods.
        let small = run(seconds: 10, period: 32, ppm: 50, step: 48, jitter: 0.0003, gaps: [3.01: 96])
        XCTAssertEqual(Double(small.lostFrames), 96, accuracy: 6)  // the smallest lag of a window is known to a few frames
        XCTAssertEqual(small.gaps, 1)
        // A capture that stalled for 100 ms, then a 300-frame gap, at 128-frame periods.
        let d = run(seconds: 10, period: 128, ppm: -80, step: 48, jitter: 0.0005, gaps: [2.5: 4800, 7.3: 300])
        XCTAssertEqual(d.gaps, 2)
        XCTAssertEqual(Double(d.lostFrames), 5100, accuracy: 4)
    }

    func testARestartIsNotALoss() {
        var d = LostFrameDetector(sampleRate: 48000, periodFrames: 128)
        for k in 1...100 { d.observe(nanoseconds: UInt64(k) * 2_666_667, position: k * 128) }
        d.restart()  // an xrun: the streams start again from 0 a moment later
        for k in 1...100 { d.observe(nanoseconds: 500_000_000 + UInt64(k) * 2_666_667, position: k * 128) }
        XCTAssertEqual(d.lostFrames, 0)
    }
}
