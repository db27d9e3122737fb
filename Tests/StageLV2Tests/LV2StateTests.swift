import Foundation
import StageCore
import StageDrivers
import StageLV2
import StageTestSupport
import StageUnits
import XCTest

/// A plugin's state in the rack file, with a real plugin that has state: x42's convolver
/// (`zeroconvolv#Mono`, Debian's x42-plugins) keeps its impulse response's path, gain,
/// pre-delay and channel gains (a vector: base64) through `state:interface`. The round trip:
/// a state saved from a running unit, written as JSON, read back into a new rack, restores
/// the same behaviour (the impulse response measured).
final class LV2StateTests: XCTestCase {
    static let convolver = LV2WorkerTests.convolver

    func rack(_ unitExtra: String) -> String {
        """
        { "format": 2, "units": { "mic": { "type": "input" },
          "zc": { "type": "lv2", "plugin": "\(Self.convolver)"\(unitExtra) }, "out": { "type": "output" } },
          "connections": [ "mic -> zc -> out" ] }
        """
    }

    /// A mono IR file: `gain` at frame `at`, then silence (64 frames, 48 kHz).
    static func impulseFile(_ path: String, at: Int, gain: Float) throws {
        var ir = [Float](repeating: 0, count: 64)
        ir[at] = gain
        let w = try AudioFileWriter(path: path, channels: 1, sampleRate: 48000, maxFrames: 64)
        try w.write(channels: [ir])
        try w.close()
    }

