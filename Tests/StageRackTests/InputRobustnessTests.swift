import Foundation
import StageCore
import StageControl
import StageDrivers
import StageSynth
import StageTestSupport
import XCTest

/// Rack files must never crash the program: huge, tiny, negative-zero and non-finite
/// numbers in every setting and parameter of every unit type, in MIDI mappings,
/// snapshots, io and setlists; errors are located, sorted and reported once per cause.
final class InputRobustnessTests: XCTestCase {
    let reader = RackReader(registry: Fixtures.registry)

    func testNumbersFormatWithoutTrapping() {
        XCTAssertEqual(formatNumber(-1e308), "-1e+308")
        XCTAssertEqual(formatNumber(1e308 as Double), "1e+308")
        XCTAssertEqual(formatNumber(9.2233720368547758e18), "9.223e+18")
        XCTAssertEqual(formatNumber(1e15 as Double), "1e+15")
        XCTAssertEqual(formatNumber(999_999_999_999_999 as Double), "999999999999999")
        XCTAssertEqual(formatNumber(0.0001 as Double), "1e-4")
        XCTAssertEqual(formatNumber(-2.5e-300 as Double), "-2.5e-300")
        XCTAssertEqual(formatNumber(-0.0 as Double), "0")
        XCTAssertEqual(formatNumber(0.35 as Double), "0.35")
        XCTAssertEqual(formatNumber(Float.greatestFiniteMagnitude), "3.403e+38")
        XCTAssertEqual(formatNumber(Double.nan), "nan")
    }

