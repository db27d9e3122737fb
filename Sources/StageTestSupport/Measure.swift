#if canImport(Glibc)
import Glibc
#endif

/// Measurements on rendered audio, for tests: levels, frequencies, onsets, jumps.
/// Allocates freely; never for real-time use. Thread: any.
public enum Measure {
    public static func peak(_ x: ArraySlice<Float>) -> Float { x.reduce(0) { max($0, abs($1)) } }
    public static func peak(_ x: [Float]) -> Float { peak(x[...]) }

    public static func rms(_ x: ArraySlice<Float>) -> Float {
        guard !x.isEmpty else { return 0 }
        var s = 0.0
        for v in x { s += Double(v) * Double(v) }
        return Float((s / Double(x.count)).squareRoot())
    }
    public static func rms(_ x: [Float]) -> Float { rms(x[...]) }

    public static func decibels(_ linear: Float) -> Float { linear > 1e-12 ? 20 * log10f(linear) : -240 }

    /// A sine of `frequency` Hz, amplitude `amplitude`, `frames` long.
    public static func sine(frequency: Double, sampleRate: Double = 48000, frames: Int, amplitude: Float = 0.5) -> [Float] {
        (0..<frames).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / sampleRate)) }
    }

    /// The largest absolute difference between neighbouring samples.
    public static func maxJump(_ x: ArraySlice<Float>) -> Float {
        var m: Float = 0
        var prev: Float? = nil
        for v in x {
            if let p = prev { m = max(m, abs(v - p)) }
            prev = v
        }
        return m
    }
    public static func maxJump(_ x: [Float]) -> Float { maxJump(x[...]) }

    /// Magnitude of the component at `frequency` (Goertzel, Hann window), as a sine amplitude.
    public static func magnitude(at frequency: Double, in x: ArraySlice<Float>, sampleRate: Double = 48000) -> Double {
        let n = x.count
        guard n > 1 else { return 0 }
        let w = 2 * Double.pi * frequency / sampleRate
        let coeff = 2 * cos(w)
        var s1 = 0.0
        var s2 = 0.0
        var windowSum = 0.0
        for (i, v) in x.enumerated() {
            let win = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n - 1))
            windowSum += win
            let s0 = Double(v) * win + coeff * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = s1 * s1 + s2 * s2 - coeff * s1 * s2
        return 2 * max(power, 0).squareRoot() / windowSum
    }

    /// The frequency of the strongest spectral peak between `low` and `high` Hz, refined to
    /// well under a cent: coarse Goertzel scan, then golden-section search on the magnitude.
    public static func dominantFrequency(
        in x: ArraySlice<Float>, sampleRate: Double = 48000, low: Double = 30, high: Double = 5000
    ) -> Double {
        // Coarse scan in 1/4-semitone steps.
        var best = low
        var bestMag = -1.0
        var f = low
        while f <= high {
            let m = magnitude(at: f, in: x, sampleRate: sampleRate)
            if m > bestMag {
                bestMag = m
                best = f
            }
            f *= pow(2, 1.0 / 48)
        }
        var a = best * pow(2, -1.0 / 48)
        var b = best * pow(2, 1.0 / 48)
        let g = (5.0.squareRoot() - 1) / 2
        for _ in 0..<40 {
            let c = b - g * (b - a)
            let d = a + g * (b - a)
            if magnitude(at: c, in: x, sampleRate: sampleRate) > magnitude(at: d, in: x, sampleRate: sampleRate) {
                b = d
            } else {
                a = c
            }
        }
        return (a + b) / 2
    }

    /// Distance from `reference` to `frequency` in cents.
    public static func cents(_ frequency: Double, from reference: Double) -> Double {
        1200 * log2(frequency / reference)
    }

    /// The first frame whose absolute value exceeds `threshold`, if any.
    public static func onset(_ x: [Float], threshold: Float) -> Int? { x.firstIndex { abs($0) > threshold } }

    /// The first frame at which the RMS over `window` frames exceeds `threshold`.
    public static func envelopeOnset(_ x: [Float], threshold: Float, window: Int = 64) -> Int? {
        var sum: Double = 0
        for i in 0..<x.count {
            sum += Double(x[i] * x[i])
            if i >= window { sum -= Double(x[i - window] * x[i - window]) }
            if i >= window - 1, Float((sum / Double(window)).squareRoot()) > threshold { return i - window + 1 }
        }
        return nil
    }
}
