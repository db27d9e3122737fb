import StageCore
import StageTestSupport
import XCTest

final class JSONParserTests: XCTestCase {
    func testValuesAndLocations() throws {
        let node = try JSONParser.parse("{\n  \"a\": [1, -2.5e1, true, null],\n  'b': 'x\\ny',\n  c: 0x10,\n}")
        let members = try XCTUnwrap(node.members)
        XCTAssertEqual(members.map(\.key), ["a", "b", "c"])
        XCTAssertEqual(members[0].keyLocation, SourceLocation(line: 2, column: 3))
        XCTAssertEqual(members[0].value.elements?.map(\.value), [.number(1), .number(-25), .bool(true), .null])
        XCTAssertEqual(members[0].value.elements?[1].location, SourceLocation(line: 2, column: 12))
        XCTAssertEqual(members[1].value.string, "x\ny")
        XCTAssertEqual(members[2].value.number, 16)
    }

    func testColumnsCountCharactersNotBytes() throws {
        let node = try JSONParser.parse("{ \"é…\": 1, \"x\": 2 }")
        XCTAssertEqual(node["x"]?.keyLocation, SourceLocation(line: 1, column: 12))
    }

    func testCommentsAndTrailingCommas() throws {
        let node = try JSONParser.parse("// head\n[1, /* two */ 2, ] // tail")
        XCTAssertEqual(node.elements?.count, 2)
    }

    func testUnicodeEscapes() throws {
        XCTAssertEqual(try JSONParser.parse("\"\\u00e9\\ud83c\\udfb5\"").string, "é🎵")
    }

    func testErrorsCarryPositions() {
        let cases: [(String, SourceLocation, String)] = [
            ("{\"a\": 1 \"b\": 2}", SourceLocation(line: 1, column: 8), "missing ',' after the value of \"a\""),
            ("{\"a\": 1 ]", SourceLocation(line: 1, column: 9), "expected ',' or '}'"),
            ("[1, 2\n  3]", SourceLocation(line: 1, column: 6), "missing ',' after item 2 of the list (the next one starts at 2:3)"),
            ("{\n  # note\n}", SourceLocation(line: 2, column: 3), "use // (or /* */)"),
            ("\"\\ud800\\u0041\"", SourceLocation(line: 1, column: 3), "high surrogate needs a low one"),
            ("[0x" + String(repeating: "f", count: 300) + "]", SourceLocation(line: 1, column: 2), "too large"),
            ("[-1e400]", SourceLocation(line: 1, column: 2), "too large a number"),
            ("[1, 2", SourceLocation(line: 1, column: 6), "end of file"),
            ("{\n  \"a\": tru }", SourceLocation(line: 2, column: 8), "'tru'"),
            ("\"abc", SourceLocation(line: 1, column: 1), "never closed"),
            ("1 2", SourceLocation(line: 1, column: 3), "after the end"),
            ("{\"a\": 1, \"a\": 2}", SourceLocation(line: 1, column: 10), "appears twice"),
            ("/* open", SourceLocation(line: 1, column: 1), "never closed"),
            ("", SourceLocation(line: 1, column: 1), "file ended"),
        ]
        for (text, location, fragment) in cases {
            do {
                _ = try JSONParser.parse(text)
                XCTFail("\(text) parsed")
            } catch {
                XCTAssertEqual(error.location, location, text)
                XCTAssertTrue(error.message.contains(fragment), "\(text): \(error.message)")
            }
        }
    }

    func testNestingIsBoundedWithAClearError() throws {
        let ok = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        XCTAssertNoThrow(try JSONParser.parse(ok))
        do {
            _ = try JSONParser.parse("[" + ok + "]")
            XCTFail("201 levels parsed")
        } catch {
            XCTAssertEqual(error.location, SourceLocation(line: 1, column: JSONParser.maxDepth + 1))
            XCTAssertTrue(error.message.contains("nested more than 200 deep"), error.message)
        }
    }

    /// Duplicate keys are found in linear time: a 16× larger object takes far less than the
    /// 256× a pairwise check would (a ratio of the best thread-CPU times of interleaved runs,
    /// measured in the same run, so a busy machine does not move it).
    func testHugeObjectsParseInLinearTime() throws {
        let sizes = [5000, 80_000]
        let texts = sizes.map { keys in "{" + (0..<keys).map { "\"k\($0)\": \($0)" }.joined(separator: ",") + "}" }
        _ = try JSONParser.parse(texts[0])  // warm up
        let best = try ScalingMeasure.bestSeconds(cases: 2) { i in
            XCTAssertEqual(try JSONParser.parse(texts[i]).members?.count, sizes[i])
        }
        XCTAssertLessThan(best[1] / best[0], 64, "5,000 keys \(best[0]) s, 80,000 keys \(best[1]) s")
    }

    func testDeepNestingIsAnErrorNotACrash() {
        let text = String(repeating: "[", count: 10_000)
        XCTAssertThrowsError(try JSONParser.parse(text))
    }
}
