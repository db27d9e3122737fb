import CAllocCounter
import Foundation
import StageCore
import StageLV2
import StageTestSupport
import StageUnits
import XCTest

/// The `worker` feature with a real plugin: x42's zero-latency convolver (Debian's
/// x42-plugins, `zeroconvolv#Mono`) loads its impulse response when its state is restored
/// and swaps it in through the worker: `work` on the worker thread, `work_response` on the
/// render thread, which schedules the old engine's release back to the worker.
final class LV2WorkerTests: XCTestCase {
    static let convolver = "http://gareus.org/oss/lv2/zeroconvolv#Mono"
    static let delta = "/usr/lib/lv2/zeroconvo.lv2/ir/delta-48k.wav"

    static func rack(state: String) -> String {
        """
        { "format": 2, "units": { "mic": { "type": "input" },
          "zc": { "type": "lv2", "plugin": "\(convolver)", "state": \(state) }, "out": { "type": "output" } },
          "connections": [ "mic -> zc -> out" ] }
        """
    }

    static var irState: String {
        """
        { "http://gareus.org/oss/lv2/zeroconvolv#ir": { "type": "http://lv2plug.in/ns/ext/atom#Path", "value": "\(delta)" } }
        """
    }

    static func plan(_ text: String, settle: Bool, realTime: Bool = true, block: Int = 256) throws -> RenderPlan {
        let registry = UnitRegistry(StandardUnits.types + [LV2UnitType(settleWorkAtLoad: settle)])
        let rack = try RackReader(registry: registry).read(text: text, file: "test.json")
        return try GraphCompiler(registry: registry).compile(
            rack,
            options: GraphCompiler.Options(sampleRate: 48000, maxFrames: block, hostInputChannels: 1, realTime: realTime))
    }

    static func unit(_ plan: RenderPlan, _ id: String = "zc") throws -> LV2Unit {
        try XCTUnwrap(plan.units[XCTUnwrap(plan.unitIDs.firstIndex(of: id))] as? LV2Unit)
    }

