import StageService
import XCTest

/// How a player's transport reads in `--status` and `--meters`.
final class TrackReadingTests: XCTestCase {
    func testPositionTimeLeftAndALateDisk() {
        XCTAssertEqual(TrackReading(unit: "track", state: "playing", position: 83.9, remaining: 124.2, underruns: 0).text, "track playing 1:23 -2:05")
        XCTAssertEqual(TrackReading(unit: "track", state: "stopped", position: 0, remaining: nil, underruns: 3).text, "track stopped 0:00 (disk late 3)")
        var r = StatusRecord(rackName: "KTV", peakIn: nil, peakOut: 0.5, load: 0.1)
        r.tracks = ["track playing 0:07 -0:01"]
        XCTAssertTrue(statusLine(r).hasSuffix(" | track playing 0:07 -0:01"), statusLine(r))
        XCTAssertTrue(MeterView(width: 80).lines(r, held: .init(peakIn: nil, peakOut: 0.5, load: 0.1)).last!.contains("track playing 0:07"))
    }
}
