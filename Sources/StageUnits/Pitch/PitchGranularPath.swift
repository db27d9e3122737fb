#if canImport(Glibc)
import Glibc
#endif

/// The `any`-mode pitch shifter (and the `voice` mode's fallback at voiced onsets): two
/// read taps on the input history moving at the pitch ratio, crossfaded with Hann windows.
///
/// Each tap's delay changes by `1 − ratio` per sample, so it reads at `ratio` times the
/// input's speed. A phase φ advances by |1 − ratio| / grain per sample; tap A weighs
/// sin²(πφ) and tap B cos²(πφ), so the weights always sum to 1 and each tap is silent at
/// the moment it jumps back across the grain (A at φ = 0, B at φ = ½). A jump does not land
/// at a fixed distance: the new position is searched within ±`searchRadius` of the nominal
/// one for the best normalised correlation with the other tap's signal (WSOLA-style), so
/// that periodic input crossfades in phase: no comb filtering, no phase slips, and the
/// output frequency is exactly `ratio` times the input's. The nominal positions keep the
/// average delay at `latency`, whatever the ratio.
///
/// At ratio 1 (within ½ cent) the crossfade parks: φ moves to the nearest point where one
/// tap has all the weight, and that tap's delay glides (≤ 0.3 %, about 5 cents) to exactly
/// `latency`, so the unit then is a pure delay. Thread: render (state only; memory belongs
/// to the channel).
struct GranularPath {
    /// 2³²: delays are fixed point with 32 fractional bits; the phase wraps at 2³².
    static let one = 4_294_967_296.0
    static let half: UInt32 = 1 << 31

    /// Average delay in samples (the unit's latency).
    let latency: Double
    /// Shortest nominal delay and the grain (distance a tap travels between jumps).
    let minimumDelay: Double
    let grain: Double
    /// Jumps may land this many samples away from nominal to match phase.
    let searchRadius: Int
    /// Correlation window for the phase match.
    let matchWindow: Int
    /// Longest delay a tap may reach (ring capacity minus margins).
    let maximumDelay: Double
    let minimumFixed: Int64
    let maximumFixed: Int64
    let latencyFixed: Int64
    /// |1 − ratio| below which the crossfade parks.
    let parkThreshold: Double = 2.9e-4
    /// Phase change per sample while parking (a 50 ms crossfade at most).
    let parkPhaseStep: UInt32
    /// Delay change per sample while parking (0.3 %: a pitch deviation under 5 cents).
    let parkDelayStep = Int64(0.003 * 4_294_967_296.0)

    // Derived from the ratio, recomputed only when it changes.
    var cachedRatio: Float = .nan
    var delayStep: Int64 = 0
    var phaseStep: UInt32 = 0
    var parked = true
    var up = false

    /// φ in units of 2⁻³² of a cycle.
    var phase: UInt32 = GranularPath.half
    /// Tap delays in samples, fixed point 32.32.
    var delayA: Int64 = 0
    var delayB: Int64 = 0
    var pendingA = false
    var pendingB = false

    /// Thread: control.
    init(sampleRate: Double, latency: Int, historySize: Int) {
        self.latency = Double(latency)
        searchRadius = max(8, Int((sampleRate * 0.00333).rounded()))
        minimumDelay = Double(searchRadius + 4)
        grain = 2 * (Double(latency) - minimumDelay)
        matchWindow = max(32, Int((sampleRate * 0.00533 / 8).rounded()) * 8)
        maximumDelay = Double(historySize - matchWindow - 2 * searchRadius - 8)
        minimumFixed = Int64(3) << 32
        maximumFixed = Int64(maximumDelay) << 32
        latencyFixed = Int64(latency) << 32
        parkPhaseStep = UInt32(min(GranularPath.one * 5 / sampleRate, GranularPath.one / 8))
        reset()
    }

    /// Starts parked: tap A alone at exactly `latency`. Thread: render.
    mutating func reset() {
        cachedRatio = .nan
        phase = GranularPath.half
        delayA = latencyFixed
        delayB = Int64(minimumDelay) << 32
        pendingA = false
        pendingB = true
    }

    @inline(__always)
    static func fixed(_ delay: Double) -> Int64 { Int64(delay * one) }

    @inline(__always)
    static func samples(_ delay: Int64) -> Double { Double(delay) / one }

