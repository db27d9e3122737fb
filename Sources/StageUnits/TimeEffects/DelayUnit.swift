#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import StageCore

/// `delay`: a feedback delay (echo) with a low-pass in the loop and tempo sync. Parameters
/// follow Apple's AUDelay (`delayTime`, `feedback`, `lopassCutoff`, `wetDryMix`) plus `sync`.
///
/// Defaults are for live vocals: 350 ms, feedback 30 % (repeats fall about 10 dB each),
/// low-pass 6 kHz (repeats darken and stay behind the voice), mix 20 % (the echo sits under
/// the dry voice).
///
/// - `delayTime` 0–2 s. 0 s is one sample (the loop needs one sample to exist). The time is
///   rounded to a whole sample (±0.5 sample, 10 µs at 48 kHz).
/// - `feedback` −100…100 %: the level of each repeat relative to the one before; negative
///   values invert every other repeat.
/// - `lopassCutoff` 10 Hz–24 kHz: a one-pole low-pass inside the loop, so every repeat is
///   filtered once more than the one before (the first repeat once). The range's upper
///   bound is fixed at 24 kHz (Nyquist at 48 kHz); at run time the cutoff is clamped to
///   0.49 × the sample rate.
/// - `wetDryMix` 0–100 %: linear mix, dry = 1 − wet; 0 passes the input unchanged.
/// - `sync`: "off" uses `delayTime`; a note value sets the time from the rack's tempo
///   (quarter note = one beat), e.g. "1/8 dotted" at 120 BPM is 375 ms. Times longer than
///   2 s are clamped to 2 s.
///
/// Channels follow the input; each channel is its own line (no cross-feed).
public struct DelayUnitType: UnitType {
    public init() {}
    public var name: String { "delay" }
    public var summary: String { "feedback delay with a low-pass in the loop and tempo sync (channels follow the input)" }

    /// The names of the `sync` choices, in parameter-value order.
    public static let syncChoices = [
        "off", "1/1", "1/2", "1/4", "1/4 dotted", "1/4 triplet", "1/8", "1/8 dotted", "1/8 triplet",
        "1/16", "1/16 dotted", "1/16 triplet",
    ]

    /// The length of sync choice `index` in beats (quarter notes); 0 for "off".
    /// Thread: any.
    @inline(__always)
    public static func syncBeats(_ index: Int) -> Double {
        switch index {
        case 1: return 4
        case 2: return 2
        case 3: return 1
        case 4: return 1.5
        case 5: return 2.0 / 3.0
        case 6: return 0.5
        case 7: return 0.75
        case 8: return 1.0 / 3.0
        case 9: return 0.25
        case 10: return 0.375
        case 11: return 1.0 / 6.0
        default: return 0
        }
    }

    /// Parameter indices, in declaration order.
    enum P {
        static let delayTime = 0
        static let feedback = 1
        static let lopassCutoff = 2
        static let wetDryMix = 3
        static let sync = 4
        static let feed = 5
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            // Not smoothed by the engine: the unit crossfades between read taps itself, and
            // a ramp would only make it chase intermediate times.
            ParameterSpec(
                id: "delayTime", name: "Delay time", unit: .seconds, range: 0...2, defaultValue: 0.35,
                smoothingSeconds: 0, help: "time between repeats (changes crossfade over 40 ms)"),
            ParameterSpec(
                id: "feedback", name: "Feedback", unit: .percent, range: -100...100, defaultValue: 30,
                smoothingSeconds: 0.02, help: "level of each repeat against the one before; negative inverts"),
            ParameterSpec(
                id: "lopassCutoff", name: "Low-pass cutoff", unit: .hertz, range: 10...24000, defaultValue: 6000,
                smoothingSeconds: 0.02, help: "one-pole low-pass in the loop (clamped under Nyquist)"),
            ParameterSpec(
                id: "wetDryMix", name: "Wet/dry mix", unit: .percent, range: 0...100, defaultValue: 20,
                smoothingSeconds: 0.02, help: "0 dry only, 100 echoes only"),
            .choice(
                id: "sync", name: "Tempo sync", choices: Self.syncChoices, defaultIndex: 0,
                help: "off: use delayTime; else a note value at the rack's tempo"),
            ParameterSpec(
                id: "feed", name: "Feed", unit: .percent, range: 0...100, defaultValue: 100, smoothingSeconds: 0.05,
                help: "share of the input fed into the echoes (Talk sets 0: the repeats ring out, the dry part stays)"),
        ]
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.any], outputs: [.sameAsInput(0)])
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { DelayUnit() }
}

