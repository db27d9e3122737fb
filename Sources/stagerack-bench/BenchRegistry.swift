import StageCore
import StageLV2
import StageSynth
import StageUnits

/// The unit types the benchmark knows (the same as the app's).
enum BenchRegistry {
    static let standard = UnitRegistry(StandardUnits.types + SynthUnits.types + LV2Units.types)
}
