import StageCore
import StageSynth
import XCTest

/// Rack format 2 counts synth programs 1…128 like setlists, snapshots and controllers;
/// format 1 files keep meaning what they meant (0…127), with a note on how to update.
final class RackFormatTests: XCTestCase {
    let reader = RackReader(registry: Fixtures.registry)

    func rack(format: Int, program: Int) -> String {
        """
        {
          "format": \(format),
          "units": {
            "keys": { "type": "synth", "program": \(program) },
            "out": { "type": "output" },
          },
          "connections": [ "keys -> out" ],
        }
        """
    }

    func program(_ text: String) throws -> Int? {
        let r = try reader.read(text: text, file: "t.json")
        let unit = try XCTUnwrap(r.unit("keys"))
        return try SynthConfiguration.parse(unit.settings).get().program
    }

    func testBothFormatsMeanTheSamePreset() throws {
        // Program 1 of format 2 is FluidSynth's 0, as program 0 of format 1.
        XCTAssertEqual(try program(rack(format: 2, program: 1)), 0)
        XCTAssertEqual(try program(rack(format: 1, program: 0)), 0)
        XCTAssertEqual(try program(rack(format: 2, program: 128)), 127)
        XCTAssertEqual(try program(rack(format: 1, program: 127)), 127)
        XCTAssertThrowsError(try reader.read(text: rack(format: 2, program: 0)))
        XCTAssertThrowsError(try reader.read(text: rack(format: 1, program: 128)))
        XCTAssertThrowsError(try reader.read(text: rack(format: 3, program: 1))) { error in
            XCTAssertTrue("\(error)".contains("reads rack formats 1 and 2"), "\(error)")
        }
    }

    func testFormat1RackWithProgramsGetsANoteOnHowToUpdate() throws {
        let r = try reader.read(text: rack(format: 1, program: 5), file: "t.json")
        XCTAssertEqual(r.notes.count, 1)
        let note = r.notes[0].description
        XCTAssertTrue(note.hasPrefix("t.json:2:13: format: note: "), note)
        XCTAssertTrue(note.contains("set \"format\": 2"), note)
        XCTAssertTrue(note.contains("units.keys.program 5 → 6 (line 4)"), note)
        XCTAssertEqual(try reader.read(text: rack(format: 2, program: 6), file: "t.json").notes, [])
        let noPrograms = #"{ "format": 1, "units": { "out": { "type": "output" } } }"#
        XCTAssertEqual(try reader.read(text: noPrograms).notes, [])
    }

    func testSetlistsReadBothFormats() throws {
        for format in [1, 2] {
            let s = try SetlistReader.read(text: #"{ "format": \#(format), "songs": [ { "rack": "a.json", "program": 128 } ] }"#, file: "s.json")
            XCTAssertEqual(s.entries.first?.program, 128)
        }
    }
}
