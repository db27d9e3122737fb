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
    public static func between(capture: PCMStream, playback: PCMStream) throws(ALSAError) -> DriftCompensator {
        let c = capture.configuration
        let p = playback.configuration.periodFrames
        return try DriftCompensator(
            channels: c.channels, sampleRate: Double(c.sampleRate), targetBacklog: c.periodFrames + p, maxReadFrames: p,
            capacityFrames: max(8 * (c.periodFrames + p), 2 * c.bufferFrames, 4096))
    }
}

extension LiveAudio {
    /// The measured drift, or nil when capture and playback share a clock. Thread: any.
    func driftReading() -> DriftReading? {
        guard drift != nil else { return nil }
        return DriftReading(
            ppm: Double(bitPattern: driftPPMBits.load(ordering: .relaxed)),
            ratio: Double(bitPattern: driftRatioBits.load(ordering: .relaxed)),
            shortFrames: driftShortFrames.load(ordering: .relaxed), droppedFrames: driftDroppedFrames.load(ordering: .relaxed))
    }

    /// One period of input from a capture card with its own clock: everything it has
    /// captured goes into the ring, then the period comes out resampled. The backlog the
    /// controller steers counts what the card held when its status was read (captured
    /// after the last read). A card that keeps no time (alsa-lib's
    /// `file` plugin over `null`) gives frames without end: it is read only up to the
    /// target, so it follows the playback clock. Never allocates. Thread: audio.
    func readDrifting(_ capture: PCMStream, through drift: DriftCompensator, into bus: AudioBus) throws(ALSAError) {
        guard let driftScratch else { return }
        let c = capture.configuration
        let scratch = driftScratch.bus(first: 0, channels: c.channels)
        let clocked = captureKeepsTime
        let target = Int(drift.controller.targetBacklog.rounded())
        while true {
            var n = capture.available()
            if n < 0 { throw ALSAError(function: "snd_pcm_avail_update", device: c.device, code: Int32(n)) }
            if !clocked { n = min(n, max(target - Int(drift.backlog(pendingFrames: 0).rounded(.down)), 0)) }
            guard n > 0 else { break }
            n = min(n, c.periodFrames)
            try capture.read(into: scratch, frames: n)
            drift.write(scratch, frames: n)
        }
        var pending = 0.0
        if clocked, let reading = capture.timestampedPosition() {
            pending = Double(min(max(reading.position - capture.transferred, 0), c.periodFrames))
        }
        drift.read(into: bus, frames: periodFrames, pendingFrames: pending)
        driftPPMBits.store(drift.driftPPM.bitPattern, ordering: .relaxed)
        driftRatioBits.store(drift.ratio.bitPattern, ordering: .relaxed)
        driftShortFrames.store(drift.shortFrames, ordering: .relaxed)
        driftDroppedFrames.store(drift.droppedFrames, ordering: .relaxed)
    }
}
