import StageCore
import StageSynth
import StageTestSupport
import XCTest
import CAllocCounter

#if canImport(Glibc)
import Glibc
#endif

/// Shared set-up for the synth tests: fonts, harnesses, renders.
enum SynthTest {
    static let timGM = "/usr/share/sounds/sf2/TimGM6mb.sf2"
    static let sampleRate = 48000.0

    /// The repository's bundled font, when it is present in this checkout.
    static var bundled: String? {
        let search = SoundFontSearch(rackDirectory: "")
        return try? search.resolve(SoundFontSearch.bundledName).path
    }

    /// Skips the test unless Debian's timgm6mb-soundfont is installed.
    static func requireTimGM() throws {
        if access(timGM, R_OK) != 0 {
            throw XCTSkip("timgm6mb-soundfont is not installed (apt-get install timgm6mb-soundfont)")
        }
    }

    /// A harness around a synth unit with `settings` (TimGM6mb unless a soundfont is given).
    static func harness(
        _ settings: [String: JSONValue] = [:], parameters: [String: Float] = [:], maxFrames: Int = 512
    ) throws -> UnitHarness {
        var s = settings
        if s["soundfont"] == nil { s["soundfont"] = .string(timGM) }
        return try UnitHarness(
            type: SynthUnitType(), settings: s, parameters: parameters, sampleRate: sampleRate, maxFrames: maxFrames)
    }

    static func synth(_ h: UnitHarness) -> SynthUnit { h.unit as! SynthUnit }

    /// A harness whose unit counts the allocations inside its own render and reset calls.
    static func countingHarness(
        _ settings: [String: JSONValue] = [:], parameters: [String: Float] = [:], maxFrames: Int = 512
    ) throws -> (UnitHarness, AllocationCountingUnit) {
        var s = settings
        if s["soundfont"] == nil { s["soundfont"] = .string(timGM) }
        let h = try UnitHarness(
            type: AllocationCountingType(inner: SynthUnitType()), settings: s, parameters: parameters,
            sampleRate: sampleRate, maxFrames: maxFrames)
        return (h, h.unit as! AllocationCountingUnit)
    }

    /// Unit settings from JSON text, as a rack file would give them.
    static func settings(_ json: String, rackDirectory: String = "") -> UnitSettings {
        let node = try! JSONParser.parse(json)
        return UnitSettings(members: node.members ?? [], rackDirectory: rackDirectory)
    }

    /// Seconds to frames.
    static func frames(_ seconds: Double) -> Int { Int(seconds * sampleRate) }

    /// Renders one note (channel 1) held for `hold` seconds, then `after` seconds more;
    /// returns the left channel.
    static func renderNote(
        _ h: UnitHarness, key: Int = 69, velocity: Int = 100, hold: Double = 1.0, after: Double = 0, blockSize: Int? = nil
    ) -> [Float] {
        let start = h.sampleTime
        h.send(.noteOn(channel: 0, note: key, velocity: velocity), atFrame: start)
        h.send(.noteOff(channel: 0, note: key), atFrame: start + Int64(frames(hold)))
        return h.render(frames: frames(hold + after), blockSize: blockSize)[0]
    }

    /// Frequency of the strongest peak in `low…high` over `from…to` seconds of `x`.
    static func pitch(_ x: [Float], from: Double = 0.15, to: Double = 0.65, low: Double, high: Double) -> Double {
        Measure.dominantFrequency(in: x[frames(from)..<frames(to)], sampleRate: sampleRate, low: low, high: high)
    }
}

/// A unit type whose units wrap another type's units and count the heap allocations made
/// inside `render` and `reset` only (the harness's own bookkeeping is not counted).
struct AllocationCountingType: UnitType {
    let inner: any UnitType
    var name: String { inner.name }
    var summary: String { inner.summary }
    var role: UnitRole { inner.role }
    var settings: [SettingSpec] { inner.settings }
    var receivesMIDI: Bool { inner.receivesMIDI }
    func parameters(_ settings: UnitSettings) -> [ParameterSpec] { inner.parameters(settings) }
    func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout { inner.layout(settings, context) }
    func check(_ settings: UnitSettings) -> [SettingProblem] { inner.check(settings) }
    func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        AllocationCountingUnit(try inner.make(settings, context))
    }
}

final class AllocationCountingUnit: RackUnit {
    let inner: any RackUnit
    /// Allocations of each render call, in order (appended after counting stopped).
    var perRender: [Int64] = []
    var inReset: Int64 = 0
    init(_ inner: any RackUnit) {
        self.inner = inner
        perRender.reserveCapacity(1 << 16)
    }
    func prepare(_ spec: PrepareSpec) throws { try inner.prepare(spec) }
    func render(_ context: RenderContext) {
        alloc_counter_start()
        inner.render(context)
        let n = alloc_counter_stop()
        perRender.append(n)
    }
    func reset() {
        alloc_counter_start()
        inner.reset()
        inReset += alloc_counter_stop()
    }
}
