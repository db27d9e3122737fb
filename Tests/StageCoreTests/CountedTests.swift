import StageCore
import XCTest

/// Counted nouns in messages: "1 switch", "2 switches".
final class CountedTests: XCTestCase {
    func testSingularForOnePluralOtherwise() {
        XCTAssertEqual(counted(1, "switch"), "1 switch")
        XCTAssertEqual(counted(2, "switch"), "2 switches")
        XCTAssertEqual(counted(0, "xrun"), "0 xruns")
        XCTAssertEqual(counted(1, "xrun"), "1 xrun")
        XCTAssertEqual(counted(3, "box"), "3 boxes")
        XCTAssertEqual(counted(5, "unit"), "5 units")
        XCTAssertEqual(counted(2, "child", "children"), "2 children")
    }
}
