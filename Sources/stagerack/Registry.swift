import StageCore
import StageLV2
import StageSynth
import StageUnits

/// Every unit type the program knows.
enum Registry {
    static let standard = UnitRegistry(StandardUnits.types + SynthUnits.types + LV2Units.types)
}
