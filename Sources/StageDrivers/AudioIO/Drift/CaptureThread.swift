import CStageShim
import StageCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The capture side of `--drift-compensation` on a card that keeps time: a thread of its
/// own, woken by the capture card's periods (`snd_pcm_wait`), as zita-ajbridge's ALSA
/// thread is. At each wake-up it notes the time and the card's position (frames read +
/// avail) in a `CardClock` (a delay-locked loop), and reads what the card holds into
/// blocks of a fixed pool, each handed to the audio thread with the clock's line as it
/// stood. The audio thread (`take`) puts the blocks into its `DriftCompensator` and,
/// from the line, how many frames the card has captured since: the backlog the drift loop
/// steers is then measured at the moments the card's position moves, not quantised to
/// its steps (a whole period on many cards).
///
/// Two queues, each one producer and one consumer (`SPSCQueue`):
/// - `filled`: blocks (pool index, frames, the line), capture thread → audio thread;
/// - `free`: pool indices, audio thread → capture thread (taken, to reuse).
/// When no block is free (the audio thread stalled for the whole pool) the capture thread
/// reads the period into its spare block and drops it, and starts a new generation: the
/// audio thread refills its ring. An xrun on the capture card is recovered on the capture
/// thread (counted in `xruns`; a new generation too); a card that is gone (`ENODEV`) is
/// left, its error in `lostCode` for the audio thread to end the run with.
///
/// Memory is allocated in `init` (control thread). The capture thread (`stagerack-capt`,
/// SCHED_FIFO when allowed, one priority above the audio thread) never allocates, locks or
/// logs. Thread: `init` control; `start`, `take`, `stop` the audio thread (the one that
/// runs `LiveAudio.run`); the counters any.
public final class CaptureThread: @unchecked Sendable {
    /// One block handed over: `frames` frames in the pool's block `index`, the card's
    /// frames `end - frames ..< end` (counted since `start`).
    public struct Block: Sendable, BitwiseCopyable {
        var index: Int32
        var frames: Int32
        var generation: Int32
        var end: Int
        var clock: CardClock.Snapshot
    }

    public let source: any CaptureSource
    public let blockCount: Int
    let pool: BusStorage
    /// Producer: capture thread. Consumer: audio thread.
    let filled: SPSCQueue<Block>
    /// Producer: audio thread. Consumer: capture thread.
    let free: SPSCQueue<Int32>
    let stopRequested = Atomic<Bool>(false)
    /// Xruns recovered on the capture card, frames dropped for want of a free block.
    public let xruns = Atomic<Int>(0)
    public let droppedFrames = Atomic<Int>(0)
    /// The error of a card that is gone (negative errno), 0 while it is there.
    public let lostCode = Atomic<Int>(0)
    /// The measured rate of the card against CLOCK_MONOTONIC (ppm), as Double bits.
    let ratePPMBits = Atomic<UInt64>(0)
    private var thread: StageThread?

    // The capture thread's state.
    private var clock: CardClock
    private var read = 0
    private var generation: Int32 = 0
    private var epoch: UInt64 = 0

    // The audio thread's state.
    private var takenGeneration: Int32 = 0
    private var takenEnd = 0
    private var line: CardClock.Snapshot
    private var playbackClock: CardClock
    private var played = 0
    /// The ring is to be refilled to the target at the next `take` with a line: the streams
    /// (re)started, and what the card captured meanwhile (a start can take a while) would
    /// otherwise sit in the backlog for the loop to work off over minutes.
    private var fresh = true

    /// - Parameter blockCount: periods the pool holds (besides the spare one).
    public init(source: any CaptureSource, sampleRate: Double, playbackPeriod: Int, blockCount: Int = 32) {
        self.source = source
        self.blockCount = max(blockCount, 2)
        pool = BusStorage(bufferCount: source.channels * (self.blockCount + 1), maxFrames: source.periodFrames)
        filled = SPSCQueue(minimumCapacity: self.blockCount + 1)
        free = SPSCQueue(minimumCapacity: self.blockCount + 1)
        clock = CardClock(sampleRate: sampleRate, periodFrames: source.periodFrames)
        line = clock.snapshot
        playbackClock = CardClock(sampleRate: sampleRate, periodFrames: playbackPeriod)
    }

    /// The card's rate against CLOCK_MONOTONIC as the clock measured it. Thread: any.
    public var ratePPM: Double { Double(bitPattern: ratePPMBits.load(ordering: .relaxed)) }

    /// Seconds on the line's clock (CLOCK_MONOTONIC since `start`). Thread: any, once started.
    public func now() -> Double { Double(monotonicNanoseconds() &- epoch) * 1e-9 }

