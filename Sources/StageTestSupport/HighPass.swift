#if canImport(Glibc)
import Glibc
#endif

extension SpectrumMeasure {
    /// `x` through a 4th-order high-pass at `cutoff` Hz (two 2nd-order Butterworth
    /// sections, Q 0.7071), in Double: for "the energy above 4 kHz" of sibilants and breath.
    public static func highPassed<C: Collection>(_ x: C, cutoff: Double = 4000, sampleRate: Double = 48000) -> [Double]
    where C.Element == Float {
        var y = x.map(Double.init)
        let w0 = 2 * Double.pi * cutoff / sampleRate
        let alpha = sin(w0) / (2 * 0.7071)
        let a0 = 1 + alpha
        let b = [(1 + cos(w0)) / 2 / a0, -(1 + cos(w0)) / a0, (1 + cos(w0)) / 2 / a0]
        let a = [-2 * cos(w0) / a0, (1 - alpha) / a0]
        for _ in 0..<2 {
            var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
            for i in y.indices {
                let v = b[0] * y[i] + b[1] * x1 + b[2] * x2 - a[0] * y1 - a[1] * y2
                x2 = x1
                x1 = y[i]
                y2 = y1
                y1 = v
                y[i] = v
            }
        }
        return y
    }
}
