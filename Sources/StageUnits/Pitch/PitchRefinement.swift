/// Sub-sample refinement of a period on the full-rate signal, for the tuner: the detector's
/// estimate (YIN on a decimated copy, good to a few cents) is refined on the input itself.
///
/// The squared difference d(τ) = Σ (x[t] − x[t − τ])² over the last `window` input samples
/// is evaluated at three lags around m·P (m = 1, 2, 4, … while m·P ≤ `maxLag`), followed
/// downhill to its minimum and refined by a parabola through the three values around it;
/// P becomes the minimum's lag over m. Each doubling halves the error a parabola leaves in
/// P (the error in lags is about the same at any lag, and it is divided by m), so a 2 kHz
/// tone (P = 24 samples at 48 kHz) is timed over 32 periods and a 40 Hz one over one
/// period of 1,200 samples. A steady tone: within 0.3 cent from 40 Hz to 2 kHz
/// (TunerTests). Allocates nothing. Thread: render.
enum PitchRefinement {
    /// The refined period in input samples, or `period` unchanged when the signal has no
    /// minimum near it. `ring` is double-written (`mask` = size − 1, size ≥ window + maxLag
    /// + 16); `now` is the absolute index of the last sample written.
    static func refine(
        period: Double, ring: UnsafePointer<Float>, mask: Int, now: Int64, window: Int, maxLag: Int
    ) -> Double {
        var p = period
        var m = 1
        let start = now - Int64(window) + 1
        let current = ring + Int(start & Int64(mask))
        @inline(__always) func d(_ lag: Int) -> Float {
            PitchKernels.squaredDistance(current, ring + Int((start - Int64(lag)) & Int64(mask)), window)
        }
        while Double(m) * p + 2 <= Double(maxLag) {
            var best = Int((Double(m) * p).rounded())
            guard best >= 2 else { return period }
            var a = d(best - 1), b = d(best), c = d(best + 1)
            // Downhill, a few steps at most (the estimate is within a lag or two).
            var steps = 0
            while steps < 4 && (a < b || c < b) {
                if a < b {
                    guard best - 2 >= 1 else { break }
                    best -= 1
                    c = b; b = a; a = d(best - 1)
                } else {
                    guard best + 2 <= maxLag else { break }
                    best += 1
                    a = b; b = c; c = d(best + 1)
                }
                steps += 1
            }
            guard b <= a && b <= c else { return p }
            let denominator = a - 2 * b + c
            var offset = 0.0
            if denominator > 0 { offset = Double(min(max(0.5 * (a - c) / denominator, -0.5), 0.5)) }
            p = (Double(best) + offset) / Double(m)
            m *= 2
        }
        return p
    }
}
