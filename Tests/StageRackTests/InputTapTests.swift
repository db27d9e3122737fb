import CAllocCounter
import StageCore
import StageTestSupport
import XCTest

/// The engine's input copied out through `RackPlayer.inputTap` (the page's soundcheck): the
/// armed channel arrives sample for sample on the consumer thread, nothing while disarmed,
/// what overflows the ring is dropped and counted, and the render thread allocates nothing
/// while copying. The renders run on a thread of their own (the producer), the arming and
/// draining on the test's (the consumer), as live.
final class InputTapTests: XCTestCase {
    let rack = """
        { "format": 2, "units": { "mic": { "type": "input", "channel": 2 }, "out": { "type": "output" } }, "connections": [ "mic -> out" ] }
        """
    static let block = 128
    var block: Int { Self.block }

    /// A player of `rack` with a tap of `seconds`, and a two-channel input bus: channel 0 a
    /// ramp, channel 1 its negative, numbered from `start` so every block differs.
    func player(seconds: Double) throws -> (RackPlayer, InputTap, BusStorage, BusStorage) {
        let plan = try RackBuilding.plan(rack, maxFrames: block, inputChannels: 2)
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let tap = InputTap(seconds: seconds, sampleRate: 48000)
        player.inputTap = tap
        return (player, tap, BusStorage(bufferCount: 2, maxFrames: block), BusStorage(bufferCount: 2, maxFrames: block))
    }

    static func render(_ player: RackPlayer, _ input: BusStorage, _ output: BusStorage, blocks: Range<Int>) {
        for b in blocks {
            for i in 0..<block {
                input.buffer(0)[i] = Float(b * block + i) * 1e-6
                input.buffer(1)[i] = -Float(b * block + i) * 1e-6
            }
            player.render(frameCount: block, input: input.bus(first: 0, channels: 2), output: output.bus(first: 0, channels: 2))
        }
    }

    func testTheArmedChannelArrivesWholeAndNothingWhileDisarmed() throws {
        let (player, tap, input, output) = try player(seconds: 1)
        let p = player
        runOnAnotherThread { Self.render(p, input, output, blocks: 0..<10) }
        var got: [Float] = []
        tap.drain(into: &got, limit: 1 << 20)
        XCTAssertTrue(got.isEmpty, "nothing is copied while disarmed")

        tap.arm(channel: 1)
        runOnAnotherThread { Self.render(p, input, output, blocks: 10..<60) }
        tap.drain(into: &got, limit: 1 << 20)
        XCTAssertEqual(got.count, 50 * block)
        let expected = (10 * block..<60 * block).map { -Float($0) * 1e-6 }
        XCTAssertEqual(got, expected, "channel 2, sample for sample")
        XCTAssertEqual(tap.dropped, 0)

        tap.disarm()
        runOnAnotherThread { Self.render(p, input, output, blocks: 60..<70) }
        var after: [Float] = []
        tap.drain(into: &after, limit: 1 << 20)
        XCTAssertTrue(after.isEmpty, "nothing after disarming")
    }

    func testOverflowIsDroppedAndCountedWithoutAllocating() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter needs glibc") }
        #if DEBUG
        throw XCTSkip("counts are for release builds")
        #endif
        let (player, tap, input, output) = try player(seconds: 0.1)  // 4800 samples: a ring of 8191
        let p = player
        runOnAnotherThread { Self.render(p, input, output, blocks: 0..<2) }  // warm
        tap.arm(channel: 0)
        nonisolated(unsafe) var allocations: Int64 = -1
        runOnAnotherThread {
            alloc_counter_start()
            Self.render(p, input, output, blocks: 0..<100)
            allocations = alloc_counter_stop()
        }
        XCTAssertEqual(allocations, 0, "the render thread allocates nothing while copying")
        var got: [Float] = []
        tap.drain(into: &got, limit: 1 << 20)
        let capacity = got.count
        print("input tap: a ring of \(capacity) samples kept, \(tap.dropped) of \(100 * block) dropped and counted")
        XCTAssertGreaterThanOrEqual(capacity, 4800)
        XCTAssertEqual(capacity + tap.dropped, 100 * block, "every sample is kept or counted")
        XCTAssertEqual(got, (0..<capacity).map { Float($0) * 1e-6 }, "the first ones kept, in order")
    }
}
