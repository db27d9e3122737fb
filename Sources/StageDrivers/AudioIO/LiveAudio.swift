import CStageShim
import StageCore
import Synchronization

/// The live I/O unit of AUGraph for Linux: ALSA capture (the microphone) and playback
/// (the speakers), duplex, driving a `RackPlayer` one period at a time.
///
/// Capture and playback are linked (or started together), capture is started explicitly,
/// playback is pre-filled with silence. Xruns are recovered and counted, never fatal. A
/// device error that is not an xrun ends `run` with `.deviceLost` so the caller can reopen.
///
/// At the start of each period's render it tells the player's `AudioClock` the frame and
/// the time, so live MIDI lands on its frame. A device that keeps no time (alsa-lib's
/// `file` and `null` plugins: writes return at once) is paced to the wall clock instead
/// (`isPaced`), so a run on them takes as long as the audio it plays.
/// Thread: `run` on the audio thread; `status`, `requestStop` from any thread.
public final class LiveAudio: @unchecked Sendable {
    public let playback: PCMStream
    public let capture: PCMStream?
    public let player: RackPlayer
    public let periodFrames: Int
    public let linked: Bool
    /// The playback device keeps no time of its own: `run` sleeps to the wall clock.
    public let isPaced: Bool
    /// Stop after this many frames (tests, `--duration`); nil runs until stopped.
    public let frameLimit: Int?

    // Published to other threads.
    let xrunCount = Atomic<Int>(0)
    /// The last xrun: 1 capture, 2 playback; and its errno (negative).
    let lastXrunSide = Atomic<Int>(0)
    let lastXrunCode = Atomic<Int>(0)
    /// Load and peaks, published by the period's render (`PeriodRender.swift`, shared with JACK).
    let meters = PeriodMeters()
    let framesDone = Atomic<Int>(0)
    /// Frames the device lost without an ALSA error, and the gaps (`LostFrameDetector`).
    let lostFrames = Atomic<Int>(0)
    let lostGaps = Atomic<Int>(0)
    let stopRequested = Atomic<Bool>(false)

    let inputBus: AudioBus?
    let outputStorage: BusStorage
    let inputStorage: BusStorage?
    /// Capture on a card with its own clock (`LiveAudio+Drift.swift`): nil when capture
    /// and playback share a clock (one card, linked).
    let drift: DriftCompensator?
    /// One capture period, read from the device before it enters `drift`'s ring.
    let driftScratch: BusStorage?
    /// The capture device has a clock (not alsa-lib's `null` behind a `file` plugin).
    let captureKeepsTime: Bool
    /// With `drift` and a capture device that keeps time: the thread that reads it, woken
    /// by its periods (it owns the capture stream while `run` runs).
    let captureThread: CaptureThread?
    /// The measured drift (ppm) and the resampling ratio, as Double bits.
    let driftPPMBits = Atomic<UInt64>(0)
    let driftRatioBits = Atomic<UInt64>(1.0.bitPattern)
    let driftShortFrames = Atomic<Int>(0)
    let driftDroppedFrames = Atomic<Int>(0)

    public enum Outcome: Sendable {
        case stopped
        case finished
        case deviceLost(ALSAError)
    }

    /// What happened since the last call: peaks and the highest load are reset on reading.
    public struct Status: Sendable {
        public var xruns: Int
        /// Render time over period time, the highest since the last status.
        public var load: Float
        public var peakIn: Float
        public var peakOut: Float
        public var frames: Int
        /// Where the last xrun happened ("capture"/"playback") and ALSA's code, if any.
        public var lastXrun: (side: String, code: Int)?
        /// Frames lost without an ALSA error (not xruns), and in how many gaps.
        public var lostFrames = 0
        public var lostGaps = 0
        /// With capture on another card (`compensateDrift`): the capture clock's measured
        /// offset from playback's in ppm, libsamplerate's ratio, and frames the ring ran
        /// short or dropped; nil when capture and playback share a clock.
        public var drift: DriftReading?
        /// The tempo the playing rack follows (BPM) and its source (nil: none, 120 BPM).
        public var tempo = TempoSources.fallback
        public var tempoSource: TempoSource?
    }

