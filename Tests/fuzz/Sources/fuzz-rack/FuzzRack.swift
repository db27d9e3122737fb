import StageCore
import StageLV2
import StageSynth
import StageUnits

/// libFuzzer entry: the bytes as a rack file and as a setlist. A rack that reads is checked
/// as a graph, compiled when it plays no SoundFont (loading one per input would be slow;
/// `lv2` units are instantiated, their presets and state restored), and its MIDI mappings are driven over every controller they name: no input may trap.
/// Thread: libFuzzer's.
func fuzzRack(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = try? SetlistReader.read(text: text, file: "fuzz/setlist.json")
    let registry = UnitRegistry(StandardUnits.types + SynthUnits.types + LV2Units.types)
    guard let rack = try? RackReader(registry: registry).read(text: text, file: "fuzz/rack.json") else { return 0 }
    _ = rack.notes.map(\.description)
    let compiler = GraphCompiler(registry: registry)
    guard compiler.check(rack).isEmpty, !rack.units.contains(where: { $0.type == "synth" }) else { return 0 }
    guard let plan = try? compiler.compile(rack, options: GraphCompiler.Options(maxFrames: 64)) else { return 0 }
    MappingDrive.sweep(MIDIMapper(plan: plan, presetsByDefault: true))
    return 0
}
