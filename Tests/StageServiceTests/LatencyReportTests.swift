import StageCore
import StageService
import XCTest

/// `play`'s latency lines: the buffers, the measured interface, and each input's fastest
/// and slowest path to each output.
final class LatencyReportTests: XCTestCase {
    let outputs = [
        PlanOutput(unitID: "out", deviceChannels: [0, 1], latencyFrames: 696,
                   paths: [InputPath(inputID: "mic", fastestFrames: 0, slowestFrames: 696)]),
        PlanOutput(unitID: "ears", deviceChannels: [2, 3], latencyFrames: 0,
                   paths: [InputPath(inputID: "mic", fastestFrames: 0, slowestFrames: 0)]),
    ]

    func testFastestAndSlowestPathToEachOutput() {
        let r = LatencyReport(sampleRate: 48000, periodFrames: 128, periods: 2, hardwareFrames: nil)
        XCTAssertEqual(
            r.summary(slowestUnitFrames: 696),
            "latency 19.8 ms: buffering 5.3 (128×2) + units 14.5 (slowest path); the interface's own part is not measured (stagerack latency --write)")
        XCTAssertEqual(r.pathLines(outputs), [
            "latency mic → out (ch 1-2): fastest 5.3 ms, slowest 19.8 ms",
            "latency mic → ears (ch 3-4): 5.3 ms",
        ])
    }

    func testMeasuredInterfaceMakesItTheTrueRoundTrip() {
        let r = LatencyReport(sampleRate: 48000, periodFrames: 64, periods: 2, hardwareFrames: 240)
        XCTAssertEqual(r.fixedFrames, 368)
        XCTAssertEqual(r.summary(slowestUnitFrames: 0), "latency 7.7 ms round trip: buffering 2.7 (64×2) + interface 5 (measured) + units 0 (slowest path)")
        XCTAssertEqual(r.pathLines(Array(outputs.suffix(1))), ["latency mic → ears (ch 3-4): 7.7 ms round trip"])
    }
}
