import Foundation
import StageControl
import StageCore
import StageOSC
import StageRemote
import StageTestSupport
import StageUnits
import XCTest

/// The tuner's readout where the performer sees it: `play --status` (UnitReadoutReading),
/// the remote's meters JSON (`"readouts"`) and OSC (`/stagerack/readout s`); a reference
/// out of range is an error that says where.
final class TunerReadoutTests: XCTestCase {
    static let rack = """
        { "format": 2, "units": { "mic": { "type": "input" }, "tuner": { "type": "tuner", "params": { "reference": 440 } },
          "out": { "type": "output" } }, "connections": [ "mic -> tuner -> out" ] }
        """

    func plan(_ text: String = rack) throws -> RenderPlan {
        let registry = UnitRegistry(StandardUnits.types)
        let rack = try RackReader(registry: registry).read(text: text, file: "tuner.json")
        return try GraphCompiler(registry: registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 256, hostInputChannels: 1))
    }

    func testReadoutReachesStatusRemoteAndOSC() throws {
        let plan = try plan()
        let engine = RenderEngine(plan: plan)
        let tone = Measure.sine(frequency: 110, frames: 24000, amplitude: 0.3)
        for b in 0..<(24000 / 256) {
            tone.withUnsafeBufferPointer { plan.hostInput[0].update(from: $0.baseAddress! + b * 256, count: 256) }
            engine.render(frameCount: 256)
        }
        let all = UnitReadoutReading.all(in: plan)
        XCTAssertEqual(all.map(\.unitID), ["tuner"])
        XCTAssertTrue(all[0].text.hasPrefix("tuner: A2 "), all[0].text)
        print("tuner readout: \(all[0].text)")

        var m = RemoteMeters()
        m.readouts = all.map { r in
            RemoteMeters.Readout(unit: r.unitID, text: r.text, values: r.unit.readouts.map { .init(name: $0.name, value: $0.value) })
        }
        let json = WebProtocol.meters(m)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let readouts = try XCTUnwrap(object["readouts"] as? [[String: Any]])
        XCTAssertEqual(readouts.first?["unit"] as? String, "tuner")
        XCTAssertEqual(readouts.first?["text"] as? String, all[0].text)
        let values = try XCTUnwrap(readouts.first?["values"] as? [String: Double])
        XCTAssertEqual(try XCTUnwrap(values["hz"]), 110, accuracy: 0.01)
        XCTAssertEqual(values["note"], 45)

        let p = OSCAddressSpace.readout(all[0].text)
        XCTAssertEqual(p.path, "/stagerack/readout")
        XCTAssertEqual(p.arguments, [.string(all[0].text)])
    }

    func testReferenceOutOfRangeIsAnError() {
        let bad = Self.rack.replacingOccurrences(of: "\"reference\": 440", with: "\"reference\": 500")
        XCTAssertThrowsError(try plan(bad)) { e in
            let text = "\(e)"
            XCTAssertTrue(text.contains("units.tuner.params.reference") && text.contains("500"), text)
        }
    }
}