    /// Every numeric setting, parameter, mapping, snapshot, io and tempo field of every
    /// unit type, with values that once trapped (Float/Int conversions, ranges, overflow).
    func testExtremeNumbersEverywhereAreErrorsOrValuesNeverCrashes() throws {
        let values = [
            "1e308", "-1e308", "1e-320", "-1e-320", "-0", "9223372036854775807", "9223372036854775808",
            "-9223372036854775809", "3.5e38", "-3.5e38", "1e-45", "0x" + String(repeating: "f", count: 40), "0.5",
        ]
        let registry = Fixtures.registry
        var racks: [String] = []
        for type in registry.types where type.name != "monoPass" {
            let params = type.parameters(UnitSettings()).map(\.id)
            for v in values {
                for p in params {
                    racks.append(rack(#"{ "type": "\#(type.name)", "params": { "\#(p)": \#(v) } }"#))
                    racks.append(
                        rack(
                            #"{ "type": "\#(type.name)" }"#,
                            #""midi": { "map": [ { "cc": 7, "to": "u.\#(p)", "min": \#(v) }, { "cc": 8, "to": "u.\#(p)", "max": \#(v), "curve": "log" }, { "cc": 9, "to": "u.\#(p)", "curve": [ \#(v), 0 ] } ] }, "snapshots": { "s": { "program": 1, "params": { "u.\#(p)": \#(v) } } }"#))
                }
                for s in type.settings {
                    racks.append(rack(#"{ "type": "\#(type.name)", "\#(s.key)": \#(v) }"#))
                    racks.append(rack(#"{ "type": "\#(type.name)", "\#(s.key)": \#(v) }"#, format: "2"))
                    racks.append(rack(#"{ "type": "\#(type.name)", "\#(s.key)": \#(v) }"#, #""midi": { "map": [ { "cc": 1, "to": "u.gain1" } ] }"#))
                }
            }
        }
        for v in values {
            racks.append(rack(#"{ "type": "gain" }"#, #""tempo": \#(v), "io": { "sampleRate": \#(v), "period": \#(v), "periods": \#(v) }"#))
            racks.append(rack(#"{ "type": "gain" }"#, format: v))
            for key in ["cc", "nrpn", "rpn", "note", "channel"] {
                racks.append(rack(#"{ "type": "gain" }"#, #""midi": { "programChannel": \#(v), "map": [ { "\#(key)": \#(v), "to": "u.gain" } ] }"#))
            }
            racks.append(rack(#"{ "type": "gain" }"#, #""midi": { "map": [ { "cc": 3, "mode": "relative-twos", "sensitivity": \#(v), "to": "u.gain" } ] }"#))
            racks.append(rack(#"{ "type": "gain" }"#, #""snapshots": { "s": { "program": \#(v), "morph": \#(v), "params": {} } }"#))
            let setlist = #"{ "format": 1, "songs": [ { "rack": "a.json", "program": \#(v), "bank": \#(v) } ] }"#
            XCTAssertThrowsError(try SetlistReader.read(text: setlist, file: "s.json"), v)
        }
        for keys in ["C99999999999999999999..C4", "C#-99999999999999..C4", "C" + String(repeating: "#", count: 1000) + "4", "0..9223372036854775808"] {
            racks.append(rack(#"{ "type": "synth", "keys": "\#(keys)" }"#))
        }
        XCTAssertGreaterThan(racks.count, 500)
        var read = 0
        for text in racks {
            // Reading, the graph check and the messages: each either works or says why.
            if let r = try? reader.read(text: text, file: "t.json") {
                read += 1
                _ = GraphCompiler(registry: registry).check(r).map(\.description)
            }
        }
        XCTAssertGreaterThan(read, 0)
    }

    /// The ends of every range are inside it, also where a float cannot hold the end
    /// exactly (0.001 s, 0.0001 s), and just beyond them is outside.
    func testRangeEndsAreInside() throws {
        for type in Fixtures.registry.types {
            // Required text settings (the player's file) get a value: reading opens no file.
            let required = type.settings.filter { $0.required && $0.kind == .string }.map { #""\#($0.key)": "x", "# }.joined()
            for spec in type.parameters(UnitSettings()) where spec.unit != .choice && spec.unit != .boolean {
                for (v, ok) in [(Double(spec.range.lowerBound), true), (Double(spec.range.upperBound), true),
                                (Double(spec.range.upperBound) * 1.01 + 0.01, false)] {
                    // Written as the shortest decimal, as a person would.
                    let text = rack(#"{ "type": "\#(type.name)", \#(required)"params": { "\#(spec.id)": \#(Float(v)) } }"#)
                    if ok {
                        XCTAssertNoThrow(try reader.read(text: text), "\(type.name).\(spec.id) = \(Float(v))")
                    } else {
                        XCTAssertThrowsError(try reader.read(text: text), "\(type.name).\(spec.id) = \(Float(v))")
                    }
                }
            }
        }
    }

    private func rack(_ unit: String, _ extra: String = "", format: String = "1") -> String {
        #"{ "format": \#(format), "units": { "mic": { "type": "input" }, "u": \#(unit), "m": { "type": "mixer" }, "out": { "type": "output" } }, "connections": [ "mic -> u -> m:1", "m -> out" ]\#(extra.isEmpty ? "" : ", " + extra) }"#
    }

    func testHugeStringsAndListsAreReadInReasonableTime() throws {
        let longName = String(repeating: "x", count: 1_000_000)
        XCTAssertThrowsError(try reader.read(text: #"{ "format": 1, "units": { "\#(longName)": { "type": "gian" } } }"#))
        XCTAssertThrowsError(
            try reader.read(text: #"{ "format": 1, "units": { "u": { "type": "\#(longName)" } }, "midi": { "map": [ { "cc": 1, "to": "\#(longName).\#(longName)" } ] } }"#))
        // Units in a chain and as many mappings: 8× the rack takes about 8× the time (the
        // best thread-CPU times of interleaved runs, a ratio measured in the same run; the
        // pairwise lookups it replaced took 64×).
        let sizes = [2500, 20_000]
        let texts = sizes.map(rackText(units:))
        try readAndCheck(texts[0], units: sizes[0])  // warm up
        let best = try ScalingMeasure.bestSeconds(cases: 2, rounds: 3) { i in try readAndCheck(texts[i], units: sizes[i]) }
        XCTAssertLessThan(best[1] / best[0], 24, "2,500 units: \(best[0]) s, 20,000 units: \(best[1]) s")
    }

    /// A rack of `units` gain units in one chain, each mapped.
    private func rackText(units n: Int) -> String {
        let units = (0..<n).map { #""g\#($0)": { "type": "gain" }"# }.joined(separator: ", ")
        let chain = (0..<n).map { "g\($0)" }.joined(separator: " -> ")
        let maps = (0..<n).map { #"{ "cc": \#($0 % 128), "to": "g\#($0).gain" }"# }.joined(separator: ", ")
        return #"{ "format": 1, "units": { \#(units), "out": { "type": "output" } }, "connections": [ "\#(chain) -> out" ], "midi": { "map": [ \#(maps) ] } }"#
    }

    /// Reads and checks `text`, a rack of `units` gain units and an output.
    private func readAndCheck(_ text: String, units n: Int) throws {
        let r = try reader.read(text: text, file: "big.json")
        XCTAssertEqual(GraphCompiler(registry: Fixtures.registry).check(r), [])
        XCTAssertEqual(r.units.count, n + 1)
    }

    /// A rack of 100,000 unconnected units is ordered in O(n log n) (it once sorted the
    /// ready list for every unit), and a file over 4 MB is refused with its size.
    func testManyUnitsAndHugeFiles() throws {
        let units = (0..<100_000).map { #""g\#($0)": { "type": "gain" }"# }.joined(separator: ", ")
        let text = #"{ "format": 2, "units": { \#(units), "out": { "type": "output" } } }"#
        let r = try reader.read(text: text, file: "many.json")
        XCTAssertEqual(GraphCompiler(registry: Fixtures.registry).check(r), [])
        let path = Fixtures.temporaryPath("huge.json")
        let padding = String(repeating: " ", count: RackFiles.maxFileBytes)
        try (#"{ "format": 2, "units": { "out": { "type": "output" } } }"# + padding).write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try RackFiles.read(path, registry: Fixtures.registry)) { error in
            XCTAssertEqual("\(error)", "\(path): the file has 4 MB; a rack or setlist file is at most 4 MB")
        }
        XCTAssertThrowsError(try RackFiles.readSetlist(path))
    }

    func testErrorsOnOneLineAreSortedByColumn() throws {
        let text = #"{ "format": 1, "units": { "a": { "type": "gain", "params": { "gain": 99 } }, "b": { "type": "gian" } }, "tempoo": 1, "tempo": 1 }"#
        do {
            _ = try reader.read(text: text, file: "t.json")
            XCTFail("read")
        } catch {
            let columns = error.diagnostics.map { $0.location!.column }
            XCTAssertEqual(error.diagnostics.count, 4, "\(error)")
            XCTAssertEqual(columns, columns.sorted(), "\(error)")
        }
    }

    func testMissingSongIsLocatedWithAHint() throws {
        let path = Fixtures.path("setlists/missing-song.json")
        XCTAssertThrowsError(try RackFiles.readSetlist(path)) { error in
            let d = (error as! RackError).diagnostics
            XCTAssertEqual(
                d.map(\.description),
                ["\(path):6:15: songs[1].rack: no such file \"echo-aa.json\" (did you mean \"echo-a.json\"?)"])
        }
        let lenient = try RackFiles.readSetlist(path, checkSongs: false)
        XCTAssertEqual(lenient.entries.count, 3)
        XCTAssertEqual(RackFiles.missingSongs(lenient).count, 1)
        XCTAssertNoThrow(try RackFiles.readSetlist(Fixtures.path("setlists/gig.json")))
    }
}