    /// Reads `ring` at a fixed-point `delay` behind absolute sample `now` (4-point
    /// Hermite). Wrapping arithmetic: only the position modulo the ring matters.
    @inline(__always)
    static func read(_ ring: UnsafePointer<Float>, _ mask: Int, _ now: Int64, _ delay: Int64) -> Float {
        let position = (now &<< 32) &- delay
        let whole = position >> 32
        let f = Float(UInt32(truncatingIfNeeded: position)) * (1 / 4_294_967_296.0)
        let p = ring + Int((whole &- 1) & Int64(mask))
        let xm1 = p[0]
        let x0 = p[1]
        let x1 = p[2]
        let x2 = p[3]
        let c1 = 0.5 * (x1 - xm1)
        let c2 = xm1 - 2.5 * x0 + 2 * x1 - 0.5 * x2
        let c3 = 0.5 * (x2 - xm1) + 1.5 * (x0 - x1)
        return ((c3 * f + c2) * f + c1) * f + x0
    }

    /// sin²(πφ) from the table (`table[i]` = sin²(π i / 1024), 1025 entries).
    @inline(__always)
    static func weight(_ table: UnsafePointer<Float>, _ phase: UInt32) -> Float {
        let i = Int(phase >> 22)
        let f = Float(phase & 0x3F_FFFF) * (1 / 4_194_304.0)
        return table[i] + f * (table[i + 1] - table[i])
    }

    /// Where a tap that jumps now should land, given the other tap's delay: nominally at
    /// the far end of the grain (`up`: delays fall, ratio > 1) or the near end (ratio < 1),
    /// moved within ±searchRadius to the lag of best normalised correlation between the
    /// two taps' recent signals. Thread: render.
    func jumpTarget(from other: Double, up: Bool, ring: UnsafePointer<Float>, mask: Int, now: Int64) -> Double {
        let nominal = up ? minimumDelay + grain : minimumDelay
        let nominalLag = abs(nominal - other)
        // Bounds: a rising tap must stay ≥ 3 after travelling one grain; a falling one must
        // not start below 3 nor end beyond the history.
        var low = nominalLag - Double(searchRadius)
        var high = nominalLag + Double(searchRadius)
        if up {
            low = max(low, grain + 3 - other)
            high = min(high, maximumDelay - other)
        } else {
            low = max(low, other + grain - maximumDelay)
            high = min(high, other - 3)
        }
        low = max(low, 1)
        if !(high >= low) { return min(max(nominal, 3), maximumDelay) }
        let lowLag = Int(low.rounded(.up))
        let highLag = Int(high.rounded(.down))
        if highLag < lowLag { return min(max(nominal, 3), maximumDelay) }

        // Reference: the other tap's last `matchWindow` samples (integer-aligned).
        let w = matchWindow
        let referenceEnd = now - Int64(other.rounded())
        let reference = ring + Int((referenceEnd - Int64(w) + 1) & Int64(mask))
        let direction: Int64 = up ? -1 : 1
        // Candidate energy for the first lag, then slid one sample per lag.
        let firstEnd = referenceEnd + direction * Int64(lowLag)
        let first = ring + Int((firstEnd - Int64(w) + 1) & Int64(mask))
        var energy = PitchKernels.dot(first, first, w)
        var bestLag = lowLag
        var bestScore = -Float.infinity
        let inverseRadius = 1 / Float(searchRadius)
        var lag = lowLag
        // Scores around the best lag so far (at bestLag − 1, bestLag, bestLag + 1).
        var scores = (Float(0), Float(0), Float(0))
        var previous: Float = 0
        var captureNext = false
        while lag <= highLag {
            let end = referenceEnd + direction * Int64(lag)
            let candidate = ring + Int((end - Int64(w) + 1) & Int64(mask))
            let c = PitchKernels.dot(reference, candidate, w)
            let distance = (Float(lag) - Float(nominalLag)) * inverseRadius
            let score = c / (energy + 1e-9).squareRoot() * (1 - 0.15 * distance * distance)
            if captureNext {
                scores.2 = score
                captureNext = false
            }
            if score > bestScore {
                bestScore = score
                bestLag = lag
                scores = (previous, score, score)
                captureNext = true
            }
            previous = score
            // Slide the candidate window one sample in `direction` for the next lag.
            let leaving = candidate[direction > 0 ? 0 : w - 1]
            let enteringIndex = direction > 0 ? Int((end + 1) & Int64(mask)) : Int((end - Int64(w)) & Int64(mask))
            let entering = ring[enteringIndex]
            energy = max(energy - leaving * leaving + entering * entering, 0)
            lag += 1
        }
        // Parabolic refinement when the peak is inside the range.
        var refined = Double(bestLag)
        if bestLag > lowLag && bestLag < highLag {
            let a = scores.0
            let b = scores.1
            let c = scores.2
            let denominator = a - 2 * b + c
            if denominator < -1e-9 { refined += Double(min(max(0.5 * (a - c) / denominator, -0.5), 0.5)) }
        }
        let target = up ? other + refined : other - refined
        return min(max(target, 3), maximumDelay)
    }