    /// Records the show (`play --record`): fed every period, never waited for.
    public let recorder: ShowRecorder?

    /// - Parameter drift: capture is on another card with its own clock: it is read as it
    ///   comes and resampled to the playback clock through this compensator
    ///   (`DriftCompensator.between(capture:playback:)`); nil: one clock, linked streams.
    public init(playback: PCMStream, capture: PCMStream?, player: RackPlayer, frameLimit: Int? = nil, recorder: ShowRecorder? = nil,
                drift: DriftCompensator? = nil) {
        self.recorder = recorder
        self.playback = playback
        self.capture = capture
        self.player = player
        self.frameLimit = frameLimit
        periodFrames = playback.configuration.periodFrames
        isPaced = !playback.keepsTime
        captureKeepsTime = capture?.keepsTime ?? false
        outputStorage = BusStorage(bufferCount: max(playback.configuration.channels, 2), maxFrames: periodFrames)
        if let capture {
            let storage = BusStorage(bufferCount: capture.configuration.channels, maxFrames: periodFrames)
            inputStorage = storage
            inputBus = storage.bus(first: 0, channels: capture.configuration.channels)
            if let drift {
                self.drift = drift
                driftScratch = BusStorage(bufferCount: capture.configuration.channels, maxFrames: capture.configuration.periodFrames)
                captureThread = captureKeepsTime ? CaptureThread(
                    source: capture, sampleRate: Double(capture.configuration.sampleRate), playbackPeriod: periodFrames) : nil
                linked = false
            } else {
                self.drift = nil
                driftScratch = nil
                captureThread = nil
                linked = capture.link(playback)
            }
        } else {
            inputStorage = nil
            inputBus = nil
            linked = false
            self.drift = nil
            driftScratch = nil
            captureThread = nil
        }
    }

    deinit {
        if linked { capture?.unlink() }
    }

    /// Asks the audio thread to fade out and stop. Thread: any.
    public func requestStop() {
        player.requestFadeOut()
        stopRequested.store(true, ordering: .releasing)
    }

    /// Reads and resets the meters. Thread: any (one reader).
    public func status() -> Status {
        let m = meters.take()
        var s = Status(
            xruns: xrunCount.load(ordering: .relaxed) + (captureThread?.xruns.load(ordering: .relaxed) ?? 0),
            load: m.load, peakIn: m.peakIn, peakOut: m.peakOut,
            frames: framesDone.load(ordering: .relaxed),
            lastXrun: lastXrunSide.load(ordering: .relaxed) == 0
                ? nil
                : (lastXrunSide.load(ordering: .relaxed) == 1 ? "capture" : "playback", lastXrunCode.load(ordering: .relaxed)))
        s.lostFrames = lostFrames.load(ordering: .relaxed)
        s.lostGaps = lostGaps.load(ordering: .relaxed)
        s.drift = driftReading()
        (s.tempo, s.tempoSource) = player.playingTempo
        return s
    }

    /// Starts both streams from silence: prepare, pre-fill playback, start (linked or one
    /// after the other). Capture read by `captureThread` is that thread's. Thread: audio.
    func startStreams() throws(ALSAError) {
        let capture = captureThread == nil ? capture : nil
        try playback.prepare()
        if let capture, !linked { try capture.prepare() }
        for _ in 0..<max(playback.configuration.periods, 1) { try playback.writeSilence(frames: periodFrames) }
        if let capture {
            try capture.start()  // starts playback too when linked
            if !linked { try playback.start() }
        } else {
            try playback.start()
        }
    }

