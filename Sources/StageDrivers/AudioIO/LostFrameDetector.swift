/// Finds frames a device lost without an ALSA error: a USB interface dropping a packet, a
/// capture that stalls and resumes. Each period the audio thread gives it the device's
/// status (`snd_pcm_status`: the timestamp and the position it had then, as the seed's
/// AudioTimeStamp pairs host time and sample time). Frames lost never come back, so the
/// position falls behind the time passed × the rate for good.
///
/// A device's position moves in steps (a USB packet a millisecond, a timer tick), so one
/// reading can lag by a step and the next catch up. The detector therefore keeps, over
/// windows of 0.2 s, the smallest lag of position behind time (the freshest reading);
/// that smallest lag moves only with the clocks' drift (100 ppm: 1 frame a window) unless
/// frames were lost. When it grows by more than `threshold` from one window to the next,
/// the growth is counted as lost frames: separately from xruns, which ALSA reports itself.
/// A gap is seen at most one window late; a gap shorter than the threshold (1 ms, or a
/// quarter period if that is more) is not seen. Pure: tested with synthetic timestamps.
/// Thread: audio (the one owner; `LiveAudio` publishes its counts).
public struct LostFrameDetector: Sendable {
    public let sampleRate: Double
    /// Growth of the smallest lag, in frames, that counts as a loss.
    public let threshold: Double
    /// The length of a window, in nanoseconds.
    public let window: UInt64 = 200_000_000
    private var origin: (nanoseconds: UInt64, position: Int)?
    private var windowStart: UInt64 = 0
    private var windowMin = Double.infinity
    private var previousMin: Double?
    /// Frames lost since start, and the gaps they were lost in.
    public private(set) var lostFrames = 0
    public private(set) var gaps = 0

    public init(sampleRate: Double, periodFrames: Int) {
        self.sampleRate = sampleRate
        threshold = max(Double(periodFrames) / 4, sampleRate / 1000)
    }

    /// The streams restarted (an xrun): positions and times start again.
    public mutating func restart() {
        origin = nil
        previousMin = nil
        windowMin = .infinity
    }

    /// One reading: the device's timestamp and its position (frames moved since the stream
    /// started). Returns the frames found lost with this reading (0 mostly).
    @discardableResult
    public mutating func observe(nanoseconds: UInt64, position: Int) -> Int {
        guard let origin else {
            self.origin = (nanoseconds, position)
            windowStart = nanoseconds
            return 0
        }
        guard nanoseconds >= origin.nanoseconds else { return 0 }
        let lag = Double(nanoseconds - origin.nanoseconds) * sampleRate / 1e9 - Double(position - origin.position)
        windowMin = min(windowMin, lag)
        guard nanoseconds - windowStart >= window else { return 0 }
        defer {
            previousMin = windowMin
            windowMin = .infinity
            windowStart = nanoseconds
        }
        guard let previousMin, windowMin - previousMin > threshold else { return 0 }
        let lost = Int((windowMin - previousMin).rounded())
        lostFrames += lost
        gaps += 1
        return lost
    }
}
