import StageCore
import XCTest

final class ConnectionSyntaxTests: XCTestCase {
    func testChainsAndBuses() throws {
        let links = try ConnectionSyntax.parse("mic -> pitch -> mix:2", at: SourceLocation(line: 3, column: 10)).get()
        XCTAssertEqual(links.count, 2)
        XCTAssertEqual(links[0].from.unit, "mic")
        XCTAssertEqual(links[0].to, Endpoint(unit: "pitch", bus: 1, location: SourceLocation(line: 3, column: 18)))
        XCTAssertEqual(links[1].from, Endpoint(unit: "pitch", bus: 1, location: SourceLocation(line: 3, column: 18)))
        XCTAssertEqual(links[1].to.bus, 2)
        XCTAssertEqual(links[1].to.location, SourceLocation(line: 3, column: 27))
    }

    func testCompactSpacing() throws {
        let links = try ConnectionSyntax.parse("a->b:3").get()
        XCTAssertEqual(links.map(\.to.bus), [3])
    }

    func testErrors() {
        for bad in ["mic", "mic ->", "-> out", "mic -> mix:0", "mic -> mix:x", "mic -> a.b", "a -> b:1:2"] {
            if case .success = ConnectionSyntax.parse(bad) { XCTFail("\(bad) accepted") }
        }
    }
}
