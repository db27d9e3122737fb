import Foundation
import StageCore
import StagePlayer
import StageSynth
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
    static var registry: UnitRegistry { UnitRegistry(StandardUnits.types + SynthUnits.types + PlayerUnits.types + [MonoPassType()]) }
    static func temporaryPath(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stagerack-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name).path
    }
}

/// A test-only unit with one mono input and one mono output that copies its input: lets the
/// tests see the engine's stereo-to-mono adaptation.
struct MonoPassType: UnitType {
    var name: String { "monoPass" }
    var summary: String { "test: mono in, mono out" }
    func parameters(_ settings: UnitSettings) -> [ParameterSpec] { [] }
    func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.channels(1)], outputs: [.channels(1)])
    }
    func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { MonoPass() }

    final class MonoPass: RackUnit {
        func prepare(_ spec: PrepareSpec) throws {}
        func reset() {}
        func render(_ context: RenderContext) {
            context.outputs[0][0].update(from: context.inputs[0][0], count: context.frameCount)
        }
    }
}
