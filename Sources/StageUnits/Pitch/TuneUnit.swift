import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// Pitch correction with a short variable delay; see `TuneUnitType` for the settings.
///
/// A correction moves a note by less than a semitone, so no analysis window is needed on
/// the audio path: the input goes through a delay line read by one tap (4-point cubic
/// interpolation) moving at the corrected rate r = 2^(correction/12). The tap's delay d
/// drifts by 1 − r a sample; when it leaves a window one period P wide around the nominal
/// 4.5 ms, it jumps by one period (refined to the best-matching lag within ±4 samples by
/// cross-correlation, so the splice lands on the same point of the waveform) and the old
/// and new taps crossfade over min(P, 2 ms). A steady note thus comes out at exactly r
/// times its pitch, and at r = 1 the unit is a pure delay.
///
/// The pitch comes from the pitch unit's YIN detector (`PitchDetector`, every 5.3 ms at
/// 48 kHz, at fixed absolute times). The target is the nearest note of the scale, or of the
/// held notes' pitch classes (0.1 semitone hysteresis); the correction is `amount` × (target
/// − sung), where "sung" blends the instantaneous pitch with its 150 ms average by
/// `humanize` (so that share of the vibrato is kept), and it moves to its target as an
/// exponential reaching 90 % in `speed` ms (0: at once). Unvoiced sound (an "s", breath)
/// is not corrected: the correction returns to 0 and the tap stands still, a pure delay.
///
/// Latency: a fixed 4.5 ms (216 frames at 48 kHz), reported by `latencyFrames`: the tap's
/// mean delay for voices from 135 Hz up (its window, P wide, fits between 4 samples and
/// 9 ms). Below, the window starts at 4 samples and the mean delay grows by half the extra
/// period. Thread: render (after prepare); `prepare` allocates everything.
public final class TuneUnit: RackUnit {
    public private(set) var latencyFrames: Int = 0
    let config: TuneConfiguration
    var sampleRate = 48000.0
    var ring: UnsafeMutablePointer<Float>?
    var size = 0
    var mask = 0
    var now: Int64 = 0
    var detector: PitchDetector?
    var hopMask: Int64 = 0
    /// Held keys (notes source).
    var held: UnsafeMutablePointer<UInt8>?
    var heldMask: UInt16 = 0
    /// The key (0 = C) and the scale in it, from the `key` parameter.
    var key = 0
    var scaleMask: UInt16 = 0

    // The tap and a splice in progress.
    var delay = 0.0
    var oldDelay = 0.0
    var fadeAt = 0
    var fadeLength = 0
    var period = 0.0
    var voiced = false
    /// Sung pitch (semitones, MIDI) and its slow average; the target note.
    var sung = 0.0
    var slow = 0.0
    var slowCoefficient = 0.0
    var target = -1
    /// The correction (semitones): where it is going and where it is.
    var goal = 0.0
    var correction = 0.0
    let margin = 4.0
    /// Difference values of the period refinement.
    var scratch: UnsafeMutablePointer<Float>?
    let scratchCount = 128
    /// The `speed` the follow coefficient was computed for.
    var followSpeed: Float = -1
    var follow = 1.0

    init(_ config: TuneConfiguration) { self.config = config }

    deinit { free() }

    func free() {
        ring?.deallocate()
        ring = nil
        detector?.deallocate()
        detector = nil
        held?.deallocate()
        held = nil
        scratch?.deallocate()
        scratch = nil
    }

