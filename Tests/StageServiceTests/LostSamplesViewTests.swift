import StageService
import XCTest

/// Samples lost without an ALSA error show in the status line and the meters, apart from
/// the xruns, only when there are some.
final class LostSamplesViewTests: XCTestCase {
    func testLostFramesShowBesideTheXruns() {
        let r = StatusRecord(rackName: "Monitor", peakIn: 0.5, peakOut: 0.25, load: 0.06, xruns: 1)
        XCTAssertEqual(statusLine(r), "load 6% | xruns 1 | in -6.0 dBFS | out -12.0 dBFS | midi off")
        let lost = r.withLost(frames: 4848, gaps: 2)
        XCTAssertEqual(statusLine(lost), "load 6% | xruns 1 | lost 4848 frames in 2 gaps | in -6.0 dBFS | out -12.0 dBFS | midi off")
        XCTAssertTrue(MeterView(width: 100).lines(lost).contains { $0.hasPrefix("xruns 1 | lost 4848 frames in 2 gaps") },
                      "\(MeterView(width: 100).lines(lost))")
        XCTAssertNotEqual(lost, r)
    }
}
