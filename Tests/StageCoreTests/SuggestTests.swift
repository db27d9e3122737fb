import StageCore
import XCTest

final class SuggestTests: XCTestCase {
    func testClosestWord() {
        XCTAssertEqual(Suggest.closest(to: "mixr", in: ["input", "mixer", "gain"]), "mixer")
        XCTAssertEqual(Suggest.closest(to: "dryWetMx", in: ["dryWetMix", "gain"]), "dryWetMix")
        XCTAssertEqual(Suggest.closest(to: "gian", in: ["gain", "pan1"]), "gain")  // transposition
        XCTAssertNil(Suggest.closest(to: "banana", in: ["input", "mixer"]))
        XCTAssertEqual(Suggest.hint(for: "conections", in: ["connections"]), " (did you mean \"connections\"?)")
    }
}