    /// The threads of this process whose name is `name` (/proc/self/task/*/comm).
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter {
            (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    /// Renders blocks on a thread of its own (the render thread), an impulse at each block's
    /// frame 0, pacing like a 256-frame period, until the convolver answers and then 40 more
    /// blocks. Returns each block's output and how many blocks were silent first.
    static func renderLive(_ plan: RenderPlan, block: Int = 256) -> (blocks: [[Float]], silentFirst: Int) {
        let engine = RenderEngine(plan: plan)
        nonisolated(unsafe) var blocks: [[Float]] = []
        nonisolated(unsafe) var silentFirst = -1
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            blocks.reserveCapacity(4000)
            for i in 0..<4000 {
                plan.hostInput[0].update(repeating: 0, count: block)
                plan.hostInput[0][0] = 0.5
                engine.render(frameCount: block)
                let out = Array(UnsafeBufferPointer(start: plan.hostOutput[0], count: block))
                blocks.append(out)
                if silentFirst < 0 && Measure.peak(out) > 0.1 { silentFirst = i }
                if silentFirst >= 0 && i >= silentFirst + 40 { break }
                usleep(1000)
            }
            done.signal()
        }
        thread.name = "test-render"
        thread.start()
        done.wait()
        return (blocks, silentFirst)
    }

    override func setUp() {
        super.setUp()
        if LV2World.shared.plugin(Self.convolver) == nil || !FileManager.default.fileExists(atPath: Self.delta) {
            continueAfterFailure = false
        }
    }

    func requireConvolver() throws {
        try LV2Testing.require(Self.convolver, package: "x42-plugins")
    }

    /// Live: the impulse response is swapped in by the worker while the engine renders. The
    /// worker thread exists while the unit lives; the plugin's work ran there and its
    /// responses reached the render thread (the swap, then the answer to the release the
    /// render thread scheduled); once swapped, an impulse comes out as the delta IR made
    /// it: gain 1, delayed by the latency the unit reports.
    func testWorkerSwapsTheImpulseResponseInWhileRendering() throws {
        try requireConvolver()
        let before = Self.threads(named: "stagerack-lv2w")
        try checkLiveSwap(before: before)
        // The render thread's closure (holding the plan) is released when Foundation lets go
        // of its Thread object: wait for that, up to 5 s.
        for _ in 0..<500 where Self.threads(named: "stagerack-lv2w") != before { usleep(10000) }
        XCTAssertEqual(Self.threads(named: "stagerack-lv2w"), before, "the worker thread ends with the unit")
    }

    func checkLiveSwap(before: Int) throws {
        let plan = try Self.plan(Self.rack(state: Self.irState), settle: false)
        let zc = try Self.unit(plan)
        XCTAssertEqual(Self.threads(named: "stagerack-lv2w"), before + 1, "one worker thread for the instance")
        let (blocks, silentFirst) = Self.renderLive(plan)
        XCTAssertGreaterThanOrEqual(silentFirst, 0, "the convolver never answered")
        let counts = try XCTUnwrap(zc.workerCounts)
        XCTAssertGreaterThanOrEqual(counts.works, 2, "apply, then the release scheduled from work_response")
        XCTAssertGreaterThanOrEqual(counts.responses, 2)
        XCTAssertEqual(counts.dropped, 0)
        let last = blocks[blocks.count - 1]
        // Loaded after the probe at load: the latency port's value now (the unit reports 0).
        let latency = Int(try XCTUnwrap(zc.outputValue("latency")))
        XCTAssertEqual(latency, 64, "one 64-frame partition")
        let peakAt = last.indices.max { abs(last[$0]) < abs(last[$1]) }!
        print("lv2 worker: convolver answered after \(silentFirst) blocks; latency \(latency) frames; works \(counts.works), responses \(counts.responses)")
        XCTAssertEqual(peakAt, latency % 256, "the impulse comes out after the reported latency")
        XCTAssertEqual(last[peakAt], 0.5, accuracy: 1e-3, "the delta IR has gain 1")
        XCTAssertLessThan(Measure.peak(Array(last[(peakAt + 1)...])), 1e-3)
    }

    /// At load (the default), the work the restore scheduled is done before the first block:
    /// the first block already convolves; the plan's latency is the plugin's.
    func testWorkIsSettledBeforeTheFirstBlock() throws {
        try requireConvolver()
        let plan = try Self.plan(Self.rack(state: Self.irState), settle: true)
        let zc = try Self.unit(plan)
        XCTAssertEqual(zc.latencyFrames, 64, "zeroconvolv#Mono buffers one 64-frame partition")
        XCTAssertEqual(plan.latencyFrames, zc.latencyFrames, "the plan's latency includes the unit's")
        let engine = RenderEngine(plan: plan)
        var out: [Float] = []
        for b in 0..<4 {
            plan.hostInput[0].update(repeating: 0, count: 256)
            if b == 0 { plan.hostInput[0][0] = 0.5 }
            engine.render(frameCount: 256)
            out += UnsafeBufferPointer(start: plan.hostOutput[0], count: 256)
        }
        XCTAssertEqual(Measure.onset(out, threshold: 0.1), zc.latencyFrames)
        XCTAssertEqual(out[zc.latencyFrames], 0.5, accuracy: 1e-3)
    }

    /// A song switch warms the new rack on the control thread (`RenderEngine.warmUp`: one
    /// silent block, then reset, which deactivates and activates the plugin there) while
    /// the plugin's worker thread runs: the first block on the render thread still
    /// convolves, exactly as without the warm-up, and nothing the worker sent is lost.
    func testAWarmedUpEngineConvolvesFromItsFirstBlockAsAColdOne() throws {
        try requireConvolver()
        func play(warm: Bool) throws -> (out: [Float], dropped: UInt64) {
            let plan = try Self.plan(Self.rack(state: Self.irState), settle: true)
            let engine = RenderEngine(plan: plan)
            if warm { runOnAnotherThread { engine.warmUp() } }
            nonisolated(unsafe) var out: [Float] = []
            let rendered = DispatchSemaphore(value: 0)
            let render = Thread {
                for b in 0..<4 {
                    plan.hostInput[0].update(repeating: 0, count: 256)
                    if b == 0 { plan.hostInput[0][0] = 0.5 }
                    engine.render(frameCount: 256)
                    out += UnsafeBufferPointer(start: plan.hostOutput[0], count: 256)
                }
                rendered.signal()
            }
            render.start()
            rendered.wait()
            return (out, try XCTUnwrap(Self.unit(plan).workerCounts).dropped)
        }
        let cold = try play(warm: false)
        let warm = try play(warm: true)
        XCTAssertEqual(Measure.onset(warm.out, threshold: 0.1), 64, "the impulse after the plugin's latency")
        XCTAssertEqual(warm.out[64], 0.5, accuracy: 1e-3)
        XCTAssertEqual(warm.out, cold.out, "the same with and without the warm-up")
        XCTAssertEqual(warm.dropped, 0)
    }

    /// Delivering responses allocates nothing on the render thread (the host's rings; the
    /// convolver's own swap allocates nothing either): counted over the whole live run's
    /// render calls after the warm-up.
    func testDeliveringResponsesAllocatesNothing() throws {
        try requireConvolver()
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter needs glibc") }
        #if DEBUG
        throw XCTSkip("counts are for release builds")
        #endif
        let plan = try Self.plan(Self.rack(state: Self.irState), settle: false)
        let zc = try Self.unit(plan)
        let engine = RenderEngine(plan: plan)
        engine.render(frameCount: 256)  // warm-up
        var allocations: Int64 = 0
        for _ in 0..<2000 {
            plan.hostInput[0].update(repeating: 0, count: 256)
            plan.hostInput[0][0] = 0.5
            alloc_counter_start()
            engine.render(frameCount: 256)
            allocations += alloc_counter_stop()
            if (zc.workerCounts?.responses ?? 0) >= 2 && Measure.peak(Array(UnsafeBufferPointer(start: plan.hostOutput[0], count: 256))) > 0.1 { break }
            usleep(500)
        }
        XCTAssertGreaterThanOrEqual(zc.workerCounts?.responses ?? 0, 2, "responses were delivered")
        XCTAssertEqual(allocations, 0)
    }
}
