import StageCore

/// What the drift compensation measures, for the status line, the meters and the log.
public struct DriftReading: Sendable, Equatable {
    /// The capture clock's offset from the playback clock, in ppm (+: capture runs fast).
    public var ppm: Double
    /// libsamplerate's ratio (output frames per captured frame).
    public var ratio: Double
    /// Frames played as silence because the capture ring ran dry, and frames dropped
    /// because it overflowed (both refill it to its target).
    public var shortFrames: Int
    public var droppedFrames: Int

    public init(ppm: Double, ratio: Double, shortFrames: Int = 0, droppedFrames: Int = 0) {
        self.ppm = ppm
        self.ratio = ratio
        self.shortFrames = shortFrames
        self.droppedFrames = droppedFrames
    }
}

extension DriftCompensator {
    /// A compensator for `capture` feeding `playback`'s periods: the ring's target is one
    /// capture period plus one playback period (the backlog never runs dry between the
    /// capture card's position updates), its room eight targets or two capture buffers.
    /// Thread: control.
    /// A capture card that keeps time is read by a `CaptureThread`: the target learns its
    /// `allowance`.
    public static func between(capture: PCMStream, playback: PCMStream) throws(ALSAError) -> DriftCompensator {
        let c = capture.configuration
        let p = playback.configuration.periodFrames
        return try DriftCompensator(
            channels: c.channels, sampleRate: Double(c.sampleRate), targetBacklog: c.periodFrames + p, maxReadFrames: p,
            capacityFrames: max(8 * (c.periodFrames + p), 2 * c.bufferFrames, 4096),
            capturePeriod: capture.keepsTime ? c.periodFrames : nil)
    }
}

extension LiveAudio {
    /// The measured drift, or nil when capture and playback share a clock. Thread: any.
    func driftReading() -> DriftReading? {
        guard drift != nil else { return nil }
        return DriftReading(
            ppm: Double(bitPattern: driftPPMBits.load(ordering: .relaxed)),
            ratio: Double(bitPattern: driftRatioBits.load(ordering: .relaxed)),
            shortFrames: driftShortFrames.load(ordering: .relaxed),
            droppedFrames: driftDroppedFrames.load(ordering: .relaxed) + (captureThread?.droppedFrames.load(ordering: .relaxed) ?? 0))
    }

    /// Starts `captureThread`, if any. Thread: audio, before its loop.
    func startCaptureThread() throws(ALSAError) {
        guard let captureThread else { return }
        do {
            try captureThread.start()
        } catch {
            throw ALSAError(function: "pthread_create (capture thread)", device: captureThread.source.deviceName, code: -11)
        }
    }

    /// One period of input from a capture card with its own clock, through the ring.
    /// A card that keeps time is read by `captureThread`: its blocks go into the ring, and
    /// the backlog the controller steers counts what the card has captured since, by the
    /// capture clock's line. A card that keeps no time (alsa-lib's `file` plugin over
    /// `null`) gives frames without end: it is read here, only up to the target, so it
    /// follows the playback clock. Never allocates. Thread: audio.
    func readDrifting(_ capture: PCMStream, through drift: DriftCompensator, into bus: AudioBus) throws(ALSAError) {
        let c = capture.configuration
        var pending = 0.0
        var measured: Double?
        if let captureThread {
            let lost = captureThread.lostCode.load(ordering: .relaxed)
            if lost != 0 { throw ALSAError(function: "snd_pcm_readi", device: c.device, code: Int32(lost)) }
            // No more pending than a chunk can bring (with room for the learning to see
            // more): a card whose clock stalls against CLOCK_MONOTONIC and catches up (a
            // VM's timer ticks) must not read as a backlog that is not there.
            let limit = Double(c.periodFrames + drift.allowance + 2 * DriftCompensator.safetyFrames)
            let taken = captureThread.take(into: drift, time: captureThread.now(), limit: limit, played: periodFrames)
            pending = taken.pending
            measured = taken.drift
        } else if let driftScratch {
            let scratch = driftScratch.bus(first: 0, channels: c.channels)
            let target = Int(drift.controller.targetBacklog.rounded())
            while true {
                var n = capture.available()
                if n < 0 { throw ALSAError(function: "snd_pcm_avail_update", device: c.device, code: Int32(n)) }
                n = min(n, max(target - Int(drift.backlog(pendingFrames: 0).rounded(.down)), 0), c.periodFrames)
                guard n > 0 else { break }
                try capture.read(into: scratch, frames: n)
                drift.write(scratch, frames: n)
            }
        }
        drift.read(into: bus, frames: periodFrames, pendingFrames: pending, measuredDrift: measured)
        driftPPMBits.store(drift.driftPPM.bitPattern, ordering: .relaxed)
        driftRatioBits.store(drift.ratio.bitPattern, ordering: .relaxed)
        driftShortFrames.store(drift.shortFrames, ordering: .relaxed)
        driftDroppedFrames.store(drift.droppedFrames, ordering: .relaxed)
    }
}
