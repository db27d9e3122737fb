/// The capture card's position as a smooth function of time, from the moments its period
/// wake-ups happen: a delay-locked loop on the wake-up times (after Fons Adriaensen's
/// "Using a DLL to filter time", the method zita-ajbridge uses).
///
/// Why: a card whose position moves a whole period at a time (many PCI and firewire cards;
/// snd-aloop moves one timer tick, 192 frames at 48 kHz) read once a playback period gives
/// a backlog quantised to that step, and the two clocks slip past each other so slowly
/// that the quantisation is a sawtooth of tens of seconds, inside the drift loop's band:
/// the loop follows it (±2.1 ms of wander, THD+N −69 dB, measured before this). Taken at
/// the capture thread's wake-ups instead (the moments the card's position has just moved
/// by at least a period), each observation is a point on the card's time line, give or
/// take the wake-up's jitter, and the loop below draws the line through them.
///
/// The model: position n at time t is `position0 + (t − time0) / secondsPerFrame`. Each
/// observation (t, n) is compared with the time the model predicts for n; the error moves
/// `time0` by `b·e` and `secondsPerFrame` by `c·e` over the frames since the last one: a
/// second-order loop (critically damped at √2) of natural frequency `bandwidthHz`, which
/// follows a constant rate without error and averages the wake-up jitter away. An error
/// beyond `resetSeconds` (a stalled thread, a restarted stream) restarts the model there.
///
/// A plain value, no allocation. Thread: the capture thread updates it; a copy (a
/// `Snapshot`) travels with each captured block to the audio thread, which evaluates it.
public struct CardClock: Sendable {
    /// What the audio thread needs: the line, evaluated with `position(at:)`.
    public struct Snapshot: Sendable, BitwiseCopyable, Equatable {
        public var time0: Double
        public var position0: Double
        public var secondsPerFrame: Double
        /// False until the first observation.
        public var valid: Bool
        /// True once the loop has had a few seconds of observations: `secondsPerFrame` is
        /// the card's own.
        public var settled = false

        /// The card's position (frames, fractional) at `time` (seconds, the observations' clock).
        public func position(at time: Double) -> Double {
            position0 + (time - time0) / secondsPerFrame
        }
    }

    public let nominalSecondsPerFrame: Double
    let b: Double
    let c: Double
    let resetSeconds: Double
    public private(set) var snapshot: Snapshot
    /// Observations since the last (re)start, and the restarts after the first.
    public private(set) var observations = 0
    public private(set) var restarts = 0
    /// Observations before `Snapshot.settled` (3 s, 3 time constants of the loop at 0.1 Hz).
    public let settlingObservations: Int

    /// - Parameters:
    ///   - periodFrames: the capture period (the usual spacing of the observations).
    ///   - bandwidthHz: the loop's natural frequency.
    public init(sampleRate: Double, periodFrames: Int, bandwidthHz: Double = 0.1) {
        nominalSecondsPerFrame = 1 / sampleRate
        let omega = 2 * Double.pi * bandwidthHz * Double(periodFrames) / sampleRate
        b = 2.squareRoot() * omega
        c = omega * omega
        // Four periods, and at least 20 ms: a wake-up later than that is not jitter.
        resetSeconds = max(4 * Double(periodFrames) / sampleRate, 0.02)
        settlingObservations = Int(3 * sampleRate) / max(periodFrames, 1)
        snapshot = Snapshot(time0: 0, position0: 0, secondsPerFrame: 1 / sampleRate, valid: false)
    }

    /// The card's measured rate against the observations' clock, in ppm (+: faster).
    public var ratePPM: Double { (nominalSecondsPerFrame / snapshot.secondsPerFrame - 1) * 1e6 }

    /// The card's position was `position` frames at `time` seconds (a wake-up).
    public mutating func observe(time: Double, position: Double) {
        guard snapshot.valid else { return begin(time: time, position: position, secondsPerFrame: nominalSecondsPerFrame) }
        let frames = position - snapshot.position0
        guard frames > 0 else { return }
        let predicted = snapshot.time0 + frames * snapshot.secondsPerFrame
        let e = time - predicted
        guard abs(e) < resetSeconds else {
            restarts += 1
            return begin(time: time, position: position, secondsPerFrame: snapshot.secondsPerFrame)
        }
        snapshot.time0 = predicted + b * e
        snapshot.position0 = position
        let rate = snapshot.secondsPerFrame + c * e / frames
        // Within 1 % of nominal: a wild reading must not steer the line off.
        snapshot.secondsPerFrame = min(max(rate, nominalSecondsPerFrame * 0.99), nominalSecondsPerFrame * 1.01)
        observations += 1
        snapshot.settled = observations >= settlingObservations
    }

    /// Forgets the line (the stream restarted); the rate learnt is kept.
    public mutating func restart() {
        snapshot.valid = false
        observations = 0
    }

    private mutating func begin(time: Double, position: Double, secondsPerFrame: Double) {
        snapshot = Snapshot(time0: time, position0: position, secondsPerFrame: secondsPerFrame, valid: true)
        observations = 1
    }
}
