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

    func testShortenedNamesMatchByEndingAndContent() {
        let delay = ["delayTime", "feedback", "lopassCutoff", "wetDryMix", "sync"]
        XCTAssertEqual(Suggest.hint(for: "time", in: delay), " (did you mean \"delayTime\"?)")
        XCTAssertEqual(Suggest.hint(for: "cutoff", in: delay), " (did you mean \"lopassCutoff\"?)")
        XCTAssertEqual(Suggest.hint(for: "wet", in: delay), " (did you mean \"wetDryMix\"?)")
        XCTAssertEqual(Suggest.hint(for: "DelayTimeMs", in: delay), " (did you mean \"delayTime\"?)")
        let reverb = ["dryWetMix", "gain", "minDelayTime", "maxDelayTime", "decayTimeAt0Hz"]
        XCTAssertEqual(Suggest.hint(for: "time", in: reverb), " (did you mean \"minDelayTime\" or \"maxDelayTime\"?)")
        XCTAssertEqual(Suggest.hint(for: "decay", in: reverb), " (did you mean \"decayTimeAt0Hz\"?)")
        XCTAssertEqual(Suggest.hint(for: "ab", in: ["abc"]), " (did you mean \"abc\"?)")  // a typo, not a part
        XCTAssertEqual(Suggest.hint(for: "xy", in: ["wxyzuv"]), "")  // too short to be a part
        XCTAssertEqual(Suggest.hint(for: "size", in: reverb), "")
    }

    func testHugeWordsGetNoSuggestionQuickly() {
        let huge = String(repeating: "a", count: 200_000)
        XCTAssertEqual(Suggest.hint(for: huge, in: [huge + "b", "gain"]), "")
    }
}