/// The feedback delay. Thread: render (after prepare), except where noted.
///
/// Per channel, per sample t:
/// ```
/// y  = delay line read at the current tap (or a crossfade of two taps)
/// lp = b·lp + a·y                   one-pole low-pass, a = 1 − b, b = e^(−2π·fc/fs)
/// line ← x + sat(feedback · lp)     the loop
/// out = (1 − mix)·x + mix·lp
/// ```
/// The low-pass is evaluated in groups of four samples aligned on absolute time (t = 4k…4k+3):
/// with L the value before the group and h(j) = a·y(j),
/// lp(j) = b^(j+1)·L + ((h(j) + b·h(j−1)) + b²·h(j−2)) + b³·h(j−3)  (h before the group = 0).
/// That is the same filter, but the serial dependency the loop waits on is one multiply-add
/// per four samples instead of one per sample (Swift does not fuse multiply-adds), the
/// four lanes compute in SIMD, and it is the same arithmetic in every code path and for
/// every block size (`Lowpass.step` is the one-sample form). While the cutoff moves, each
/// sample uses its own pole for the whole expression (a negligible difference from the
/// textbook recursion during a 20 ms ramp).
///
/// Delay-time changes (parameter, `sync` or tempo) crossfade from the old tap to the new
/// one over 40 ms with a smoothstep curve; a change that arrives during a crossfade waits
/// for it to finish (so a moving knob gives a chain of crossfades). Nothing glides in
/// pitch and nothing jumps: the sample-to-sample change stays within the signal's own.
///
/// Bounded at |feedback| = 100 %: the recirculated part passes a soft saturator that is
/// exactly linear within ±1 (0 dBFS), bends with a quadratic knee (m − (m−1)²/4) and is
/// flat at ±2 from ±3 on, so the line never holds more than |input| + 2.
///
/// Silence and denormals: values written to the line below one 24-bit step (−144.5 dBFS)
/// become 0, so the repeats end in true silence; output samples below the smallest normal
/// float become 0; the low-pass state is flushed below 1e-30 every 32 samples of absolute
/// time. NaN and ±Inf never enter the line (they become 0); NaN never leaves as output.
/// Everything is computed per sample from absolute time, so the output does not depend on
/// block size (bit-exact across block sizes). A tempo change takes effect at the block where the engine
/// reports it (block-size dependent only because tempo is per block).
///
/// Cost: when nothing moves and the delay is at least one block long, groups of four run
/// in SIMD over contiguous runs of the line (a mirror of the ring's start follows its
/// end). Otherwise one per-sample loop with per-sample control values.
public final class DelayUnit: RackUnit {
    typealias P = DelayUnitType.P
    /// Crossfade length between read taps.
    public static let crossfadeSeconds = 0.04
    /// The longest delay time.
    public static let maxDelaySeconds = 2.0

    var sampleRate = 48000.0
    /// The input copy `feed` scales (FeedGate).
    var gate = FeedGate()
    var channels = 0
    var maxFrames = 0
    /// Delay lines, `channels × stride` floats: a ring of `size` (a power of two) followed
    /// by a mirror of its first `mirror` samples, so that a block's reads and writes are
    /// contiguous even where the ring wraps.
    var lines: UnsafeMutablePointer<Float>? = nil
    var size = 0
    var mask = 0
    var mirror = 0
    var stride = 0
    var writeIndex = 0
    var maxDelaySamples = 1
    /// Per channel filter state, 8 floats each (5 used, see `Lowpass`).
    var state: UnsafeMutablePointer<Float>? = nil

