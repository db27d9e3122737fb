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
            XCTAssertTrue(has("test.json:2:40: units.a.plugin", "did you mean \"http://drobilla.net/plugins/mda/DeEss\"?"))
        }
        XCTAssertTrue(has("test.json:3:40: units.b.plugin", "no LV2 plugin \"https://example.com/not-a-plugin\" is installed"))
        XCTAssertTrue(has("test.json:4:40: units.c.plugin", "does not declare lv2:hardRTCapable"))
        XCTAssertTrue(has("test.json:5:78: units.d.params.gian", "did you mean \"gain\"?"))
        XCTAssertTrue(has("test.json:5:89: units.d.params.gain", "3 is outside 0…2"))
        XCTAssertTrue(has("test.json:6:42: units.e.params.gain", "outside"), "the rest of the rack is validated")
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
    /// either): parameter changes inside blocks, notes, resets.
    func testNoAllocationOnTheRenderThread() throws {
        #if STAGERACK_TSAN
        throw XCTSkip("the allocation counter is compiled out under TSan")
        #endif
        XCTAssertEqual(alloc_counter_available(), 1)
        let h = try UnitHarness(type: LV2UnitType(), settings: ["plugin": .string(TestPlugins.gain)], maxFrames: 128)
        XCTAssertEqual(try countAllocations(h), 0)
    }

    /// The plugins' own behaviour, measured and reported (their business, not the host's).
    func testDebianPluginsAllocations() throws {
        XCTAssertEqual(alloc_counter_available(), 1)
        for uri in [LV2Testing.deEss, LV2Testing.detune, LV2Testing.fil4] {
            guard LV2World.shared.plugin(uri) != nil else { continue }
            let h = try UnitHarness(type: LV2UnitType(), settings: ["plugin": .string(uri)], maxFrames: 128, inputChannels: nil)
            let n = try countAllocations(h)
            print("lv2 allocations on the render thread, 400 blocks with parameter moves: \(uri): \(n)")
            XCTAssertEqual(n, 0, "\(uri) allocated while rendering")
        }
    }

    func countAllocations(_ h: UnitHarness) throws -> Int64 {
        for c in 0..<h.inputs.count { for ch in 0..<h.inputs[c].channelCount { h.inputs[c][ch].update(repeating: 0.1, count: 128) } }
        h.renderBlock(frames: 128)  // warm-up
        var total: Int64 = 0
        let first = h.specs.firstIndex { $0.unit != .boolean && $0.unit != .choice } ?? 0
        for block in 0..<400 {
            if block % 10 == 3, !h.specs.isEmpty {
                let s = h.specs[first]
                h.set(s.id, block % 20 == 3 ? s.range.lowerBound : s.range.upperBound, atFrame: h.sampleTime + 50)
            }
            if block % 25 == 5 { h.send(.noteOn(channel: 0, note: 60, velocity: 90), atFrame: h.sampleTime + 7) }
            alloc_counter_start()
            h.renderBlock(frames: block % 3 == 0 ? 128 : 61)
            total += alloc_counter_stop()
        }
        return total
    }

    /// The shared contract where the plugins allow it: block-size invariance (the test plugin
    /// and mda DeEss are sample-by-sample; fil4 and Detune interpolate or process per block
    /// and are exempt from exact invariance), reset reproducibility, no denormals and finite
    /// output at the ends of every parameter's range.
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
                    XCTAssertEqual(subnormal, 0, "\(uri): denormals")
                }
            }
        }
    }
}
