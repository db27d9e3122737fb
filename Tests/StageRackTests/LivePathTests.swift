import Foundation
import StageCore
import StageControl
import StageDrivers
import StageTestSupport
import XCTest

/// The live path between threads: nothing lost when a block's event list is full, queues
/// that know their one producer and one consumer, and live MIDI scheduled on the audio
/// clock at its frame.
final class LivePathTests: XCTestCase {
    let gainRack = """
        { "format": 1, "units": { "mic": { "type": "input" }, "vox": { "type": "gain" },
            "mix": { "type": "mixer", "inputs": 1 }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> mix -> out" ],
          "midi": { "map": [ { "cc": 7, "to": "vox.gain", "min": -40, "max": 0 } ] } }
        """

    /// A burst larger than the rack's per-block list (1024) within one block: every event
    /// reaches the rack (the rest waits a block and is counted), none is dropped. Before
    /// the fix the player popped the 257th event, dropped it, and the rest stayed queued.
    func testABurstLargerThanABlocksListLosesNothing() throws {
        let block = 128
        let plan = try RackBuilding.plan(gainRack, maxFrames: block)
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let vox = try XCTUnwrap(plan.address(of: "vox.gain"))
        let burst = 3000
        for i in 0..<burst {
            // −40…−10 dB, the last one −10 dB: the value the rack must end on.
            XCTAssertTrue(player.events.push(.setParameter(vox, -40 + 30 * Float(i) / Float(burst - 1), at: 0)))
        }
        let input = BusStorage(bufferCount: 1, maxFrames: block)
        let output = BusStorage(bufferCount: 2, maxFrames: block)
        for _ in 0..<6 {
            player.render(frameCount: block, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
        }
        XCTAssertEqual(player.eventsApplied.load(ordering: .relaxed), burst, "every event reached the rack")
        XCTAssertEqual(player.events.approximateCount, 0)
        XCTAssertGreaterThan(player.eventsCarried.load(ordering: .relaxed), 0, "the overflow waited and was counted")
        XCTAssertEqual(player.current.plan.parameters[vox.unit].targetValue(vox.parameter), -10, accuracy: 1e-4)
    }

    /// Each queue has one producer and one consumer thread: a second consumer is counted
    /// (and traps in `make tsan`). A hand-over lets a new thread take a side.
    func testASecondConsumerThreadIsCaughtAndAHandOverIsNot() {
        let q = SPSCQueue<Int>(minimumCapacity: 8)
        q.push(1)
        XCTAssertEqual(q.pop(), 1)  // this thread: producer and consumer
        let before = queueOwnershipViolations.load(ordering: .relaxed)
        let done = DispatchSemaphore(value: 0)
        let t = Thread {
            _ = q.pop()
            done.signal()
        }
        #if !STAGERACK_QUEUE_OWNER_TRAPS
        t.start()
        done.wait()
        XCTAssertEqual(q.ownershipViolations, 1, "a second consumer thread is seen")
        XCTAssertEqual(queueOwnershipViolations.load(ordering: .relaxed) - before, 1)
        #endif
        q.handOverConsumer()
        let handed = Thread {
            _ = q.pop()
            done.signal()
        }
        handed.start()
        done.wait()
        #if !STAGERACK_QUEUE_OWNER_TRAPS
        XCTAssertEqual(q.ownershipViolations, 1, "after a hand-over the new consumer is the owner")
        #endif
    }

    /// The audio clock through jittery wake-ups on a card that drifts against the system
    /// clock: a delay-locked loop maps arrival times to frames within a frame of the truth,
    /// so events keep their spacing at a constant latency of one period.
    func testTheAudioClockFollowsJitterAndDriftWithinAFrame() {
        var sim = ClockSimulation(seed: 7, driftPPM: 80, periodFrames: 128)
        var errors: [Double] = []
        var blockBoundaryErrors: [Double] = []  // as before: every live event at the next block's first frame
        sim.run(seconds: 12) { arrival, trueFrame, blockStart, clock in
            blockBoundaryErrors.append(Double(blockStart + 128) - (trueFrame + 128))
            let scheduled = clock.scheduledFrame(arrivalNanoseconds: arrival)
            XCTAssertNotEqual(scheduled, EngineEvent.now)
            // Its frame: one period after its place, or the next block's first frame when it
            // was read after the period it arrived in had started.
            let expected = max(trueFrame.rounded(.down), Double(blockStart)) + 128
            errors.append(Double(scheduled) - expected)
        }
        XCTAssertGreaterThan(errors.count, 5000)
        // After the loop has locked (2 s): every event within a frame of its true place.
        let locked = errors.dropFirst(errors.count / 6)
        let worst = locked.map(abs).max() ?? .infinity
        XCTAssertLessThanOrEqual(worst, 1.5, "worst scheduling error \(worst) frames")
        // Without the filter (block boundaries) the error would spread over a whole period.
        let spread = (locked.max() ?? 0) - (locked.min() ?? 0)
        XCTAssertLessThan(spread, 3, "scheduling spread \(spread) frames (a block-boundary scheme spreads 128)")
        let before = blockBoundaryErrors.dropFirst(errors.count / 6)
        let beforeSpread = (before.max() ?? 0) - (before.min() ?? 0)
        print("audio clock: \(errors.count) events, worst error after lock \(formatted(worst)) frames, spread \(formatted(spread)) "
              + "(stamped .now, as before: spread \(formatted(beforeSpread)) frames)")
    }

    /// Live MIDI through the router lands in the upcoming block at its frame: never late,
    /// never on a block boundary only, the knob's CCs in arrival order.
    func testLiveCCsThroughTheRouterLandAtTheirFramesNeverLate() throws {
        let block = 128
        let plan = try RackBuilding.plan(gainRack, maxFrames: block)
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let router = MIDIRouter(mapper: MIDIMapper(plan: plan), events: player.events, clock: player.clock, monitor: false)
        let input = BusStorage(bufferCount: 1, maxFrames: block)
        let output = BusStorage(bufferCount: 2, maxFrames: block)
        var sim = ClockSimulation(seed: 3, driftPPM: -60, periodFrames: block)
        var offsets = Set<Int>()
        var sent = 0
        sim.run(seconds: 6, onPeriod: { wake in
            player.clock.periodStarted(frame: player.sampleTime, nanoseconds: wake, periodFrames: block, sampleRate: 48000)
            // The events due in this block are those scheduled before its end.
            while let e = player.events.peek(), e.sampleTime < player.sampleTime + Int64(block) {
                XCTAssertGreaterThanOrEqual(e.sampleTime, player.sampleTime, "an event came after its frame had been rendered")
                offsets.insert(Int(e.sampleTime - player.sampleTime))
                break
            }
            player.render(frameCount: block, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
        }) { arrival, _, _, _ in
            router.handle(.controlChange(channel: 0, controller: 7, value: sent % 128), arrivalNanoseconds: arrival)
            sent += 1
        }
        XCTAssertEqual(router.engineEventsDropped, 0)
        XCTAssertEqual(player.eventsLate.load(ordering: .relaxed), 0, "no event was late")
        // All but those scheduled for the next block or two have played.
        XCTAssertGreaterThanOrEqual(player.eventsApplied.load(ordering: .relaxed), sent - 12)
        XCTAssertGreaterThan(offsets.count, 64, "events spread over the block (\(offsets.count) distinct offsets), not on its boundary")
    }

    func formatted(_ x: Double) -> String { String(format: "%.2f", x) }
}

/// A simulated audio thread and MIDI arrivals: the card's clock runs `driftPPM` fast
/// against the system clock, each period's wake-up is late by 15 µs plus a random part
/// (mostly under 30 µs, now and then 150 µs, as measured on these machines), and events
/// arrive at random times (about 1,000 a second). Deterministic for a seed.
struct ClockSimulation {
    var random: SplitMix
    let driftPPM: Double
    let periodFrames: Int
    let rate = 48000.0

    init(seed: UInt64, driftPPM: Double, periodFrames: Int) {
        random = SplitMix(seed: seed)
        self.driftPPM = driftPPM
        self.periodFrames = periodFrames
    }

    /// Calls `onPeriod(wake)` at each period's wake-up, and `onEvent(arrival, trueFrame,
    /// blockStart, clock)` for each event read after it, with the frame the card is at when
    /// it arrived and the first frame of the block being rendered when it is read. Without
    /// `onPeriod`, a clock of its own is driven.
    mutating func run(
        seconds: Double, onPeriod: ((UInt64) -> Void)? = nil, onEvent: (UInt64, Double, Int64, AudioClock) -> Void
    ) {
        let clock = AudioClock()
        let framesPerNanosecond = rate * (1 + driftPPM * 1e-6) / 1e9
        let start: Double = 1e12  // the system clock when frame 0 starts
        let periods = Int(seconds * rate / Double(periodFrames))
        var nextEvent = start + 1e6
        for k in 0..<periods {
            let boundary = start + Double(k * periodFrames) / framesPerNanosecond
            let wake = boundary + 15_000 + lateness()
            if let onPeriod { onPeriod(UInt64(wake)) } else {
                clock.periodStarted(frame: Int64(k * periodFrames), nanoseconds: UInt64(wake), periodFrames: periodFrames, sampleRate: rate)
            }
            let nextBoundary = start + Double((k + 1) * periodFrames) / framesPerNanosecond
            let nextWake = nextBoundary + 15_000  // events before the next wake-up (its lateness unknown yet)
            while nextEvent < nextWake {
                let trueFrame = (nextEvent - start - 15_000) * framesPerNanosecond
                onEvent(UInt64(nextEvent), trueFrame, Int64(k * periodFrames), clock)
                nextEvent += 1e6 * random.uniform() * 2
            }
        }
    }

    mutating func lateness() -> Double {
        let u = random.uniform()
        return u < 0.02 ? 150_000 * random.uniform() : 30_000 * random.uniform() * random.uniform()
    }
}

/// A small deterministic generator (SplitMix64).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// In [0, 1).
    mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