    // Read taps and crossfade (shared by all channels).
    var tapA = 1
    var tapB = 1
    /// Frames into the current crossfade (1…crossfadeFrames), 0 when idle.
    var fadeStep = 0
    var crossfadeFrames = 1920
    var inverseCrossfadeFrames: Float = 1.0 / 1920
    /// True until the first rendered sample sets the tap (after prepare and reset).
    var needsSnap = true

    /// Per-sample control values for blocks where something moves (tap-B gain, pole,
    /// feedback, wet; tap A, tap B): `maxFrames` each.
    var control: UnsafeMutablePointer<Float>? = nil
    var controlTaps: UnsafeMutablePointer<Int>? = nil

    // Last coefficient (the cutoff is usually steady).
    var cachedCutoff: Float = -1
    var cachedB: Float = 0

    /// tailSeconds as of the last rendered block (read from any thread), and what it was
    /// computed from.
    let tail = Atomic<Double>(0.35 + 0.04)
    var tailTap = -1
    var tailFeedback: Float = .nan
    var tailCutoff: Float = .nan

    public init() {}

    deinit { release() }

    func release() {
        gate.deallocate()
        lines?.deallocate()
        state?.deallocate()
        control?.deallocate()
        controlTaps?.deallocate()
        lines = nil
        state = nil
        control = nil
        controlTaps = nil
    }

