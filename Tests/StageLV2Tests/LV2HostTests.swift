import CAllocCounter
import Foundation
import StageCore
import StageLV2
import StageTestSupport
import XCTest

/// The host itself, with the tests' own plugins (built from C here) and Debian's: changes at
/// their frame, MIDI into atom ports, errors with line:column, allocations, the contract.
final class LV2HostTests: XCTestCase {
    override func setUp() {
        super.setUp()
        do { try TestPlugins.load() } catch { XCTFail("\(error)") }
    }

    func gainRack(extra: String = "") -> String {
        """
        { "format": 2, "units": { "mic": { "type": "input" },
          "g": { "type": "lv2", "plugin": "\(TestPlugins.gain)"\(extra) }, "out": { "type": "output" } },
          "connections": [ "mic -> g -> out" ],
          "midi": { "map": [ { "cc": 20, "to": "g.gain", "min": 0, "max": 2 } ] } }
        """
    }

    /// A CC mapped to a plugin's control port moves it at the CC's frame, inside a block:
    /// the host splits run() there.
    func testMIDIControlChangeLandsAtItsFrame() throws {
        for (frame, block) in [(1000, 256), (4321, 512), (777, 64)] {
            let input = [[Float](repeating: 0.2, count: 8000)]
            let cc = StandardMIDIFile.TimedMessage(
                seconds: Double(frame) / 48000, message: .controlChange(channel: 0, controller: 20, value: 0))
            let out = try LV2Testing.render(gainRack(), input: input, midi: [cc], block: block)[0]
            let changed = out.firstIndex { abs($0) < 1e-6 }
            XCTAssertEqual(changed, frame, "block \(block)")
            XCTAssertEqual(out[frame - 1], 0.2, accuracy: 1e-6)
        }
    }

    /// A parameter the rack marks as smoothed ramps (the engine's ramp) and reaches the port
    /// in steps of 16 frames from the CC's frame (and at each block's start).
    func testSmoothedParameterStepsPerSubBlock() throws {
        let frame = 1000
        let input = [[Float](repeating: 0.2, count: 4000)]
        let cc = StandardMIDIFile.TimedMessage(
            seconds: Double(frame) / 48000, message: .controlChange(channel: 0, controller: 20, value: 0))
        let out = try LV2Testing.render(gainRack(extra: ", \"smooth\": { \"gain\": 0.01 }"), input: input, midi: [cc], block: 256)[0]
        XCTAssertEqual(out[frame - 1], 0.2, accuracy: 1e-6)
        XCTAssertLessThan(out[frame + 16], 0.2, "moving from the CC's frame")
        // Runs of one value: 16 frames, cut short only where a block begins (1024, 1280).
        var runs: [Int] = []
        var f = frame
        while f < frame + 480 {
            var g = f + 1
            while out[g] == out[f] { g += 1 }
            runs.append(g - f)
            f = g
        }
        XCTAssertTrue(runs.allSatisfy { $0 <= 16 }, "\(runs)")
        XCTAssertLessThanOrEqual(runs.count, 480 / 16 + 2, "\(runs)")
        XCTAssertLessThan(Measure.maxJump(out), 0.2 / 480 * 16 * 1.5, "no step larger than the ramp's")
        XCTAssertEqual(out[frame + 600], 0, accuracy: 1e-6, "at the target after the 10 ms ramp")
        XCTAssertTrue(LV2Testing.errors(gainRack(extra: ", \"smooth\": { \"gian\": 0.01 }"))
            .contains { $0.contains("units.g.smooth: gian: the plugin has no control input \"gian\" (did you mean \"gain\"?)") })
    }

    /// Notes reach a plugin's MIDI atom input at their frames.
    func testNotesReachTheAtomPortAtTheirFrames() throws {
        let input = [[Float](repeating: 0, count: 4096)]
        let frames = [100, 300, 2049]
        let notes = frames.map {
            StandardMIDIFile.TimedMessage(seconds: Double($0) / 48000, message: .noteOn(channel: 0, note: 60, velocity: 100))
        }
        let out = try LV2Testing.render(gainRack(), input: input, midi: notes, block: 256)[0]
        let hits = out.indices.filter { out[$0] > 0.25 }
        XCTAssertEqual(hits, frames)
        // With "channel": 2, only channel 2's notes get through.
        let mixed = notes + [
            StandardMIDIFile.TimedMessage(seconds: 500.0 / 48000, message: .noteOn(channel: 1, note: 62, velocity: 90))
        ]
        let filtered = try LV2Testing.render(
            gainRack(extra: ", \"channel\": 2"), input: input, midi: mixed.sorted { $0.seconds < $1.seconds }, block: 256)[0]
        XCTAssertEqual(filtered.indices.filter { filtered[$0] > 0.25 }, [500])
    }

