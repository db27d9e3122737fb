import StageCore
import XCTest

/// "Save" from the page edits a rack file's text: values replaced where they are written,
/// added to `params` (made when missing), a snapshot added; comments, layout and every
/// other byte stay as they were.
final class RackTextEditorSaveTests: XCTestCase {
    static let rack = """
        { "format": 2, "name": "t",
          // keep me
          "units": {
            "vox": { "type": "gain", "params": { "gain": -6 } },  // and me
            "verb": { "type": "reverb" },
            "out": { "type": "output" }
          },
          "connections": [ "vox -> verb -> out" ]
        }
        """

    func testValuesAreReplacedWhereWrittenAndAddedElsewhere() throws {
        let out = try RackTextEditor.settingParameters(
            [("vox", "gain", "-3.5"), ("verb", "dryWetMix", "42"), ("verb", "gain", "1")], in: Self.rack)
        XCTAssertTrue(out.contains(#""vox": { "type": "gain", "params": { "gain": -3.5 } },  // and me"#), out)
        XCTAssertTrue(out.contains(#""verb": { "type": "reverb", "params": { "dryWetMix": 42, "gain": 1 } },"#), out)
        XCTAssertTrue(out.contains("// keep me"))
        // Nothing else moved: the lines that were not edited are the same.
        let before = Self.rack.split(separator: "\n", omittingEmptySubsequences: false)
        let after = out.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(before.count, after.count)
        XCTAssertEqual(zip(before, after).filter { $0 != $1 }.count, 2, out)
    }

    func testAStringValueIsReplacedWhole() throws {
        let text = #"{ "units": { "h": { "type": "harmony", "params": { "mode": "notes", "x": 1 } } } }"#
        let out = try RackTextEditor.settingParameters([("h", "mode", #""chord""#)], in: text)
        XCTAssertEqual(out, #"{ "units": { "h": { "type": "harmony", "params": { "mode": "chord", "x": 1 } } } }"#)
    }

    func testASnapshotIsAddedAndANameTakenIsRefused() throws {
        let out = try RackTextEditor.addingSnapshot("page \"1\"", values: [("vox.gain", "-3"), ("verb.dryWetMix", "80")], in: Self.rack)
        XCTAssertTrue(out.contains(#""snapshots": { "page \"1\"": { "params": { "vox.gain": -3, "verb.dryWetMix": 80 } } }"#), out)
        let twice = try RackTextEditor.addingSnapshot("b", values: [("vox.gain", "0")], in: out)
        XCTAssertTrue(twice.contains(#""b": { "params": { "vox.gain": 0 } }"#), twice)
        XCTAssertThrowsError(try RackTextEditor.addingSnapshot("b", values: [], in: twice))
    }

    func testAMissingUnitIsAnError() {
        XCTAssertThrowsError(try RackTextEditor.settingParameters([("nope", "gain", "1")], in: Self.rack))
        XCTAssertThrowsError(try RackTextEditor.settingParameters([("vox", "gain", "1")], in: "[1, 2]"))
    }
}
