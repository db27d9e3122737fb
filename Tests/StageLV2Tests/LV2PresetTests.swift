import Foundation
import StageCore
import StageLV2
import StageTestSupport
import StageUnits
import XCTest

/// Presets from a plugin's own bundle, selected by name: mda Detune's (port values, Debian's
/// mda-lv2) and x42's convolver's (state: its impulse response, x42-plugins).
final class LV2PresetTests: XCTestCase {
    func detuneRack(_ extra: String) -> String {
        """
        { "format": 2, "units": { "mic": { "type": "input" },
          "d": { "type": "lv2", "plugin": "\(LV2Testing.detune)"\(extra) }, "out": { "type": "output" } },
          "connections": [ "mic -> d -> out" ] }
        """
    }

    /// "Out Of Tune" sets detune 0.8 and mix 0.7 (the defaults are 0.2 and 0.9): the preset's
    /// port values become the parameters' defaults, the output equals a rack that sets those
    /// values itself and differs from the defaults'; "params" still win over the preset.
    func testDetunePresetSetsItsPortValues() throws {
        try LV2Testing.require(LV2Testing.detune, package: "mda-lv2")
        let names = LV2World.shared.presets(LV2Testing.detune).map(\.name)
        XCTAssertEqual(names, ["Out Of Tune", "Stereo Detune", "Symphonic"])
        let h = try UnitHarness(
            type: LV2UnitType(), settings: ["plugin": .string(LV2Testing.detune), "preset": .string("Out Of Tune")])
        XCTAssertEqual(h.specs.first { $0.id == "detune" }?.defaultValue ?? 0, 0.8, accuracy: 1e-6)
        XCTAssertEqual(h.specs.first { $0.id == "mix" }?.defaultValue ?? 0, 0.7, accuracy: 1e-6)

        let input = [PitchMeasure.noise(frames: 24000, amplitude: 0.3, seed: 5)]
        func render(_ extra: String) throws -> [Float] { try LV2Testing.render(detuneRack(extra), input: input, block: 256)[0] }
        let preset = try render(", \"preset\": \"Out Of Tune\"")
        let explicit = try render(", \"params\": { \"detune\": 0.8, \"mix\": 0.7 }")
        let defaults = try render("")
        XCTAssertEqual(Measure.peak(zip(preset, explicit).map { $0 - $1 }), 0, "the preset's values")
        XCTAssertGreaterThan(Measure.peak(zip(preset, defaults).map { $0 - $1 }), 0.01, "not the defaults")
        let overridden = try render(", \"preset\": \"Out Of Tune\", \"params\": { \"mix\": 0.9 }")
        let expected = try render(", \"params\": { \"detune\": 0.8, \"mix\": 0.9 }")
        XCTAssertEqual(Measure.peak(zip(overridden, expected).map { $0 - $1 }), 0, "params win over the preset")
    }

    /// An unknown preset name: did-you-mean and the plugin's presets, with line:column; a
    /// plugin without presets says so.
    func testUnknownPresetListsThePluginsPresets() throws {
        try LV2Testing.require(LV2Testing.detune, package: "mda-lv2")
        let errors = LV2Testing.errors(detuneRack(", \"preset\": \"Out of tune\""))
        XCTAssertTrue(
            errors.contains {
                $0.contains("test.json:") && $0.contains("units.d.preset")
                    && $0.contains("has no preset \"Out of tune\" (did you mean \"Out Of Tune\"?); its presets: \"Out Of Tune\", \"Stereo Detune\", \"Symphonic\"")
            }, "\(errors)")
        let none = LV2Testing.errors(detuneRack(", \"preset\": \"Warm\"").replacingOccurrences(of: LV2Testing.detune, with: LV2Testing.deEss))
        XCTAssertTrue(none.contains { $0.contains("ships no presets") }, "\(none)")
    }

    /// The convolver's "No-OP Mono" preset is state only (its delta IR, a file in the
    /// bundle): restored through lilv at load, an impulse comes out after 64 frames at gain 1.
    func testConvolverPresetRestoresItsState() throws {
        try LV2Testing.require(LV2WorkerTests.convolver, package: "x42-plugins")
        let rack = """
            { "format": 2, "units": { "mic": { "type": "input" },
              "zc": { "type": "lv2", "plugin": "\(LV2WorkerTests.convolver)", "preset": "No-OP Mono" }, "out": { "type": "output" } },
              "connections": [ "mic -> zc -> out" ] }
            """
        let out = try LV2StateTests.impulseResponse(rack)
        XCTAssertEqual(Measure.onset(out, threshold: 0.1), 64)
        XCTAssertEqual(out[64], 0.5, accuracy: 1e-3)
    }
}