    /// Starts the card and the thread. Thread: audio (before its loop; creating the thread
    /// allocates, as the warm-up render may).
    public func start() throws {
        // A new run: the queues' sides get new owners; every block is free.
        filled.handOverProducer()
        filled.handOverConsumer()
        free.handOverProducer()
        free.handOverConsumer()
        while filled.pop() != nil {}
        for i in 0..<blockCount { _ = free.push(Int32(i)) }  // this thread: free's producer, filled's consumer
        stopRequested.store(false, ordering: .relaxed)
        lostCode.store(0, ordering: .relaxed)
        read = 0
        generation = 0
        takenGeneration = 0
        takenEnd = 0
        clock.restart()
        line = clock.snapshot
        playbackClock.restart()
        played = 0
        fresh = true
        epoch = monotonicNanoseconds()
        thread = try StageThread(.init(name: "stagerack-capt", realtimePriority: 71, stackBytes: StageThread.audioStack)) { [self] in run() }
    }

    /// Stops the thread and the card and waits for it. Thread: audio.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        thread?.join()
        thread = nil
    }

    /// Takes the blocks handed over into `drift`; returns the frames the card has captured
    /// beyond them at `time` (on the line; within 0 … `limit`), and the drift between the
    /// capture clock and the playback clock once both are settled. The playback card's
    /// clock is measured here: the audio thread calls this as it wakes for a period, after
    /// `frames` more have been played. Never allocates. Thread: audio.
    public func take(into drift: DriftCompensator, time: Double, limit: Double, played frames: Int) -> (pending: Double, drift: Double?) {
        played += frames
        playbackClock.observe(time: time, position: Double(played))
        while let b = filled.pop() {
            if b.generation != takenGeneration {
                fresh = true
                takenGeneration = b.generation
            }
            if !fresh { drift.write(pool.bus(first: Int(b.index) * source.channels, channels: source.channels), frames: Int(b.frames)) }
            takenEnd = b.end
            line = b.clock
            _ = free.push(b.index)
        }
        guard line.valid else { return (0, nil) }
        let pending = min(max(line.position(at: time) - Double(takenEnd), 0), limit)
        if fresh {
            drift.refill(pendingFrames: pending)
            fresh = false
        }
        let p = playbackClock.snapshot
        return (pending, line.settled && p.settled ? p.secondsPerFrame / line.secondsPerFrame - 1 : nil)
    }

    /// The playback stream restarted (an xrun): its line starts again. Thread: audio.
    public func playbackRestarted() {
        playbackClock.restart()
        fresh = true
    }

    /// The capture thread's loop.
    private func run() {
        stage_enable_flush_to_zero()
        do {
            try source.restart()
        } catch {
            lostCode.store(Int(error.code), ordering: .relaxed)
            return
        }
        while !stopRequested.load(ordering: .acquiring) {
            guard source.waitForPeriod(milliseconds: 100) else { continue }
            let time = now()
            let avail = source.available()
            do throws(ALSAError) {
                if avail < 0 { throw ALSAError(function: "snd_pcm_avail_update", device: source.deviceName, code: Int32(avail)) }
                guard avail >= source.periodFrames else { continue }
                clock.observe(time: time, position: Double(read + avail))
                ratePPMBits.store(clock.ratePPM.bitPattern, ordering: .relaxed)
                try readBlocks(avail)
            } catch {
                if error.isDeviceGone || !recover() {
                    lostCode.store(Int(error.code == 0 ? -5 : error.code), ordering: .relaxed)
                    break
                }
            }
        }
        source.stop()
    }

    /// Reads `frames` into blocks and hands them over.
    private func readBlocks(_ frames: Int) throws(ALSAError) {
        var left = frames
        let period = source.periodFrames
        while left > 0 {
            let n = min(left, period)
            let index = free.pop() ?? Int32(blockCount)  // the spare block: read and dropped
            try source.read(into: pool.bus(first: Int(index) * source.channels, channels: source.channels), frames: n)
            read += n
            left -= n
            if index == Int32(blockCount) {
                droppedFrames.add(n, ordering: .relaxed)
                generation &+= 1
                continue
            }
            let block = Block(index: index, frames: Int32(n), generation: generation, end: read, clock: clock.snapshot)
            if !filled.push(block) { _ = free.push(index) }  // cannot happen: the queue holds the whole pool
        }
    }

    /// After an xrun: the stream restarted, the line forgotten, a new generation.
    private func recover() -> Bool {
        xruns.add(1, ordering: .relaxed)
        do {
            try source.restart()
        } catch {
            return false
        }
        clock.restart()
        generation &+= 1
        return true
    }
}