    /// The unit's response to an impulse of 0.5 (offline, 1024 frames).
    static func impulseResponse(_ text: String, file: String = "test.json") throws -> [Float] {
        let registry = LV2Testing.registry
        let rack = try RackReader(registry: registry).read(text: text, file: file)
        let plan = try GraphCompiler(registry: registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 256, hostInputChannels: 1))
        let engine = RenderEngine(plan: plan)
        var out: [Float] = []
        for b in 0..<4 {
            plan.hostInput[0].update(repeating: 0, count: 256)
            if b == 0 { plan.hostInput[0][0] = 0.5 }
            engine.render(frameCount: 256)
            out += UnsafeBufferPointer(start: plan.hostOutput[0], count: 256)
        }
        return out
    }

    static func unit(_ text: String, file: String = "test.json") throws -> (LV2Unit, RenderPlan) {
        let plan = try LV2Testing.plan(text, maxFrames: 256, inputChannels: 1)
        return (try LV2WorkerTests.unit(plan), plan)
    }

    /// Save → JSON → load: an IR of gain 0.25 at frame 10 (a file next to the rack, named
    /// relative to it) comes out at 64 + 10 frames at 0.125 for an impulse of 0.5, before and
    /// after the round trip; the JSON holds the path as a string, the numbers as numbers, the
    /// channel-gain vector as numbers with its child type's URI; a gain of 0.5 for the
    /// channel in the state halves the output; without the state the convolver is silent.
    func testStateRoundTripRestoresTheSameImpulseResponse() throws {
        try LV2Testing.require(Self.convolver, package: "x42-plugins")
        let dir = LV2Testing.temporaryDirectory("state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: dir + "/ir", withIntermediateDirectories: true)
        try Self.impulseFile(dir + "/ir/spike.wav", at: 10, gain: 0.25)
        let first = rack("""
            , "state": { "http://gareus.org/oss/lv2/zeroconvolv#ir": { "type": "http://lv2plug.in/ns/ext/atom#Path", "value": "ir/spike.wav" } }
            """)
        try first.write(toFile: dir + "/first.json", atomically: true, encoding: .utf8)
        let before = try Self.impulseResponse(first, file: dir + "/first.json")
        XCTAssertEqual(Measure.onset(before, threshold: 0.05), 74)
        XCTAssertEqual(before[74], 0.125, accuracy: 1e-4)

        // Save from a running unit.
        let registry = LV2Testing.registry
        let plan = try GraphCompiler(registry: registry).compile(
            try RackReader(registry: registry).read(text: first, file: dir + "/first.json"),
            options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 256, hostInputChannels: 1))
        let saved = try LV2WorkerTests.unit(plan).saveState()
        let ir = try XCTUnwrap(saved["http://gareus.org/oss/lv2/zeroconvolv#ir"])
        XCTAssertEqual(ir.type, "http://lv2plug.in/ns/ext/atom#Path")
        XCTAssertEqual(ir.value, .text(dir + "/ir/spike.wav"), "paths are saved absolute")
        XCTAssertEqual(saved["http://gareus.org/oss/lv2/zeroconvolv#predelay"]?.value, .integer(0))
        XCTAssertEqual(saved["http://gareus.org/oss/lv2/zeroconvolv#gain"]?.type, "http://lv2plug.in/ns/ext/atom#Float")
        let json = saved.json(indent: "    ")
        print("lv2 state of zeroconvolv#Mono as the rack file keeps it:\n\(json)")
        XCTAssertTrue(json.contains(
            "\"http://gareus.org/oss/lv2/zeroconvolv#channel_gain\": { \"type\": \"http://lv2plug.in/ns/ext/atom#Vector\", "
                + "\"childType\": \"http://lv2plug.in/ns/ext/atom#Float\", \"value\": [1, 1, 1, 1] }"), json)

        // Load it into a new rack (elsewhere: the path is absolute now).
        let second = rack(", \"state\": \(json)")
        let after = try Self.impulseResponse(second)
        XCTAssertEqual(Measure.peak(zip(before, after).map { $0 - $1 }), 0, "the same response after the round trip")
        let reloaded = try Self.unit(second).0.saveState()
        XCTAssertEqual(reloaded, saved, "the same state after the round trip")

        let halved = try Self.impulseResponse(rack(", \"state\": " + json.replacingOccurrences(of: "[1, 1, 1, 1]", with: "[0.5, 1, 1, 1]")))
        XCTAssertEqual(halved[74], 0.0625, accuracy: 1e-4, "the channel gain from the vector applies")

        let none = try Self.impulseResponse(rack(""))
        XCTAssertEqual(Measure.peak(none), 0, "without state the preset convolver has no IR: silence")
    }

    /// Bad state in a rack file: a clear error with line:column, nothing crashes.
    func testBadStateIsAClearError() throws {
        try LV2Testing.require(Self.convolver, package: "x42-plugins")
        let cases: [(String, String)] = [
            ("\"state\": 3", "must be an object of PROPERTY-URI"),
            ("\"state\": { \"urn:x\": { \"value\": 1 } }", "urn:x: must be { \"type\": TYPE-URI"),
            ("\"state\": { \"urn:x\": { \"type\": \"http://lv2plug.in/ns/ext/atom#Int\", \"value\": 1.5 } }", "urn:x: a whole number"),
            ("\"state\": { \"urn:x\": { \"type\": \"urn:blob\", \"base64\": \"***\" } }", "\"base64\" must be a base64 string"),
            ("\"state\": { \"urn:x\": { \"type\": \"urn:blob\", \"value\": 1 } }", "is kept as \"base64\""),
            ("\"state\": { \"urn:x\": { \"type\": \"http://lv2plug.in/ns/ext/atom#Vector\", \"value\": [1] } }", "needs \"childType\""),
        ]
        for (extra, expected) in cases {
            let errors = LV2Testing.errors(rack(", " + extra))
            XCTAssertTrue(errors.contains { $0.contains("units.zc.state") && $0.contains(expected) && $0.contains("test.json:") }, "\(extra): \(errors)")
        }
        // A plugin without state:interface.
        let errors = LV2Testing.errors(rack(", \"state\": {}").replacingOccurrences(of: Self.convolver, with: LV2Testing.deEss))
        XCTAssertTrue(errors.contains { $0.contains("has no state:interface") }, "\(errors)")
        // A file that cannot be loaded: the plugin refuses the state when the rack loads.
        let missing = rack("""
            , "state": { "http://gareus.org/oss/lv2/zeroconvolv#ir": { "type": "http://lv2plug.in/ns/ext/atom#Path", "value": "/nonexistent/ir.wav" } }
            """)
        XCTAssertTrue(LV2Testing.errors(missing).contains { $0.contains("refused its \"state\"") }, "\(LV2Testing.errors(missing))")
    }
}
