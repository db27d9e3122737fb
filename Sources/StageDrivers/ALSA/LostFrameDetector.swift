/// Finds frames a device lost without an ALSA error: a USB interface dropping a packet, a
/// capture that stalls and resumes. Each period the audio thread gives it the device's
/// own timestamp of its last position update and that position (`snd_pcm_status`: htstamp
/// with avail, as the seed's AudioTimeStamp pairs host time and sample time); over each
/// interval the position must advance by the time passed × the rate. When it falls behind
/// by more than `threshold` frames, the shortfall is counted as lost: separately from
/// xruns, which ALSA reports itself.
///
/// The threshold (half a period, at least 1 ms of frames) is far above the clocks' drift
/// (100 ppm is 0.01 frames over a 128-frame period) and the timestamps' jitter (a USB
/// device updates its position once a millisecond): a gap shorter than that is not seen.
/// Pure: tested with synthetic timestamps.
/// Thread: audio (the one owner; `LiveAudio` publishes its counts).
public struct LostFrameDetector: Sendable {
    public let sampleRate: Double
    /// A shortfall up to this many frames over one interval is jitter, not a loss.
    public let threshold: Double
    private var last: (nanoseconds: UInt64, position: Int)?
    /// Frames lost since start, and the gaps they were lost in.
    public private(set) var lostFrames = 0
    public private(set) var gaps = 0

    public init(sampleRate: Double, periodFrames: Int) {
        self.sampleRate = sampleRate
        threshold = max(Double(periodFrames) / 2, sampleRate / 1000)
    }

    /// The streams restarted (an xrun): positions and times start again.
    public mutating func restart() { last = nil }

    /// One reading: the device's timestamp of its position and the position (frames it
    /// has moved since the stream started). Returns the frames lost since the last reading.
    @discardableResult
    public mutating func observe(nanoseconds: UInt64, position: Int) -> Int {
        defer { last = (nanoseconds, position) }
        guard let last, nanoseconds > last.nanoseconds, position >= last.position else { return 0 }
        let expected = Double(nanoseconds - last.nanoseconds) * sampleRate / 1e9
        let shortfall = expected - Double(position - last.position)
        guard shortfall > threshold else { return 0 }
        let lost = Int(shortfall.rounded())
        lostFrames += lost
        gaps += 1
        return lost
    }
}