    func testBadPluginsAreClearErrorsWithLineAndColumn() throws {
        let rack = """
            { "format": 2, "units": { "mic": { "type": "input" },
              "a": { "type": "lv2", "plugin": "http://drobilla.net/plugins/mda/DeEs" },
              "b": { "type": "lv2", "plugin": "https://example.com/not-a-plugin" },
              "c": { "type": "lv2", "plugin": "\(TestPlugins.nonRealtime)" },
              "d": { "type": "lv2", "plugin": "\(TestPlugins.gain)", "params": { "gian": 1, "gain": 3 } },
              "e": { "type": "gain", "params": { "gain": 99 } },
              "out": { "type": "output" } },
              "connections": [ "mic -> a -> b -> c -> d -> e -> out" ] }
            """
        let errors = LV2Testing.errors(rack)
        print(errors.joined(separator: "\n"))
        func has(_ prefix: String, _ text: String) -> Bool {
            errors.contains { $0.hasPrefix(prefix) && $0.contains(text) }
        }
        if LV2World.shared.plugin(LV2Testing.deEss) != nil {
            XCTAssertTrue(has("test.json:2:35: units.a.plugin", "did you mean \"http://drobilla.net/plugins/mda/DeEss\"?"))
        }
        XCTAssertTrue(has("test.json:3:35: units.b.plugin", "no LV2 plugin \"https://example.com/not-a-plugin\" is installed"))
        XCTAssertTrue(has("test.json:4:35: units.c.plugin", "does not declare lv2:hardRTCapable"))
        XCTAssertTrue(has("test.json:5:74: units.d.params.gian", "did you mean \"gain\"?"))
        XCTAssertTrue(has("test.json:5:93: units.d.params.gain", "3 is outside 0…2"))
        XCTAssertTrue(has("test.json:6:46: units.e.params.gain", "outside"), "the rest of the rack is validated")
        // Accepted when the rack says so.
        XCTAssertEqual(LV2Testing.errors(gainRack().replacingOccurrences(of: TestPlugins.gain, with: TestPlugins.nonRealtime)
            .replacingOccurrences(of: "\"plugin\":", with: "\"allowNonRealtime\": true, \"plugin\":")), [])
    }

    /// A plugin whose instantiate returns NULL, and one whose library is missing: errors at
    /// the unit, the other units still built and checked, nothing crashes.
    func testPluginsThatFailToInstantiate() throws {
        for (uri, expected) in [(TestPlugins.null, "failed to instantiate"), (TestPlugins.noBinary, "cannot be read")] {
            let rack = """
                { "format": 2, "units": { "mic": { "type": "input" },
                  "bad": { "type": "lv2", "plugin": "\(uri)" },
                  "good": { "type": "lv2", "plugin": "\(TestPlugins.gain)" },
                  "out": { "type": "output" } },
                  "connections": [ "mic -> bad -> good -> out" ] }
                """
            let errors = LV2Testing.errors(rack)
            XCTAssertEqual(errors.count, 1, "\(errors)")
            XCTAssertTrue(errors.first?.hasPrefix("test.json:2:3: units.bad: lv2: \(uri) failed to instantiate") ?? false, "\(errors)")
            XCTAssertTrue(errors.first?.contains(expected) ?? false, "\(errors)")
        }
    }

    /// The host allocates nothing on the render thread (the test plugin allocates nothing
    /// either): the real engine and MIDI mapper, CCs moving a port inside blocks, notes into
    /// the atom port, blocks of two sizes.
    func testNoAllocationOnTheRenderThread() throws {
        XCTAssertEqual(try countAllocations(TestPlugins.gain), 0)
    }

    /// The plugins' own behaviour, measured and reported (their business, not the host's).
    func testDebianPluginsAllocations() throws {
        for uri in [LV2Testing.deEss, LV2Testing.detune, LV2Testing.fil4] {
            guard LV2World.shared.plugin(uri) != nil else { continue }
            let n = try countAllocations(uri)
            print("lv2 allocations on the render thread, 2000 blocks with CCs and notes: \(uri): \(n)")
            XCTAssertEqual(n, 0, "\(uri) allocated while rendering")
        }
    }