    /// Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        free()
        guard spec.sampleRate >= 8000 else { throw UnitError("tune: sample rate \(spec.sampleRate) is too low") }
        sampleRate = spec.sampleRate
        latencyFrames = Int((0.0045 * sampleRate).rounded())
        let history = max(PitchDetector.historyNeeded(sampleRate: sampleRate), Int(0.03 * sampleRate))
        var s = 1
        while s < history + 64 { s <<= 1 }
        size = s
        mask = s - 1
        ring = .allocate(capacity: 2 * s)
        detector = PitchDetector(sampleRate: sampleRate)
        var hop = 1
        while Double(hop * 2) <= sampleRate * 0.0054 { hop *= 2 }
        hopMask = Int64(hop - 1)
        held = .allocate(capacity: 128)
        scratch = .allocate(capacity: scratchCount)
        slowCoefficient = 1 - exp(-Double(hop) / (0.15 * sampleRate))
        reset()
    }

    /// Thread: render, or control while not rendering.
    public func reset() {
        guard let ring, let held else { return }
        ring.update(repeating: 0, count: 2 * size)
        held.update(repeating: 0, count: 128)
        heldMask = 0
        key = config.key
        scaleMask = config.scaleMask
        detector?.reset()
        now = 0
        delay = Double(latencyFrames)
        oldDelay = delay
        fadeAt = 0
        fadeLength = 0
        period = 0
        voiced = false
        sung = 0
        slow = 0
        target = -1
        goal = 0
        correction = 0
        followSpeed = -1
    }

    public func render(_ context: RenderContext) {
        guard let ring, detector != nil else { return }
        let n = context.frameCount
        let input = context.inputs[0][0]
        let output = context.outputs[0][0]
        let p = context.parameters
        let speed = p[0]
        let amount = p[1]
        let humanize = p[2]
        let keys: UnsafePointer<Float>? = p.isSteady(3) ? nil : UnsafePointer(p[3])
        if keys == nil { follow(key: p.value(3)) }
        var e = 0
        let events = context.events
        for i in 0..<n {
            while e < events.count && Int(events[e].frameOffset) <= i {
                handle(events[e].message)
                e += 1
            }
            if let keys { follow(key: keys[i]) }
            let x = input[i]
            let slot = Int(now & Int64(mask))
            ring[slot] = x
            ring[slot + size] = x
            if (now + 1) & hopMask == 0 {
                heard(amount: Double(amount[i]) / 100, humanize: Double(humanize[i]) / 100)
            }
            if speed[i] != followSpeed {
                // 90 % of the way in `speed` ms: a time constant of speed / ln 10.
                followSpeed = speed[i]
                follow = followSpeed <= 0 ? 1 : 1 - exp(-log(10) / (Double(followSpeed) * sampleRate / 1000))
            }
            correction += (goal - correction) * follow
            output[i] = read(rate: Double(exp2f(Float(correction / 12))))
            now += 1
        }
    }

    /// The `key` parameter's value: the scale moves to the new key (the next analysis uses it).
    @inline(__always)
    func follow(key value: Float) {
        let k = Int(value)
        guard k != key else { return }
        scaleMask = HarmonyTheory.transpose(config.scaleMask, by: k - config.key)
        key = k
    }

    /// One output sample from the tap moving at `rate`. Thread: render.
    @inline(__always)
    func read(rate: Double) -> Float {
        let drift = 1 - rate
        delay += drift
        if fadeLength > 0 {
            oldDelay += drift
        } else if voiced && period > 0 {
            let low = max(margin, Double(latencyFrames) - period / 2)
            if delay < low || delay > low + period { splice(up: delay < low) }
        }
        var y = tap(delay)
        if fadeLength > 0 {
            let w = Float(fadeAt) / Float(fadeLength)
            y = w * y + (1 - w) * tap(oldDelay)
            fadeAt += 1
            if fadeAt >= fadeLength { fadeLength = 0 }
        }
        return y
    }

    /// Jumps the tap by the period (later when `up`, earlier otherwise), at the lag within
    /// ±4 samples whose waveform best matches the current one; starts the crossfade.
    func splice(up: Bool) {
        guard let ring else { return }
        let p = Int(period.rounded())
        let span = min(p, 128)
        let here = Int64((Double(now) - delay).rounded())
        var best = p
        var bestScore = -Float.infinity
        for lag in max(2, p - 4)...(p + 4) {
            let there = up ? here - Int64(lag) : here + Int64(lag)
            var score: Float = 0
            for k in 0..<span {
                score += ring[Int((here - Int64(k)) & Int64(mask))] * ring[Int((there - Int64(k)) & Int64(mask))]
            }
            if score > bestScore {
                bestScore = score
                best = lag
            }
        }
        let jump = Double(up ? best : -best)
        guard delay + jump >= margin, delay + jump < Double(size - 8) else { return }
        oldDelay = delay
        delay += jump
        fadeAt = 0
        fadeLength = max(1, min(best, Int(0.002 * sampleRate)))
    }

    /// The input `d` samples ago (Catmull-Rom cubic). Thread: render.
    @inline(__always)
    func tap(_ d: Double) -> Float {
        guard let ring else { return 0 }
        let t = Double(now) - d
        let whole = t.rounded(.down)
        let f = Float(t - whole)
        let i = Int64(whole)
        let base = Int((i - 1) & Int64(mask))
        let x0 = ring[base], x1 = ring[base + 1], x2 = ring[base + 2], x3 = ring[base + 3]
        let c1 = 0.5 * (x2 - x0)
        let c2 = x0 - 2.5 * x1 + 2 * x2 - 0.5 * x3
        let c3 = 0.5 * (x3 - x0) + 1.5 * (x1 - x2)
        return ((c3 * f + c2) * f + c1) * f + x1
    }

    /// After each detector analysis: the sung pitch, the target note, the correction goal.
    func heard(amount: Double, humanize: Double) {
        guard let ring else { return }
        detector!.analyze(ring: ring, mask: mask, now: now)
        let d = detector!
        let wasVoiced = voiced
        voiced = d.voiced && d.period > 0
        guard voiced else {
            goal = 0
            target = -1
            return
        }
        period = refined(d.period)
        sung = 69 + 12 * log2(sampleRate / period / 440)
        slow = wasVoiced ? slow + (sung - slow) * slowCoefficient : sung
        let heard = humanize * slow + (1 - humanize) * sung
        let notes = config.fromNotes ? heldMask : scaleMask
        guard notes != 0 else {
            goal = 0
            return
        }
        let nearest = Self.nearest(heard, in: notes)
        if target < 0 || abs(heard - Double(nearest)) + 0.1 < abs(heard - Double(target)) { target = nearest }
        goal = amount * (Double(target) - heard)
    }

    /// The detector's period (found at 8 kHz) refined at the input rate: the minimum of the
    /// squared difference over lags within ±3 % (at least ±3 samples), by a parabola; the
    /// window covers at least two periods and 5 ms. So 1 kHz is measured to about a cent.
    func refined(_ coarse: Double) -> Double {
        guard let ring, let difference = scratch else { return coarse }
        let centre = Int(coarse.rounded())
        let reach = max(3, Int(coarse * 0.03))
        let low = max(2, centre - reach)
        let high = min(centre + reach, low + scratchCount - 1)
        let window = min(max(2 * centre, Int(0.005 * sampleRate)), size / 2 - high - 4)
        guard window > 8 else { return coarse }
        // Each window is contiguous in the double-written ring from its own start.
        let start = now - Int64(window) + 1
        let current = UnsafePointer(ring + Int(start & Int64(mask)))
        var best = low
        for lag in low...high {
            let lagged = UnsafePointer(ring + Int((start - Int64(lag)) & Int64(mask)))
            difference[lag - low] = PitchKernels.squaredDistance(current, lagged, window)
            if difference[lag - low] < difference[best - low] { best = lag }
        }
        guard best > low && best < high else { return coarse }
        let a = difference[best - low - 1], b = difference[best - low], c = difference[best - low + 1]
        let denominator = a - 2 * b + c
        let offset = denominator > 0 ? Double(min(max(0.5 * (a - c) / denominator, -1), 1)) : 0
        return Double(best) + offset
    }

    /// The note of pitch-class set `notes` nearest to `pitch` (semitones).
    static func nearest(_ pitch: Double, in notes: UInt16) -> Int {
        let centre = Int(pitch.rounded())
        var best = centre
        var distance = Double.infinity
        for n in (centre - 7)...(centre + 7) where HarmonyTheory.contains(notes, n) && abs(pitch - Double(n)) < distance {
            best = n
            distance = abs(pitch - Double(n))
        }
        return best
    }

    /// Notes on the unit's channel and keys set the held pitch classes (notes source).
    func handle(_ m: MIDIMessage) {
        guard let held else { return }
        let key = Int(m.data1)
        switch m.kind {
        case .noteOn where m.data2 > 0:
            guard config.notes.takes(channel: m.channel, key: key) else { return }
            held[key] = 1
        case .noteOn, .noteOff:
            guard config.notes.takes(channel: m.channel, key: key) else { return }
            held[key] = 0
        case .controlChange where m.data1 == 120 || m.data1 == 123:
            held.update(repeating: 0, count: 128)
        default:
            return
        }
        var mask: UInt16 = 0
        for k in 0..<128 where held[k] != 0 { mask |= 1 << UInt16(k % 12) }
        heldMask = mask
    }
}
