import CAllocCounter
import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import Synchronization
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A capture card simulated on CLOCK_MONOTONIC for `CaptureThread`: its position moves in
/// `step`-frame steps at `rate` × (1 + `ppm`), each frame's sample is its index (mod 2^16,
/// scaled), and one `available()` may report an xrun (`xrunAt`, a position). Thread: the
/// capture thread (all but `init`).
final class SimulatedCaptureCard: CaptureSource, @unchecked Sendable {
    let channels = 1
    let periodFrames: Int
    let deviceName = "simulated"
    let rate: Double
    let step: Int
    var start: UInt64 = 0
    var read = 0
    var base = 0  // the position at the last restart
    var xrunAt: Int?

    init(periodFrames: Int, rate: Double, ppm: Double, step: Int, xrunAt: Int? = nil) {
        self.periodFrames = periodFrames
        self.rate = rate * (1 + ppm * 1e-6)
        self.step = step
        self.xrunAt = xrunAt
    }

    func position() -> Int { Int(Double(monotonicNanoseconds() &- start) * 1e-9 * rate) / step * step }

    func waitForPeriod(milliseconds: Int32) -> Bool {
        let due = (read - base + periodFrames + step - 1) / step * step
        let ns = start &+ UInt64(Double(due) / rate * 1e9)
        var ts = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
        return true
    }

    func available() -> Int {
        if let x = xrunAt, read >= x {
            xrunAt = nil
            return -32  // EPIPE
        }
        return position() - (read - base)
    }

    func read(into bus: AudioBus, frames: Int) throws(ALSAError) {
        for i in 0..<frames { bus[0][i] = Float((read + i) % 65536) / 65536 }
        read += frames
    }

    func restart() throws(ALSAError) {
        start = monotonicNanoseconds()
        base = read
    }

    func stop() {}
}

/// `CaptureThread` on a simulated card, the test's thread as the audio thread: blocks come
/// in order and whole, the thread is named, an xrun is recovered and counted, and the card's
/// clock is measured (`make tsan` runs it: the hand-over between the two threads).
final class CaptureThreadTests: XCTestCase {
    /// Runs `card` for `seconds` with an audio thread taking 128-frame periods; returns the
    /// compensator, the frames the ring received in order (its last sample checked against
    /// the count), and the thread.
    /// The audio thread's side (`take`, the compensator's `read`) is counted for heap
    /// allocations after its first half second (`allocations`; -1 without glibc).
    func run(_ card: SimulatedCaptureCard, seconds: Double) throws -> (DriftCompensator, CaptureThread, pendings: [Double], allocations: Int64) {
        let drift = try DriftCompensator(channels: 1, sampleRate: 48000, targetBacklog: 384, maxReadFrames: 128, capturePeriod: 256)
        let thread = CaptureThread(source: card, sampleRate: 48000, playbackPeriod: 128)
        let out = BusStorage(bufferCount: 1, maxFrames: 128)
        try thread.start()
        var pendings: [Double] = []
        let periods = Int(seconds * 48000 / 128)
        pendings.reserveCapacity(periods)
        let counted = alloc_counter_available() != 0
        let start = monotonicNanoseconds()
        for k in 0..<periods {
            if counted && k == 188 { alloc_counter_start() }  // after 0.5 s
            sleepUntilNanoseconds(start &+ UInt64(Double(k * 128) / 48000 * 1e9))
            let taken = thread.take(into: drift, time: thread.now(), limit: 2048, played: 128)
            pendings.append(taken.pending)
            drift.read(into: out.bus(first: 0, channels: 1), frames: 128, pendingFrames: taken.pending, measuredDrift: taken.drift)
        }
        let allocations = counted ? alloc_counter_stop() : -1
        XCTAssertTrue(threadNames().contains("stagerack-capt"), "the capture thread is named: \(threadNames())")
        thread.stop()
        return (drift, thread, pendings, allocations)
    }

    func testBlocksArriveAndTheCardsClockIsMeasured() throws {
        let card = SimulatedCaptureCard(periodFrames: 256, rate: 48000, ppm: 5000, step: 256)
        let (drift, thread, pendings, allocations) = try run(card, seconds: 3)
        print(String(format: "simulated card +5000 ppm, 256-frame steps: %d frames read, capture clock %.0f ppm against CLOCK_MONOTONIC, "
            + "pending %.0f…%.0f frames, drift %.0f ppm, xruns %d, dropped %d", card.read, thread.ratePPM, pendings.min()!,
            pendings.max()!, drift.driftPPM, thread.xruns.load(ordering: .relaxed), thread.droppedFrames.load(ordering: .relaxed)))
        XCTAssertGreaterThan(card.read, 48000 * 2)
        XCTAssertEqual(thread.xruns.load(ordering: .relaxed), 0)
        XCTAssertEqual(thread.droppedFrames.load(ordering: .relaxed), 0)
        XCTAssertEqual(thread.lostCode.load(ordering: .relaxed), 0)
        if allocations >= 0 { XCTAssertEqual(allocations, 0, "the audio thread's take and read allocate nothing") }
        XCTAssertGreaterThanOrEqual(pendings.min()!, 0)
        XCTAssertLessThanOrEqual(pendings.max()!, 2048)
        // Measured against the machine's clock: the simulated card runs 5000 ppm fast of it
        // exactly; wake-up jitter moves the estimate, a wrong sign or scale would not pass.
        XCTAssertEqual(thread.ratePPM, 5000, accuracy: 2500)
    }

    func testAnXrunIsRecoveredOnTheCaptureThread() throws {
        let card = SimulatedCaptureCard(periodFrames: 256, rate: 48000, ppm: 0, step: 48, xrunAt: 24000)
        let (_, thread, _, allocations) = try run(card, seconds: 1.5)
        if allocations >= 0 { XCTAssertEqual(allocations, 0, "nor while the capture thread recovers an xrun") }
        XCTAssertEqual(thread.xruns.load(ordering: .relaxed), 1)
        XCTAssertEqual(thread.lostCode.load(ordering: .relaxed), 0)
        XCTAssertGreaterThan(card.read, 48000, "reading went on after the xrun")
    }

    private func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    private func sleepUntilNanoseconds(_ ns: UInt64) {
        var ts = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
