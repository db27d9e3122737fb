#if canImport(Glibc)
import Glibc
#endif

/// Spectral shape measurements, for telling instruments apart: harmonic profiles and
/// their distance. Allocates freely; never for real-time use. Thread: any.
public enum SpectrumMeasure {
    /// Levels in dB (relative to the strongest) of harmonics 1…`count` of `fundamental`,
    /// each floored at `floor` dB.
    public static func harmonicProfile(
        _ x: ArraySlice<Float>, fundamental: Double, count: Int = 10, sampleRate: Double = 48000, floor: Double = -60
    ) -> [Double] {
        var mags: [Double] = []
        for k in 1...count {
            let f = fundamental * Double(k)
            mags.append(f < sampleRate / 2 ? Measure.magnitude(at: f, in: x, sampleRate: sampleRate) : 0)
        }
        let top = mags.max() ?? 0
        return mags.map { top > 0 && $0 > 0 ? max(20 * log10($0 / top), floor) : floor }
    }

    /// Root-mean-square difference, in dB, of two harmonic profiles.
    public static func profileDistance(_ a: [Double], _ b: [Double]) -> Double {
        let n = min(a.count, b.count)
        guard n > 0 else { return 0 }
        var s = 0.0
        for i in 0..<n { s += (a[i] - b[i]) * (a[i] - b[i]) }
        return (s / Double(n)).squareRoot()
    }

    /// RMS level in dB of `x[from..<to]` (−240 for silence).
    public static func level(_ x: [Float], from: Int, to: Int) -> Float {
        Measure.decibels(Measure.rms(x[max(0, from)..<min(to, x.count)]))
    }
}
