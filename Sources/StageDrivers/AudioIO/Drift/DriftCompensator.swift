import CSampleRate
import StageCore
#if canImport(Glibc)
import Glibc
#endif

/// Capture on a card with its own clock: captured frames go into a ring, and each played
/// period takes its input from the ring through libsamplerate with a varying ratio, steered
/// by a `DriftController` so that the backlog stays at its target (adaptive resampling on
/// the capture side, as zita-ajbridge does). The latency stays put over hours of two
/// drifting clocks, and the ring neither runs dry nor overflows.
///
/// The ring is a linear buffer of interleaved samples, compacted when it would run off the
/// end (a copy of at most the backlog, a few periods). It starts holding `targetBacklog`
/// frames of silence. A read that finds too few frames plays silence for the missing part
/// and counts them (`shortFrames`); a write that would overflow drops the oldest frames and
/// counts them (`droppedFrames`); either refills the ring to the target.
///
/// Memory and the converter are allocated in `init` (control thread); `write` and `read`
/// never allocate, lock or log. Thread: audio (the one owner), after `init`.
public final class DriftCompensator: @unchecked Sendable {
    public let channels: Int
    public let capacityFrames: Int
    public let maxReadFrames: Int
    public private(set) var controller: DriftController
    private let ring: UnsafeMutablePointer<Float>
    private let out: UnsafeMutablePointer<Float>
    private let converter: OpaquePointer
    /// The ring's contents are `ring[start ..< end]` in frames.
    private var start = 0
    private var end = 0
    /// Frames played as silence because the ring was short, and frames dropped because it
    /// was full.
    public private(set) var shortFrames = 0
    public private(set) var droppedFrames = 0
    /// The target without `allowance`: the one `init` was given plus the lookahead.
    public let baseTarget: Int
    /// With `capturePeriod`: the pending frames (captured, not yet handed over) may exceed
    /// a capture period by this much, as measured over the first `learningFrames` played
    /// (a card whose position moves in steps hands its frames over in chunks of up to a
    /// period plus a step, and the wake-ups are late by their jitter): the target holds
    /// that much more (and `safetyFrames`), so the ring does not run dry before the next chunk.
    public private(set) var allowance = 0
    public let capturePeriod: Int?
    /// Added to what the pending frames were seen to need: the backlog moves by some tens of
    /// frames while the loop follows a change of the clocks (a 200 ppm step: 30).
    public static let safetyFrames = 32
    public let learningFrames: Int
    private var learnt = 0
    /// The ratio given to libsamplerate for the last read.
    public private(set) var ratio = 1.0
    /// Frames handed to libsamplerate since the last refill, and the input position (in
    /// those frames) of the last frame it made: it swallows input ahead into its own
    /// buffer, so the backlog is the ring's fill plus `given - position`. libsamplerate
    /// advances its position by 1/ratio per frame made (the ratio is set, not ramped,
    /// so this sum is exact to rounding).
    private var given = 0
    private var position = 0.0

    /// libsamplerate's converters this class offers (`SRC_SINC_*`).
    public enum Quality: Int32, Sendable {
        case best = 0, medium = 1, fastest = 2

        /// Input frames the converter needs beyond the frame it makes (half its filter:
        /// libsamplerate's coefficient half-length over its increment, 2464/128, 22438/491,
        /// 340239/2381), rounded up with room to spare: the backlog must never fall below
        /// one playback period plus this.
        public var lookaheadFrames: Int {
            switch self {
            case .fastest: return 32
            case .medium: return 64
            case .best: return 160
            }
        }
    }

    /// - Parameters:
    ///   - targetBacklog: frames captured but not yet played to hold, besides the
    ///     converter's lookahead which is added (`Quality.lookaheadFrames`): the latency
    ///     the compensation adds is their sum.
    ///   - maxReadFrames: the longest `read` (the playback period).
    ///   - capturePeriod: the capture card's period when `read`'s pending frames come from
    ///     a capture thread (`CaptureThread`): `allowance` is learnt; nil: not.
    public init(channels: Int, sampleRate: Double, targetBacklog: Int, maxReadFrames: Int, capacityFrames: Int? = nil,
                quality: Quality = .medium, bandwidthHz: Double = 0.02, capturePeriod: Int? = nil) throws(ALSAError) {
        self.capturePeriod = capturePeriod
        learningFrames = Int(4 * sampleRate)
        self.channels = max(channels, 1)
        self.maxReadFrames = maxReadFrames
        self.capacityFrames = capacityFrames ?? max(8 * targetBacklog, 4 * maxReadFrames, 4096)
        baseTarget = targetBacklog + quality.lookaheadFrames
        controller = DriftController(targetBacklog: Double(baseTarget), sampleRate: sampleRate, bandwidthHz: bandwidthHz)
        var error: Int32 = 0
        guard let c = src_new(quality.rawValue, Int32(self.channels), &error) else {
            throw ALSAError(function: "src_new (\(String(cString: src_strerror(error))))", device: "drift compensation", code: -22)
        }
        converter = c
        ring = .allocate(capacity: self.capacityFrames * self.channels)
        ring.initialize(repeating: 0, count: self.capacityFrames * self.channels)
        out = .allocate(capacity: maxReadFrames * self.channels)
        out.initialize(repeating: 0, count: maxReadFrames * self.channels)
        refill()
    }

