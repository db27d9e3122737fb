import StageCore
import Synchronization

/// What every live backend does with one period, whichever driver brought it (ALSA's
/// `LiveAudio` loop, JACK's process callback): tell the player's clock the period started,
/// render, and publish the load and the peaks for the meters.
///
/// Thread: `renderPeriod` and `publishInputPeak` on the render thread (the backend's one
/// real-time thread: never allocates, locks or logs); `take` from any one reader thread.
public final class PeriodMeters: Sendable {
    let loadBits = Atomic<UInt32>(0)
    let peakInBits = Atomic<UInt32>(0)
    let peakOutBits = Atomic<UInt32>(0)

    public init() {}

    /// Renders one period of `frames` into `output` from `input`, timing it against the
    /// period's length. Thread: render.
    @inline(__always)
    public func renderPeriod(_ player: RackPlayer, input: AudioBus?, output: AudioBus, frames: Int, sampleRate: Double) {
        let t0 = monotonicNanoseconds()
        player.clock.periodStarted(frame: player.sampleTime, nanoseconds: t0, periodFrames: frames, sampleRate: sampleRate)
        player.render(frameCount: frames, input: input, output: output)
        let periodNanoseconds = Double(frames) / sampleRate * 1e9
        publishMax(Float(Double(monotonicNanoseconds() &- t0) / periodNanoseconds), loadBits)
        publishPeak(output, frames: frames, peakOutBits)
    }

    /// The input's peak, for the input meter. Thread: render.
    @inline(__always)
    public func publishInputPeak(_ input: AudioBus, frames: Int) { publishPeak(input, frames: frames, peakInBits) }

    /// The highest load and peaks since the last call, reset. Thread: any (one reader).
    public func take() -> (load: Float, peakIn: Float, peakOut: Float) {
        (Float(bitPattern: loadBits.exchange(0, ordering: .relaxed)),
         Float(bitPattern: peakInBits.exchange(0, ordering: .relaxed)),
         Float(bitPattern: peakOutBits.exchange(0, ordering: .relaxed)))
    }

    @inline(__always)
    private func publishPeak(_ bus: AudioBus, frames: Int, _ target: borrowing Atomic<UInt32>) {
        var peak: Float = 0
        for c in 0..<bus.channelCount {
            let p = bus[c]
            for i in 0..<frames { peak = max(peak, abs(p[i])) }
        }
        publishMax(peak, target)
    }

    @inline(__always)
    private func publishMax(_ value: Float, _ target: borrowing Atomic<UInt32>) {
        var old = target.load(ordering: .relaxed)
        while value > Float(bitPattern: old) {
            let (exchanged, now) = target.compareExchange(expected: old, desired: value.bitPattern, ordering: .relaxed)
            if exchanged { break }
            old = now
        }
    }
}

extension LiveAudio.Status {
    /// What another backend (JACK) has: xruns, meters and frames; the rest stays unset.
    public init(xruns: Int, load: Float, peakIn: Float, peakOut: Float, frames: Int) {
        self.init(xruns: xruns, load: load, peakIn: peakIn, peakOut: peakOut, frames: frames, lastXrun: nil)
    }
}
