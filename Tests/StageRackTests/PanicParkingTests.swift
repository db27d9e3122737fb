import Foundation
import StageCore
import StageUnits
import Synchronization
import XCTest

/// The panic (`.resetAll`) on the render thread: units whose reset may run there are reset at
/// once; the others (LV2 plugins: `resetsOnRenderThread` false) are parked, silent, and reset
/// by the control thread (`RenderEngine.resetParkedUnits`), never inside `render`.
final class PanicParkingTests: XCTestCase {
    /// A test-only unit like an LV2 plugin: its reset may not run on the render thread. It
    /// holds the largest input it has heard and plays it as a constant (state only a reset
    /// clears), and says where its reset ran.
    struct HoldType: UnitType {
        var name: String { "hold" }
        var summary: String { "test: holds its loudest input; reset only off the render thread" }
        func parameters(_ settings: UnitSettings) -> [ParameterSpec] { [] }
        func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
            BusLayout(inputs: [.channels(1)], outputs: [.channels(1)])
        }
        func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { Hold() }
    }

    final class Hold: RackUnit {
        var held: Float = 0
        var resets = 0
        var resetsInsideRender = 0
        var rendering = false
        var resetsOnRenderThread: Bool { false }
        func prepare(_ spec: PrepareSpec) throws {}
        func reset() {
            resets += 1
            if PanicParkingTests.insideRender { resetsInsideRender += 1 }
            held = 0
        }
        func render(_ context: RenderContext) {
            for i in 0..<context.frameCount { held = max(held, context.inputs[0][0][i]) }
            context.outputs[0][0].update(repeating: held, count: context.frameCount)
        }
    }

    /// The same unit, opting in to silence: the engine would skip it unheard and let it sleep.
    struct QuietHoldType: UnitType {
        var name: String { "quiethold" }
        var summary: String { "test: a hold that opts in to sleeping on silence" }
        var silence: UnitSilence { .sleepsWhenSilent }
        func parameters(_ settings: UnitSettings) -> [ParameterSpec] { [] }
        func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
            BusLayout(inputs: [.channels(1)], outputs: [.channels(1)])
        }
        func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { Hold() }
    }

    nonisolated(unsafe) static var insideRender = false

    func render(_ engine: RenderEngine, input: Float) -> Float {
        let host = engine.plan.hostInput
        host[0].update(repeating: input, count: 64)
        PanicParkingTests.insideRender = true
        engine.render(frameCount: 64)
        PanicParkingTests.insideRender = false
        return engine.plan.hostOutput[0][63]
    }

    func testAPanicParksWhatCannotBeResetInRealTimeUntilTheControlThreadResetsIt() throws {
        let registry = UnitRegistry(StandardUnits.types + [HoldType()])
        let text = """
            { "format": 1, "units": { "mic": { "type": "input" }, "hold": { "type": "hold" }, "out": { "type": "output" } },
              "connections": [ "mic -> hold -> out" ] }
            """
        let rack = try RackReader(registry: registry).read(text: text, file: "panic.json")
        let plan = try GraphCompiler(registry: registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 64, hostInputChannels: 1))
        let engine = RenderEngine(plan: plan)
        engine.warmUp()
        let hold = try XCTUnwrap(plan.units.compactMap { $0 as? Hold }.first)
        let resetsAtStart = hold.resets
        XCTAssertEqual(hold.resetsInsideRender, 0)

        _ = render(engine, input: 0.5)
        XCTAssertEqual(hold.held, 0.5, "the unit holds what it heard")
        XCTAssertFalse(engine.resetParkedUnits(), "nothing to reset before a panic")

        engine.inject(EngineEvent(kind: .resetAll, sampleTime: EngineEvent.now))
        let parkedOut = render(engine, input: 0)
        XCTAssertTrue(engine.hasParkedUnits, "the panic parks the unit")
        XCTAssertEqual(hold.resetsInsideRender, 0, "its reset never runs inside render")
        XCTAssertEqual(hold.held, 0.5, "not reset yet: only the control thread does it")
        XCTAssertLessThan(abs(parkedOut), 1e-6, "a parked unit is silent: \(parkedOut)")
        _ = render(engine, input: 0)
        XCTAssertTrue(engine.hasParkedUnits, "it stays parked until the control thread has reset it")

        XCTAssertTrue(engine.resetParkedUnits(), "the control thread resets it")
        XCTAssertEqual(hold.resets, resetsAtStart + 1)
        XCTAssertFalse(engine.resetParkedUnits(), "once per panic")
        let back = render(engine, input: 0.25)
        XCTAssertFalse(engine.hasParkedUnits, "taken back at the next block")
        XCTAssertEqual(back, 0.25, accuracy: 1e-6, "it renders again, from a cleared state")
        XCTAssertEqual(hold.resetsInsideRender, 0)
    }

    func testTwoPanicsBeforeTheControlThreadTurnsNeedOneReset() throws {
        let registry = UnitRegistry(StandardUnits.types + [HoldType()])
        let rack = try RackReader(registry: registry).read(
            text: #"{ "format": 1, "units": { "mic": { "type": "input" }, "hold": { "type": "hold" }, "out": { "type": "output" } }, "connections": [ "mic -> hold -> out" ] }"#,
            file: "panic.json")
        let plan = try GraphCompiler(registry: registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 64, hostInputChannels: 1))
        let engine = RenderEngine(plan: plan)
        engine.warmUp()
        for _ in 0..<2 {
            engine.inject(EngineEvent(kind: .resetAll, sampleTime: EngineEvent.now))
            _ = render(engine, input: 0.5)
        }
        XCTAssertTrue(engine.hasParkedUnits)
        XCTAssertTrue(engine.resetParkedUnits())
        XCTAssertFalse(engine.resetParkedUnits())
        XCTAssertEqual(render(engine, input: 0.125), 0.125, accuracy: 1e-6)
    }

    /// EngineSilence wakes a skipped unit with `reset()` on the render thread, so a unit
    /// whose reset may not run there is never skipped, unheard or asleep, whatever its type
    /// opts in to; a standard unit beside it in the same place is (the test can fail).
    func testAUnitThatCannotBeResetInRealTimeIsNeverSkipped() throws {
        let registry = UnitRegistry(StandardUnits.types + [QuietHoldType()])
        let text = """
            { "format": 1, "units": { "mic": { "type": "input" }, "hold": { "type": "quiethold" },
                "trim": { "type": "gain" }, "mix": { "type": "mixer", "inputs": 2, "params": { "gain1": -96, "gain2": -96 } },
                "out": { "type": "output" } },
              "connections": [ "mic -> hold -> mix:1", "mic -> trim -> mix:2", "mix -> out" ] }
            """
        let rack = try RackReader(registry: registry).read(text: text, file: "quiet.json")
        let plan = try GraphCompiler(registry: registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 64, hostInputChannels: 1))
        let engine = RenderEngine(plan: plan)
        engine.warmUp()
        let hold = try XCTUnwrap(plan.unitIndex("hold"))
        let trim = try XCTUnwrap(plan.unitIndex("trim"))
        let blocks = 200
        let before = engine.renderCount(unit: hold)  // the warm-up's block
        for b in 0..<blocks { _ = render(engine, input: b < 100 ? 0.5 : 0) }
        XCTAssertFalse(engine.isSkipping(unit: hold))
        XCTAssertFalse(engine.isSleeping(unit: hold))
        XCTAssertEqual(engine.renderCount(unit: hold) - before, blocks, "rendered every block")
        XCTAssertEqual(plan.units.compactMap { $0 as? Hold }.first?.resetsInsideRender, 0)
        XCTAssertTrue(engine.isSkipping(unit: trim), "the gain beside it, unheard, is skipped")
        XCTAssertLessThan(engine.renderCount(unit: trim), blocks)
    }
}
