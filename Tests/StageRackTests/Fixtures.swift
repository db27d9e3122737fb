import Foundation
import StageCore
import StageUnits

/// Paths of the shared test fixtures (Tests/Fixtures) and the repository's racks/.
enum Fixtures {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let repository = testsDirectory.deletingLastPathComponent()
    static func path(_ relative: String) -> String { testsDirectory.appendingPathComponent("Fixtures/\(relative)").path }
    static func files(in relative: String, ext: String = "json") -> [String] {
        let dir = testsDirectory.appendingPathComponent("Fixtures/\(relative)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".\(ext)") }.sorted().map { dir.appendingPathComponent($0).path }
    }
    static var registry: UnitRegistry { UnitRegistry(StandardUnits.types) }
    static func temporaryPath(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stagerack-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name).path
    }
}