    /// Allocates the lines (2 s each) and the control scratch. Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        guard spec.sampleRate > 0, spec.maxFrames > 0 else { throw UnitError("delay: bad sample rate or block size") }
        release()
        sampleRate = spec.sampleRate
        maxFrames = spec.maxFrames
        channels = max(1, spec.outputChannels.first ?? spec.inputChannels.first ?? 1)
        maxDelaySamples = Int((Self.maxDelaySeconds * sampleRate).rounded())
        size = 1
        while size < maxDelaySamples + 2 { size <<= 1 }
        mask = size - 1
        mirror = maxFrames + 8
        stride = size + mirror
        lines = .allocate(capacity: channels * stride)
        state = .allocate(capacity: 8 * channels)
        control = .allocate(capacity: 4 * maxFrames)
        controlTaps = .allocate(capacity: 2 * maxFrames)
        crossfadeFrames = max(1, Int((Self.crossfadeSeconds * sampleRate).rounded()))
        inverseCrossfadeFrames = 1 / Float(crossfadeFrames)
        cachedCutoff = -1
        lines!.initialize(repeating: 0, count: channels * stride)
        gate.prepare(channels: max(channels, spec.inputChannels.first ?? 1), maxFrames: maxFrames)
        state!.initialize(repeating: 0, count: 8 * channels)
        control!.initialize(repeating: 0, count: 4 * maxFrames)
        controlTaps!.initialize(repeating: 1, count: 2 * maxFrames)
        reset()
    }

    /// Clears the lines and the filter; the next sample takes its tap at once (no crossfade).
    /// Thread: render, or control while not rendering.
    public func reset() {
        if let lines { lines.update(repeating: 0, count: channels * stride) }
        if let state { state.update(repeating: 0, count: 8 * channels) }
        writeIndex = 0
        fadeStep = 0
        needsSnap = true
    }

    /// Time for the repeats to fall 60 dB (from the last rendered block's settings), capped
    /// at 30 s. Thread: any.
    public var tailSeconds: Double { tail.load(ordering: .relaxed) }

    /// The low-pass pole for cutoff `hz`: b = e^(−2π·fc/fs), fc clamped to 10 Hz…0.49·fs.
    @inline(__always)
    func pole(_ hz: Float) -> Float {
        if hz != cachedCutoff {
            let fc = min(max(Double(hz), 10), 0.49 * sampleRate)
            cachedCutoff = hz
            cachedB = Float(exp(-2 * Double.pi * fc / sampleRate))
        }
        return cachedB
    }

    /// The tap (in whole samples) for a delay time or a sync choice at `tempo`.
    @inline(__always)
    func targetTap(delayTime: Float, sync: Float, tempo: Double) -> Int {
        var seconds = Double(delayTime)
        if sync >= 0.5 {
            let bpm = tempo.isFinite && tempo > 0 ? tempo : 120
            seconds = DelayUnitType.syncBeats(Int(sync + 0.5)) * 60 / bpm
        }
        // Rounded to the nearest sample (plain arithmetic: `rounded()` is a libm call here).
        let frames = seconds * sampleRate + 0.5
        if !(frames >= 2) { return 1 }
        return frames >= Double(maxDelaySamples) ? maxDelaySamples : Int(frames)
    }

    public func render(_ context: RenderContext) {
        let p = context.parameters
        if FeedGate.isOpen(p, P.feed) || context.inputs[0].channelCount == 0 {
            renderLine(context)
        } else {
            renderLine(gate.gated(context, feed: p[P.feed]))
            FeedGate.restoreDry(context, outputs: min(context.outputs[0].channelCount, channels), mix: p[P.wetDryMix], feed: p[P.feed])
        }
    }

    /// The delay itself, on `context`'s input (the input, or its copy scaled by `feed`).
    /// Thread: render.
    func renderLine(_ context: RenderContext) {
        guard let lines, let state, let control, let controlTaps else { return }
        let n = context.frameCount
        if n <= 0 { return }
        let params = context.parameters
        let input = context.inputs[0]
        let output = context.outputs[0]
        if input.channelCount == 0 {
            output.clear(frames: n)
            return
        }
        let chans = min(output.channelCount, channels)
        let start = context.sampleTime

        let steady =
            params.isSteady(P.delayTime) && params.isSteady(P.feedback) && params.isSteady(P.lopassCutoff)
            && params.isSteady(P.wetDryMix) && params.isSteady(P.sync)
        var fastTap = -1
        if steady && fadeStep == 0 {
            let t = targetTap(delayTime: params.value(P.delayTime), sync: params.value(P.sync), tempo: context.tempo)
            if needsSnap {
                tapA = t
                needsSnap = false
            }
            // The steady path reads only samples written before this block.
            if t == tapA && t >= n { fastTap = t }
        }

        if fastTap > 0 {
            let b = pole(params.value(P.lopassCutoff))
            let fb = min(max(params.value(P.feedback) * 0.01, -1), 1)
            let wet = min(max(params.value(P.wetDryMix) * 0.01, 0), 1)
            let read = (writeIndex &- fastTap) & mask
            for c in 0..<chans {
                let line = lines + c * stride
                Self.runSteady(
                    src: input[min(c, input.channelCount - 1)], dst: output[c], read: line + read,
                    write: line + writeIndex, b: b, fb: fb, wet: wet, frames: n, start: start, state: state + 8 * c)
                syncMirror(line, from: writeIndex, frames: n, wroteAcrossEnd: true)
            }
        } else {
            fillControl(params, tempo: context.tempo, frames: n, control: control, taps: controlTaps)
            for c in 0..<chans {
                let line = lines + c * stride
                Self.runFused(
                    src: input[min(c, input.channelCount - 1)], dst: output[c], line: line, mask: mask,
                    write: writeIndex, state: state + 8 * c, control: control, taps: controlTaps, stride: maxFrames,
                    frames: n, start: start)
                syncMirror(line, from: writeIndex, frames: n, wroteAcrossEnd: false)
            }
        }
        for c in chans..<output.channelCount { output[c].update(repeating: 0, count: n) }
        writeIndex = (writeIndex + n) & mask
        publishTail(params, frames: n)
    }

    /// Per-sample control values for a block where something moves: gain of tap B, the
    /// pole, feedback and wet; and the two taps. Advances the crossfade state.
    @inline(__always)
    func fillControl(
        _ params: ParameterValues, tempo: Double, frames n: Int, control: UnsafeMutablePointer<Float>,
        taps: UnsafeMutablePointer<Int>
    ) {
        let stride = maxFrames
        let gB = control
        let pB = control + stride
        let pFb = control + 2 * stride
        let pWet = control + 3 * stride
        let tA = taps
        let tB = taps + stride
        let time = params[P.delayTime]
        let sync = params[P.sync]
        // Steady parameters are converted once (the same functions, so the same values).
        let steadyTarget = params.isSteady(P.delayTime) && params.isSteady(P.sync)
        let fixedTarget = targetTap(delayTime: time[0], sync: sync[0], tempo: tempo)
        for i in 0..<n {
            let target = steadyTarget ? fixedTarget : targetTap(delayTime: time[i], sync: sync[i], tempo: tempo)
            if needsSnap {
                tapA = target
                needsSnap = false
            }
            if fadeStep == 0 && target != tapA {
                tapB = target
                fadeStep = 1
            }
            if fadeStep > 0 {
                let t = Float(fadeStep) * inverseCrossfadeFrames
                gB[i] = t * t * (3 - 2 * t)
                tA[i] = tapA
                tB[i] = tapB
                if fadeStep >= crossfadeFrames {
                    tapA = tapB
                    fadeStep = 0
                } else {
                    fadeStep += 1
                }
            } else {
                gB[i] = 0
                tA[i] = tapA
                tB[i] = tapA
            }
        }
        if params.isSteady(P.lopassCutoff) {
            pB.update(repeating: pole(params.value(P.lopassCutoff)), count: n)
        } else {
            let cut = params[P.lopassCutoff]
            for i in 0..<n { pB[i] = pole(cut[i]) }
        }
        let fbv = params[P.feedback]
        for i in 0..<n { pFb[i] = min(max(fbv[i] * 0.01, -1), 1) }
        let mix = params[P.wetDryMix]
        for i in 0..<n { pWet[i] = min(max(mix[i] * 0.01, 0), 1) }
    }

    /// Restores the mirror after a block wrote `frames` samples from ring index `from`.
    /// The steady path writes contiguously past the ring's end (into the mirror), the
    /// fused path wraps; either way the ring and its mirror agree afterwards.
    @inline(__always)
    func syncMirror(_ line: UnsafeMutablePointer<Float>, from w: Int, frames n: Int, wroteAcrossEnd: Bool) {
        if wroteAcrossEnd && w + n > size {
            (line).update(from: line + size, count: w + n - size)
        }
        // Ring samples 0..<mirror that this block wrote, copied to the mirror.
        let end = w + n
        if w < mirror {
            let last = min(end, mirror)
            (line + size + w).update(from: line + w, count: last - w)
        }
        if end > size {
            let count = min(end - size, mirror)
            (line + size).update(from: line, count: count)
        }
    }

    /// Updates `tailSeconds` from the last frame's settings: the longest tap, the repeats'
    /// decay to −60 dB (|feedback| per repeat), the crossfade and the low-pass's own decay.
    /// Recomputed only when one of them changed.
    @inline(__always)
    func publishTail(_ params: ParameterValues, frames n: Int) {
        let last = n - 1
        let tap = fadeStep > 0 ? max(tapA, tapB) : tapA
        let feedback = params[P.feedback][last]
        let cutoff = params[P.lopassCutoff][last]
        if tap == tailTap && feedback == tailFeedback && cutoff == tailCutoff { return }
        tailTap = tap
        tailFeedback = feedback
        tailCutoff = cutoff
        let d = Double(tap) / sampleRate
        let g = Double(min(abs(feedback * 0.01), 1))
        var t = d + Self.crossfadeSeconds
        if g >= 0.999 {
            t = 30
        } else if g > 0.001 {
            t += d * 3 / -log10(g)
        }
        let fc = min(max(Double(cutoff), 10), 0.49 * sampleRate)
        t += 6.91 / (2 * Double.pi * fc)
        tail.store(min(t, 30), ordering: .relaxed)
    }
}
