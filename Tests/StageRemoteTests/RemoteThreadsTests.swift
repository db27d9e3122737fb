import Foundation
import StageCore
import StageDrivers
import StageRemote
import Synchronization
import XCTest

/// The remote's threads as `play` runs them, for real: a server thread sends commands and
/// reads the published view, a MIDI thread moves knobs through the router, the control
/// thread ticks the hub, the render thread renders. Every queue keeps its one producer and
/// one consumer (checked; traps under `make tsan`), the render thread never waits on a
/// server, and the last value wins everywhere.
final class RemoteThreadsTests: XCTestCase {
    func testServersMIDIControlAndRenderThreadsTogether() throws {
        let rig = try ParameterStateTests.Rig()
        let violationsBefore = queueOwnershipViolations.load(ordering: .relaxed)
        let stop = Atomic<Bool>(false)  // the server and MIDI threads
        let stopControl = Atomic<Bool>(false)  // then the control and render threads
        let done = DispatchSemaphore(value: 0)
        let seconds = 2.0
        let mix = try rig.hub.view().command(unit: "verb", parameter: "dryWetMix", value: 0).get()
        // MIDI learn from a page too: the MIDI thread copies what it hears to the control thread.
        rig.router.reportMessagesForLearning()
        rig.hub.attachLearning(router: rig.router, remap: { _ in })
        var learn = try rig.hub.view().command(unit: "vox", parameter: "gain", value: 0).get()
        learn.kind = .learn
        let learnCommand = learn

        func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
            let t = Thread {
                body()
                done.signal()
            }
            t.name = name
            t.start()
        }
        let hub = rig.hub
        let router = rig.router
        let player = rig.player
        let sent = Atomic<Int>(0)
        // Server: commands as fast as the queue takes them, reading the view between.
        spawn("server") {
            var i = 0
            _ = hub.fromWeb.push(learnCommand)
            while !stop.load(ordering: .relaxed) {
                var c = mix
                c.value = Float(i % 100)
                if hub.fromWeb.push(c) { sent.add(1, ordering: .relaxed) }
                _ = hub.view().serial
                _ = hub.meters()
                i += 1
            }
            var last = mix
            last.value = 55
            while !hub.fromWeb.push(last) {}
        }
        // MIDI: the bypass button and the gain knob.
        spawn("midi") {
            var n: UInt64 = 1
            while !stop.load(ordering: .relaxed) {
                router.handle(.controlChange(channel: 0, controller: 80, value: Int(n % 2) * 127), arrivalNanoseconds: n * 1000)
                router.poll(nanoseconds: n * 1000)
                router.sendFeedback { _ in }
                n += 1
            }
        }
        // Control: the hub's turns.
        spawn("control") {
            while !stopControl.load(ordering: .relaxed) { hub.tick() }
            hub.tick()
        }
        // Render: blocks as the audio thread renders them.
        spawn("render") {
            let input = BusStorage(bufferCount: 1, maxFrames: 128)
            let output = BusStorage(bufferCount: 2, maxFrames: 128)
            while !stopControl.load(ordering: .relaxed) {
                player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
            }
        }
        Thread.sleep(forTimeInterval: seconds)
        stop.store(true, ordering: .relaxed)
        for _ in 0..<2 { done.wait() }
        stopControl.store(true, ordering: .relaxed)
        for _ in 0..<2 { done.wait() }
        XCTAssertGreaterThan(sent.load(ordering: .relaxed), 1000, "the server thread got commands through")
        XCTAssertEqual(queueOwnershipViolations.load(ordering: .relaxed), violationsBefore, "one producer and one consumer per queue")
        XCTAssertEqual(rig.stateValue("verb", "dryWetMix"), 55, "the last command wins in the state")
        XCTAssertTrue(rig.hub.view().learning != nil || rig.hub.view().mappings.count == 3, "the page's learn reached the control thread")
    }
}