    func countAllocations(_ uri: String) throws -> Int64 {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter needs glibc") }
        #if DEBUG
        throw XCTSkip("counts are for release builds (debug Swift allocates lazily); `make test` runs release")
        #endif
        let info = try XCTUnwrap(LV2World.shared.plugin(uri))
        let target = try XCTUnwrap(LV2Parameters.specs(info).first { $0.unit != .boolean && $0.unit != .choice })
        let rack = """
            { "format": 2, "units": { "mic": { "type": "input" },
              "fx": { "type": "lv2", "plugin": "\(uri)" }, "out": { "type": "output" } },
              "connections": [ "mic -> fx -> out" ],
              "midi": { "map": [ { "cc": 20, "to": "fx.\(target.id)" } ] } }
            """
        let plan = try LV2Testing.plan(rack, maxFrames: 128, inputChannels: 1)
        let engine = RenderEngine(plan: plan)
        let driver = EngineDriver(engine: engine)
        let mapper = MIDIMapper(plan: plan)
        let input = PitchMeasure.noise(frames: 128, amplitude: 0.2)
        input.withUnsafeBufferPointer { plan.hostInput[0].update(from: $0.baseAddress!, count: 128) }
        driver.render(frameCount: 128)  // warm-up block
        alloc_counter_start()
        for block in 0..<2000 {
            if block % 7 == 0 {
                mapper.handle(.controlChange(channel: 0, controller: 20, value: block % 128), at: engine.sampleTime + 5) {
                    driver.push($0)
                }
            }
            if block % 11 == 0 {
                mapper.handle(.noteOn(channel: 0, note: 60, velocity: 90), at: engine.sampleTime + 9) {
                    driver.push($0)
                }
            }
            driver.render(frameCount: block % 3 == 0 ? 128 : 37)
        }
        return alloc_counter_stop()
    }

    /// The shared contract where the plugins allow it: block-size invariance (the test plugin
    /// and mda DeEss are sample-by-sample; fil4 and Detune interpolate or process per block
    /// and are exempt from exact invariance); reset reproducibility (exempt: mda DeEss, whose
    /// activate keeps its envelope, and x42 fil4, whose parameter interpolation is not reset); finite output at the ends of every parameter's range;
    /// no denormals (exempt: mda DeEss lets its envelope decay into subnormals; the render
    /// thread runs with flush-to-zero, which this test thread does not).
    func testContract() throws {
        let input = [PitchMeasure.noise(frames: 9600, amplitude: 0.3, seed: 3)]
        for uri in [TestPlugins.gain, LV2Testing.deEss] {
            guard LV2World.shared.plugin(uri) != nil else { continue }
            func render(block: Int) throws -> [[Float]] {
                let h = try UnitHarness(type: LV2UnitType(), settings: ["plugin": .string(uri)], maxFrames: 512, inputChannels: nil)
                let x = Array(repeating: input[0], count: h.inputChannels.first ?? 1)
                let first = h.specs[0]
                h.set(first.id, first.range.upperBound * 0.7, atFrame: 3001)
                return h.render(input: x, frames: 9600, blockSize: block)
            }
            let a = try render(block: 512)
            let b = try render(block: 17)
            XCTAssertEqual(Measure.peak(zip(a[0], b[0]).map { $0 - $1 }), 0, "\(uri): block-size invariance")
        }
        for uri in [TestPlugins.gain, LV2Testing.detune] {
            guard LV2World.shared.plugin(uri) != nil else { continue }
            let h = try UnitHarness(type: LV2UnitType(), settings: ["plugin": .string(uri)], maxFrames: 256, inputChannels: nil)
            let x = Array(repeating: input[0], count: h.inputChannels.first ?? 1)
            let first = h.render(input: x, frames: 4800, blockSize: 256)
            h.reset()
            let second = h.render(input: x, frames: 4800, blockSize: 256)
            XCTAssertEqual(Measure.peak(zip(first[0], second[0]).map { $0 - $1 }), 0, "\(uri): reset")
        }
        for uri in [TestPlugins.gain, LV2Testing.deEss, LV2Testing.detune, LV2Testing.fil4] {
            guard let info = LV2World.shared.plugin(uri) else { continue }
            for end in [0, 1] {
                var params: [String: Float] = [:]
                for s in LV2Parameters.specs(info) { params[s.id] = end == 0 ? s.range.lowerBound : s.range.upperBound }
                let h = try UnitHarness(
                    type: LV2UnitType(), settings: ["plugin": .string(uri)], parameters: params, maxFrames: 256,
                    inputChannels: nil)
                let x = Array(repeating: input[0], count: h.inputChannels.first ?? 1)
                var y = h.render(input: x, frames: 9600, blockSize: 256)
                y += h.render(input: x.map { $0.map { _ in 0 } }, frames: 48000, blockSize: 256)
                for c in y {
                    XCTAssertTrue(c.allSatisfy(\.isFinite), "\(uri) at the \(end == 0 ? "minimum" : "maximum")")
                    let subnormal = c.filter { $0 != 0 && abs($0) < Float.leastNormalMagnitude }.count
                    if uri != LV2Testing.deEss { XCTAssertEqual(subnormal, 0, "\(uri): denormals") }
                }
            }
        }
    }
}
