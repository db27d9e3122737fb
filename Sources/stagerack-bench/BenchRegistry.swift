import StageCore
import StageUnits

/// The unit types the benchmark knows (the same as the app's).
enum BenchRegistry {
    static let standard = UnitRegistry(StandardUnits.types)
}