    /// Recomputes the per-sample steps for a new ratio. Thread: render.
    mutating func setRatio(_ ratio: Float) {
        cachedRatio = ratio
        let rate = 1 - Double(ratio)
        parked = !(abs(rate) > parkThreshold)
        up = rate < 0
        delayStep = Int64(rate * GranularPath.one)
        phaseStep = UInt32(min(abs(rate) / grain * GranularPath.one, GranularPath.one / 8))
    }

    /// One output sample at absolute time `now` (the ring already holds it). Thread: render.
    @inline(__always)
    mutating func process(
        ring: UnsafePointer<Float>, mask: Int, now: Int64, ratio: Float, table: UnsafePointer<Float>
    ) -> Float {
        if ratio != cachedRatio { setRatio(ratio) }
        if !parked {
            let old = phase
            let next = phase &+ phaseStep
            let jumpB = pendingB || (old < GranularPath.half && next >= GranularPath.half)
            let jumpA = pendingA || next < old
            phase = next
            delayA &+= delayStep
            delayB &+= delayStep
            if jumpB || jumpA { jump(a: jumpA, b: jumpB, ring: ring, mask: mask, now: now) }
            delayA = min(max(delayA, minimumFixed), maximumFixed)
            delayB = min(max(delayB, minimumFixed), maximumFixed)
        } else {
            park()
        }
        let wA = GranularPath.weight(table, phase)
        let wB = 1 - wA
        var out: Float = 0
        if wA > 0 { out += wA * GranularPath.read(ring, mask, now, delayA) }
        if wB > 0 { out += wB * GranularPath.read(ring, mask, now, delayB) }
        return out
    }

    /// Lands the silent tap(s) at their phase-matched positions. Thread: render.
    mutating func jump(a: Bool, b: Bool, ring: UnsafePointer<Float>, mask: Int, now: Int64) {
        if b {
            let target = jumpTarget(from: GranularPath.samples(delayA), up: up, ring: ring, mask: mask, now: now)
            delayB = GranularPath.fixed(target)
            pendingB = false
        }
        if a {
            let target = jumpTarget(from: GranularPath.samples(delayB), up: up, ring: ring, mask: mask, now: now)
            delayA = GranularPath.fixed(target)
            pendingA = false
        }
    }

    /// Ratio 1: move the crossfade to the nearest single-tap point and that tap to
    /// `latency`. Thread: render.
    @inline(__always)
    mutating func park() {
        let quarter: UInt32 = 1 << 30
        if phase >= 3 * quarter {
            let next = phase &+ parkPhaseStep
            phase = next < phase ? 0 : next
        } else if phase < quarter {
            phase = phase > parkPhaseStep ? phase - parkPhaseStep : 0
        } else if phase < GranularPath.half {
            phase = GranularPath.half - phase > parkPhaseStep ? phase + parkPhaseStep : GranularPath.half
        } else if phase > GranularPath.half {
            phase = phase - GranularPath.half > parkPhaseStep ? phase - parkPhaseStep : GranularPath.half
        }
        if phase == 0 { pendingA = true }
        if phase == GranularPath.half { pendingB = true }
        if phase > quarter && phase < 3 * quarter {
            delayA += min(max(latencyFixed - delayA, -parkDelayStep), parkDelayStep)
        } else {
            delayB += min(max(latencyFixed - delayB, -parkDelayStep), parkDelayStep)
        }
    }
}
