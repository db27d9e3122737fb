import StageCore
import StageLV2
import XCTest

/// Notes reach a plugin's MIDI input by channel and key range (`channel`, `keys`: the synth's
/// `NoteFilter`), with the tests' gain plugin (0.5 added at each note-on's frame).
final class LV2NoteRoutingTests: XCTestCase {
    override func setUp() {
        super.setUp()
        do { try TestPlugins.load() } catch { XCTFail("\(error)") }
    }

    func rack(_ extra: String) -> String {
        """
        { "format": 2, "units": { "mic": { "type": "input" },
          "g": { "type": "lv2", "plugin": "\(TestPlugins.gain)"\(extra) }, "out": { "type": "output" } },
          "connections": [ "mic -> g -> out" ] }
        """
    }

    /// Notes at frames 100 (key 60, ch 1), 300 (key 50, ch 1), 500 (key 72, ch 2), 700 (key
    /// 73, ch 1): each setting lets through exactly the ones it names.
    func testNotesAreFilteredByChannelAndKeys() throws {
        let notes: [(frame: Int, key: Int, channel: Int)] = [(100, 60, 0), (300, 50, 0), (500, 72, 1), (700, 73, 0)]
        let midi = notes.map {
            StandardMIDIFile.TimedMessage(
                seconds: Double($0.frame) / 48000, message: .noteOn(channel: $0.channel, note: $0.key, velocity: 100))
        }
        let input = [[Float](repeating: 0, count: 2048)]
        func hits(_ extra: String) throws -> [Int] {
            let out = try LV2Testing.render(rack(extra), input: input, midi: midi, block: 256)[0]
            return out.indices.filter { out[$0] > 0.25 }
        }
        XCTAssertEqual(try hits(""), [100, 300, 500, 700])
        XCTAssertEqual(try hits(", \"keys\": \"C4..C5\""), [100, 500])
        XCTAssertEqual(try hits(", \"keys\": \"C4..C5\", \"channel\": 1"), [100])
        XCTAssertEqual(try hits(", \"channel\": \"2\""), [500])
        XCTAssertEqual(try hits(", \"channel\": \"all\", \"keys\": \"73\""), [700])
        XCTAssertTrue(LV2Testing.errors(rack(", \"keys\": \"C4..X9\"")).contains { $0.contains("units.g.keys") && $0.contains("is not a key range") })
        XCTAssertTrue(LV2Testing.errors(rack(", \"channel\": 17")).contains { $0.contains("units.g.channel: must be a MIDI channel 1…16") })
    }
}
