import Synchronization

/// The audio clock as a filtered line through the times at which periods start: a
/// second-order delay-locked loop (F. Adriaensen, "Using a DLL to filter time", 2005). Raw
/// wake-up times jitter by tens of microseconds and the card's crystal drifts against
/// CLOCK_MONOTONIC; the loop follows the drift and smooths the jitter (bandwidth 1 Hz by
/// default: a time constant of about 0.16 s).
///
/// `periodStarted` is told the player's frame and the monotonic time at the start of each
/// period's render; `frame(atNanoseconds:)` maps any monotonic time to a (fractional) frame
/// on that line. A period that is not the next one (the first, after an xrun or a stall of
/// more than two periods) restarts the loop. A plain value. Thread: the one that owns it.
public struct PeriodTimeFilter: Sendable {
    public let periodFrames: Int
    /// The nominal period in nanoseconds.
    public let nominalPeriod: Double
    let b: Double
    let c: Double
    /// Frame and filtered time (ns) of the current period's start, and the predicted time
    /// of the next period's start.
    public private(set) var frame0: Int64 = 0
    public private(set) var time0: Double = 0
    public private(set) var time1: Double = 0
    var e2: Double
    public private(set) var isLocked = false

    public init(periodFrames: Int, sampleRate: Double, bandwidthHz: Double = 1) {
        self.periodFrames = periodFrames
        nominalPeriod = Double(periodFrames) / sampleRate * 1e9
        let omega = 2 * Double.pi * bandwidthHz * Double(periodFrames) / sampleRate
        b = 2.0.squareRoot() * omega
        c = omega * omega
        e2 = nominalPeriod
    }

    /// Forgets the line; the next period starts it again.
    public mutating func reset() { isLocked = false }

    /// The period starting at `frame` began (its render starts) at `nanoseconds`.
    public mutating func periodStarted(frame: Int64, nanoseconds: UInt64) {
        let t = Double(nanoseconds)
        let error = t - time1
        guard isLocked, frame == frame0 + Int64(periodFrames), abs(error) < 2 * nominalPeriod else {
            frame0 = frame
            time0 = t
            time1 = t + nominalPeriod
            e2 = nominalPeriod
            isLocked = true
            return
        }
        frame0 = frame
        time0 = time1
        time1 += b * error + e2
        e2 += c * error
    }

    /// The frame the line puts at `nanoseconds` (extrapolated outside the current period).
    public func frame(atNanoseconds nanoseconds: UInt64) -> Double {
        Double(frame0) + (Double(nanoseconds) - time0) / (time1 - time0) * Double(periodFrames)
    }
}

/// The audio thread's clock, published for the MIDI thread: live events are stamped with
/// CLOCK_MONOTONIC on arrival and scheduled at `arrival + one period` on the audio clock,
/// at their frame, so they keep their spacing instead of landing on block boundaries (no
/// jitter added beyond the timestamp's own; FluidSynth itself starts notes on its 64-frame
/// grid).
///
/// Thread: `periodStarted` and `reset` on the audio thread (the one writer; it runs the
/// filter); `scheduledFrame` and `frame(atNanoseconds:)` from any thread, lock-free: a
/// sequence lock (the reader retries while a period's update is being written).
public final class AudioClock: @unchecked Sendable {
    /// Odd while the writer updates the fields below.
    let sequence = Atomic<Int>(0)
    let frame0 = Atomic<Int64>(0)
    let time0Bits = Atomic<UInt64>(0)
    let time1Bits = Atomic<UInt64>(0)
    let period = Atomic<Int>(0)
    /// The audio thread's own filter (never read elsewhere).
    var filter: PeriodTimeFilter?

    public init() {}

    /// Thread: audio. Never allocates after the first call for a given period size.
    public func periodStarted(frame: Int64, nanoseconds: UInt64, periodFrames: Int, sampleRate: Double) {
        if filter?.periodFrames != periodFrames { filter = PeriodTimeFilter(periodFrames: periodFrames, sampleRate: sampleRate) }
        filter!.periodStarted(frame: frame, nanoseconds: nanoseconds)
        let f = filter!
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        frame0.store(f.frame0, ordering: .relaxed)
        time0Bits.store(f.time0.bitPattern, ordering: .relaxed)
        time1Bits.store(f.time1.bitPattern, ordering: .relaxed)
        period.store(f.periodFrames, ordering: .relaxed)
        sequence.store(s &+ 2, ordering: .releasing)
    }

    /// The stream restarted (xrun, new device): events go to the next block until the next
    /// period starts the line again. Thread: audio.
    public func reset() {
        filter?.reset()
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        period.store(0, ordering: .relaxed)
        sequence.store(s &+ 2, ordering: .releasing)
    }

    /// The frame at `nanoseconds` on the audio clock, or nil before the first period.
    /// Thread: any.
    public func frame(atNanoseconds nanoseconds: UInt64) -> Double? { read(nanoseconds)?.frame }

    /// When an event that arrived at `nanoseconds` plays: one period after its place on
    /// the audio clock, and never before the block after the one being rendered (an event
    /// that arrived just before a period started but was read after it goes to the next
    /// block's first frame instead of being late). `EngineEvent.now` before the clock runs.
    /// Thread: any.
    public func scheduledFrame(arrivalNanoseconds nanoseconds: UInt64) -> Int64 {
        guard let (f, p, f0) = read(nanoseconds), f.isFinite, abs(f) < 1e17 else { return EngineEvent.now }
        return max(Int64(f.rounded(.down)), f0) + Int64(p)
    }

    /// One consistent reading of the published line, mapped at `nanoseconds`, with the
    /// first frame of the block being rendered.
    func read(_ nanoseconds: UInt64) -> (frame: Double, period: Int, blockStart: Int64)? {
        while true {
            let s1 = sequence.load(ordering: .acquiring)
            if s1 & 1 != 0 { continue }
            let f0 = frame0.load(ordering: .relaxed)
            let t0 = Double(bitPattern: time0Bits.load(ordering: .relaxed))
            let t1 = Double(bitPattern: time1Bits.load(ordering: .relaxed))
            let p = period.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            guard sequence.load(ordering: .relaxed) == s1 else { continue }
            guard p > 0, t1 > t0 else { return nil }
            return (Double(f0) + (Double(nanoseconds) - t0) / (t1 - t0) * Double(p), p, f0)
        }
    }
}