    deinit {
        src_delete(converter)
        ring.deallocate()
        out.deallocate()
    }

    /// Frames waiting in the ring.
    public var fill: Int { end - start }

    /// The measured drift (capture against playback), in ppm.
    public var driftPPM: Double { controller.driftPPM }

    /// Empties the ring to `targetBacklog` frames of silence (less `pendingFrames`, which
    /// the capture card holds) and resets the converter and the loop's error (the drift it
    /// learnt is kept): a stream restart (xrun).
    public func refill(pendingFrames: Double = 0) {
        src_reset(converter)
        given = 0
        position = 0
        start = 0
        end = max(Int((controller.targetBacklog - pendingFrames).rounded()), 0)
        ring.update(repeating: 0, count: end * channels)
        controller.restart()
    }

    /// Appends `frames` captured frames from `bus` (missing channels are silent).
    public func write(_ bus: AudioBus, frames: Int) {
        guard frames > 0 else { return }
        if end + frames > capacityFrames { compact() }
        if end + frames > capacityFrames {
            // Full: the reader stopped. Drop everything; the target is silence again.
            droppedFrames += fill + frames
            refill()
            return
        }
        let base = ring + end * channels
        for c in 0..<channels {
            if c < bus.channelCount {
                let p = bus[c]
                for i in 0..<frames { base[i * channels + c] = p[i] }
            } else {
                for i in 0..<frames { base[i * channels + c] = 0 }
            }
        }
        end += frames
    }

    /// Frames captured and not yet played: the ring's, libsamplerate's, and `pending`.
    public func backlog(pendingFrames: Double) -> Double {
        Double(fill) + Double(given) - position + pendingFrames
    }

    /// Fills `frames` ≤ `maxReadFrames` of `bus` from the ring, resampled at the rate the
    /// controller chooses for the backlog with `pendingFrames` (those the capture device
    /// has captured and not yet handed over: its avail, and the frames since its last
    /// position update by the timestamp).
    /// `measuredDrift`: the drift the two cards' clocks measure, when known (fed forward).
    public func read(into bus: AudioBus, frames: Int, pendingFrames: Double, measuredDrift: Double? = nil) {
        if let capturePeriod, learnt < learningFrames { learn(pendingFrames, capturePeriod: capturePeriod, frames: frames) }
        let correction = controller.update(backlog: backlog(pendingFrames: pendingFrames), frames: frames, measuredDrift: measuredDrift)
        ratio = 1 / (1 + correction)
        src_set_ratio(converter, ratio)  // a step, not a ramp over the block: `position` stays exact
        var made = 0
        while made < frames {
            let want = frames - made
            let give = fill
            var data = SRC_DATA()
            data.data_in = UnsafePointer(ring + start * channels)
            data.input_frames = CLong(give)
            data.data_out = out + made * channels
            data.output_frames = CLong(want)
            data.src_ratio = ratio
            data.end_of_input = 0
            guard src_process(converter, &data) == 0 else { break }
            start += Int(data.input_frames_used)
            given += Int(data.input_frames_used)
            made += Int(data.output_frames_gen)
            position += Double(data.output_frames_gen) / ratio
            if data.output_frames_gen == 0 && (data.input_frames_used == 0 || fill == 0) { break }
        }
        for c in 0..<min(channels, bus.channelCount) {
            let p = bus[c]
            for i in 0..<made { p[i] = out[i * channels + c] }
            if made < frames { (p + made).update(repeating: 0, count: frames - made) }
        }
        for c in channels..<max(bus.channelCount, channels) { bus[c].update(repeating: 0, count: frames) }
        if made < frames {
            shortFrames += frames - made
            refill(pendingFrames: pendingFrames + Double(frames))  // the target is the backlog before a read
        }
    }

    /// Raises `allowance` to what `pending` needs, and puts the frames it adds into the
    /// ring as silence at once (in the first seconds only: the loop would take a minute).
    private func learn(_ pending: Double, capturePeriod: Int, frames: Int) {
        learnt += frames
        let excess = min(Int(pending.rounded(.up)) - capturePeriod + Self.safetyFrames, capturePeriod)
        guard excess > allowance else { return }
        let added = excess - allowance
        allowance = excess
        controller.setTarget(Double(baseTarget + allowance))
        if end + added > capacityFrames { compact() }
        guard end + added <= capacityFrames else { return }
        (ring + end * channels).update(repeating: 0, count: added * channels)
        end += added
    }

    /// Moves the ring's contents to its beginning.
    private func compact() {
        let n = fill
        if start > 0 { memmove(ring, ring + start * channels, n * channels * MemoryLayout<Float>.stride) }
        start = 0
        end = n
    }
}