    /// Recovers from an xrun on either stream by restarting both in sync. Thread: audio.
    func recoverXrun() throws(ALSAError) {
        xrunCount.add(1, ordering: .relaxed)
        player.clock.reset()  // the streams restart: a new line through new period times
        playback.drop()
        if captureThread == nil { capture?.drop() }
        drift?.refill()
        captureThread?.playbackRestarted()
        try startStreams()
    }

    /// Runs the duplex loop until stopped, the frame limit, or a lost device. Never
    /// allocates while running. Thread: audio (the real-time thread).
    public func run() -> Outcome {
        stage_enable_flush_to_zero()
        let output = outputStorage.bus(first: 0, channels: outputStorage.bufferCount)
        // No warm-up block here: the rack was warmed on the control thread before it came
        // (`RackLoader`), and a reset here would reset LV2 plugins on the audio thread. After
        // a lost device the rack plays on with its state kept.
        player.clock.reset()
        do {
            try startCaptureThread()
            try startStreams()
        } catch {
            captureThread?.stop()
            return .deviceLost(error)
        }
        defer { captureThread?.stop() }
        let rate = Double(playback.configuration.sampleRate)
        let pacedStart = monotonicNanoseconds()
        var frames = 0
        // Samples lost without an ALSA error: the capture's timestamps (else playback's).
        var lost = LostFrameDetector(sampleRate: rate, periodFrames: periodFrames)
        let watched = captureThread == nil ? capture ?? playback : playback
        while true {
            if stopRequested.load(ordering: .relaxed) && player.isFadedOut { break }
            if let limit = frameLimit, frames >= limit {
                if captureThread == nil { capture?.drop() }
                playback.drain()  // everything rendered is heard
                return .finished
            }
            do {
                if let capture, let inputBus {
                    if let drift {
                        try readDrifting(capture, through: drift, into: inputBus)
                    } else {
                        try capture.read(into: inputBus, frames: periodFrames)
                    }
                    meters.publishInputPeak(inputBus, frames: periodFrames)
                }
                meters.renderPeriod(player, input: inputBus, output: output, frames: periodFrames, sampleRate: rate)
                recorder?.take(input: inputBus, output: output, frames: periodFrames)
                try playback.write(from: output, frames: periodFrames)
                if !isPaced, let reading = watched.timestampedPosition(),
                    lost.observe(nanoseconds: reading.nanoseconds, position: reading.position) > 0
                {
                    lostFrames.store(lost.lostFrames, ordering: .relaxed)
                    lostGaps.store(lost.gaps, ordering: .relaxed)
                }
                frames += periodFrames
                framesDone.store(frames, ordering: .relaxed)
                if isPaced { sleepUntil(pacedStart &+ UInt64(Double(frames) / rate * 1e9)) }
            } catch {
                // A capture card its thread could not bring back is lost too.
                if error.isDeviceGone || captureThread?.lostCode.load(ordering: .relaxed) ?? 0 != 0 { return .deviceLost(error) }
                lastXrunSide.store(error.device == playback.configuration.device ? 2 : 1, ordering: .relaxed)
                lastXrunCode.store(Int(error.code), ordering: .relaxed)
                lost.restart()
                do {
                    try recoverXrun()
                } catch {
                    return .deviceLost(error)
                }
            }
        }
        // Let the faded-out tail play, then stop.
        for _ in 0..<max(playback.configuration.periods, 1) {
            do { try playback.writeSilence(frames: periodFrames) } catch { break }
        }
        playback.drop()
        if captureThread == nil { capture?.drop() }
        return .stopped
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Sleeps until CLOCK_MONOTONIC reaches `nanoseconds` (returns at once if it has).
@inline(__always)
func sleepUntil(_ nanoseconds: UInt64) {
    var ts = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
}

@inline(__always)
func sleepMicroseconds(_ us: Int) {
    var ts = timespec(tv_sec: us / 1_000_000, tv_nsec: (us % 1_000_000) * 1000)
    nanosleep(&ts, nil)
}
