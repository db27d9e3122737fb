/// Measures the drift between a capture clock and a playback clock and steers the rate at
/// which captured frames are consumed, so that the capture backlog (frames captured but not
/// yet played) stays at a target: the latency neither grows nor runs dry over a show of hours.
///
/// The measured quantity is the backlog, as zita-ajbridge and alsa_in measure it: the
/// frames waiting in the capture ring and in the converter, plus those the capture device
/// has captured since its last block, by its `CardClock`'s line (a capture card read once a
/// playback period instead, without a line, gives a backlog quantised to its position
/// steps: a slow sawtooth the loop follows, ±2.1 ms with whole 256-frame periods). When
/// the two cards' clocks are measured (`CardClock`s on both sides), their drift is fed
/// forward (`measuredDrift`) and the loop below only corrects what that misses.
///
/// The loop: the backlog's error from the target goes through two one-pole low-passes
/// (`smoothingSeconds` each: the steps must not jerk the ratio, a jerk is a pitch wobble)
/// into a PI controller whose output is the consumption rate's offset from 1: captured
/// frames consumed per played frame, minus 1. Its integral settles at the clocks' relative
/// drift (capture rate / playback rate - 1), the measured drift reported in ppm. The loop's
/// natural frequency is `bandwidthHz` (critically damped): a 100 ppm offset moves the
/// backlog by about δ·rate/ω = 4.8 / (2π·0.01) ≈ 76 frames (1.6 ms at 48 kHz) while it
/// settles (a minute), a step of 200 ppm twice that.
///
/// A plain value, no allocation. Thread: audio (the one owner).
public struct DriftController: Sendable {
    public private(set) var targetBacklog: Double
    public let sampleRate: Double
    let kp: Double
    let ki: Double
    let smoothing: Double
    /// The low-passed backlog error (frames).
    public private(set) var error: Double = 0
    private var firstStage: Double = 0
    /// The integral term: the measured drift (capture rate / playback rate - 1), or what
    /// `measured` misses of it once that is known.
    public private(set) var drift: Double = 0
    /// The drift measured from the two cards' clocks (`CardClock`), fed forward: the
    /// ratio follows a change of the clocks within seconds instead of the loop's minute.
    public private(set) var measured: Double?
    /// The consumption rate's offset from 1 that the last update chose.
    public private(set) var correction: Double = 0
    private var started = false

    /// - Parameters:
    ///   - targetBacklog: frames captured but not yet consumed to hold.
    ///   - bandwidthHz: the loop's natural frequency.
    ///   - smoothingSeconds: the backlog error's low-pass time constant.
    public init(targetBacklog: Double, sampleRate: Double, bandwidthHz: Double = 0.01, smoothingSeconds: Double = 2) {
        self.targetBacklog = targetBacklog
        self.sampleRate = sampleRate
        let omega = 2 * Double.pi * bandwidthHz / sampleRate  // per frame
        ki = omega * omega
        kp = 2 * omega  // damping 1
        smoothing = 1 / (smoothingSeconds * sampleRate)  // per frame
    }

    /// The capture rate's measured offset from the playback rate, in parts per million.
    public var driftPPM: Double { (drift + (measured ?? 0)) * 1e6 }

    /// The ratio libsamplerate is given (output frames per input frame).
    public var resamplingRatio: Double { 1 / (1 + correction) }

    /// The backlog before the next `frames` played frames are produced, and the drift the
    /// clocks measure if they do; returns the consumption rate offset to use for them.
    public mutating func update(backlog: Double, frames: Int, measuredDrift: Double? = nil) -> Double {
        if let m = measuredDrift {
            let bounded = min(max(m, -0.005), 0.005)
            measured = bounded
        }
        let e = backlog - targetBacklog
        let n = Double(frames)
        if !started {
            firstStage = e
            error = e
            started = true
        } else {
            let a = min(n * smoothing, 1)
            firstStage += a * (e - firstStage)
            error += a * (firstStage - error)
        }
        drift += ki * n * error
        // The clocks of two sound cards differ by far less than 1 % (crystals: ±100 ppm);
        // the bound keeps a wild reading (a stalled device) from steering the pitch audibly.
        drift = min(max(drift, -0.005), 0.005)
        correction = min(max((measured ?? 0) + drift + kp * error, -0.01), 0.01)
        return correction
    }

    /// Holds the backlog at `target` from now on (the error and the drift are kept).
    public mutating func setTarget(_ target: Double) {
        targetBacklog = target
    }

    /// Forgets the error (the ring was refilled to the target); the drift is kept.
    public mutating func restart() {
        started = false
        error = 0
    }
}
