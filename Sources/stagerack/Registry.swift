import StageCore
import StageUnits

/// Every unit type the program knows.
enum Registry {
    static let standard = UnitRegistry(StandardUnits.types)
}
