import StageDrivers
import XCTest

/// The lost-frame detector on synthetic device timestamps: steady streams with drift and
/// jitter lose nothing; a dropped packet and a stalled capture are counted to the frame.
final class LostFrameDetectorTests: XCTestCase {
    /// A device at `rate × (1 + ppm)` read every period, each reading's timestamp jittered
    /// by up to `jitter` seconds; `gaps` maps a period index to frames dropped before it.
    func run(periods: Int, period: Int = 128, ppm: Double, jitter: Double, gaps: [Int: Int] = [:]) -> LostFrameDetector {
        var d = LostFrameDetector(sampleRate: 48000, periodFrames: period)
        var generator = SeededGenerator(seed: 7)
        var deviceFrames = 0  // frames the device's clock has produced
        var position = 0  // frames it delivered
        for k in 0..<periods {
            let dropped = gaps[k] ?? 0
            deviceFrames += period + dropped
            position += period
            let seconds = Double(deviceFrames) / (48000 * (1 + ppm * 1e-6))
            // The timestamp of the position update is exact to the frame the device reports,
            // then jittered (the interrupt's own lateness is in both, so small).
            let t = seconds + Double.random(in: 0...jitter, using: &generator)
            d.observe(nanoseconds: UInt64(1_000_000_000 + t * 1e9), position: position)
        }
        return d
    }

    func testSteadyStreamsWithDriftAndJitterLoseNothing() {
        for ppm in [-100.0, 0, 100] {
            for period in [32, 64, 128, 1024] {
                let d = run(periods: 48000 * 60 / period, period: period, ppm: ppm, jitter: 0.0002)
                XCTAssertEqual(d.lostFrames, 0, "\(ppm) ppm, period \(period)")
            }
        }
    }

    func testADroppedPacketAndAStallAreCounted() {
        // Two USB packets (96 frames) lost at 32-frame periods; a capture that stalled for
        // 100 ms, and a later 300-frame gap, at 128-frame periods.
        let small = run(periods: 2000, period: 32, ppm: 50, jitter: 0.00005, gaps: [100: 96])
        XCTAssertEqual(small.lostFrames, 96, accuracy: 3)
        XCTAssertEqual(small.gaps, 1)
        let d = run(periods: 2000, period: 128, ppm: 50, jitter: 0.0002, gaps: [900: 4800, 1500: 300])
        XCTAssertEqual(d.gaps, 2)
        XCTAssertEqual(d.lostFrames, 5100, accuracy: 12)
    }

    func testARestartIsNotALoss() {
        var d = LostFrameDetector(sampleRate: 48000, periodFrames: 128)
        d.observe(nanoseconds: 1_000_000_000, position: 128)
        d.restart()  // an xrun: the streams start again from 0 a moment later
        d.observe(nanoseconds: 1_500_000_000, position: 128)
        d.observe(nanoseconds: 1_502_666_667, position: 256)
        XCTAssertEqual(d.lostFrames, 0)
    }
}
