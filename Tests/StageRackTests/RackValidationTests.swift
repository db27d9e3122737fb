import Foundation
import StageCore
import StageControl
import StageDrivers
import XCTest

/// Every invalid fixture names the errors it must produce in `// expect: LINE:COL: path: message`
/// comments; each must be reported (message prefix match, so "did you mean" hints may grow).
final class RackValidationTests: XCTestCase {
    func diagnostics(for path: String) -> [RackDiagnostic] {
        do {
            _ = try RackFiles.load(path, registry: Fixtures.registry, options: GraphCompiler.Options())
            return []
        } catch {
            return error.diagnostics
        }
    }

    func testEveryInvalidFixtureReportsItsExpectedErrors() throws {
        let files = Fixtures.files(in: "racks/invalid")
        XCTAssertGreaterThanOrEqual(files.count, 20)
        for file in files {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let expected = text.split(separator: "\n").filter { $0.hasPrefix("// expect: ") }.map { $0.dropFirst(11) }
            XCTAssertFalse(expected.isEmpty, "\(file) has no // expect: line")
            let got = diagnostics(for: file).map { d in
                d.description.hasPrefix(file + ":") ? String(d.description.dropFirst(file.count + 1)) : d.description
            }
            XCTAssertEqual(got.count, expected.count, "\(file): got \(got)")
            for e in expected {
                XCTAssertTrue(got.contains { $0.hasPrefix(e) }, "\(file): expected \"\(e)\" in \(got)")
            }
            for d in diagnostics(for: file) {
                XCTAssertEqual(d.file, file)
                XCTAssertNotNil(d.location, "every error points at a place: \(d)")
            }
        }
    }

    func testValidFixturesAndShippedRacksLoad() throws {
        let racks = Fixtures.files(in: "racks/valid")
            + ((try? FileManager.default.contentsOfDirectory(atPath: Fixtures.repository.appendingPathComponent("racks").path)) ?? [])
            .filter { $0.hasSuffix(".json") }.map { Fixtures.repository.appendingPathComponent("racks/\($0)").path }
        XCTAssertFalse(racks.isEmpty)
        for rack in racks {
            XCTAssertEqual(diagnostics(for: rack).map(\.description), [], rack)
        }
    }

    func testMissingFileIsAClearError() {
        let d = diagnostics(for: "/nonexistent/rack.json")
        XCTAssertEqual(d.map(\.description), ["/nonexistent/rack.json: no such file"])
    }

    func testGarbageNeverCrashes() {
        // Truncations of a valid rack at every position: each gives errors, never a crash.
        let text = """
            { "format": 1, "units": { "mic": { "type": "input" }, "mix": { "type": "mixer", "params": { "gain1": -3 } },
              "out": { "type": "output" } }, "connections": [ "mic -> mix:1", "mix -> out" ],
              "midi": { "map": [ { "cc": 7, "to": "mix.gain1", "min": -40, "max": 6 } ] } }
            """
        let reader = RackReader(registry: Fixtures.registry)
        let chars = Array(text)
        for cut in 0..<chars.count {
            let broken = String(chars[0..<cut])
            XCTAssertThrowsError(try reader.read(text: broken, file: "t.json"))
        }
        XCTAssertNoThrow(try reader.read(text: text, file: "t.json"))
    }
}
