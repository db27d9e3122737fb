import StageCore
import StageLV2
import StagePlayer
import StageSynth
import StageUnits

/// Every unit type the program knows.
enum Registry {
    static let standard = UnitRegistry(
        StandardUnits.types.filter { $0.name != "click" } + SynthUnits.types + LV2Units.types + PlayerUnits.types
            + [ClickUnitType(decodeCue: { try CueDecoding.decode(path: $0, sampleRate: $1) })])
}
