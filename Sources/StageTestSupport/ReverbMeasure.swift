#if canImport(Glibc)
import Glibc
#endif

/// Measurements of reverbs for tests: octave-band filtering, Schroeder decay curves and
/// RT60, spectra of tails and their peaks, correlation. Double precision throughout.
/// Allocates freely; never for real-time use. Thread: any.
public enum ReverbMeasure {
    // MARK: Filters

    /// A biquad section (RBJ cookbook), run in Double.
    struct Biquad {
        var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0

        static func lowpass(_ f: Double, q: Double, sampleRate: Double) -> Biquad {
            let w = 2 * Double.pi * f / sampleRate
            let alpha = sin(w) / (2 * q)
            let c = cos(w)
            let a0 = 1 + alpha
            return Biquad(b0: (1 - c) / 2 / a0, b1: (1 - c) / a0, b2: (1 - c) / 2 / a0, a1: -2 * c / a0, a2: (1 - alpha) / a0)
        }

        static func highpass(_ f: Double, q: Double, sampleRate: Double) -> Biquad {
            let w = 2 * Double.pi * f / sampleRate
            let alpha = sin(w) / (2 * q)
            let c = cos(w)
            let a0 = 1 + alpha
            return Biquad(b0: (1 + c) / 2 / a0, b1: -(1 + c) / a0, b2: (1 + c) / 2 / a0, a1: -2 * c / a0, a2: (1 - alpha) / a0)
        }

        func run(_ x: [Double]) -> [Double] {
            var y = [Double](repeating: 0, count: x.count)
            var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
            for i in 0..<x.count {
                let v = b0 * x[i] + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
                x2 = x1
                x1 = x[i]
                y2 = y1
                y1 = v
                y[i] = v
            }
            return y
        }
    }

    /// `x` through a band-pass from `low` to `high` Hz: 4th-order Butterworth high-pass at
    /// `low` and low-pass at `high` (24 dB/octave each side).
    public static func bandpass(_ x: [Float], low: Double, high: Double, sampleRate: Double = 48000) -> [Double] {
        var y = x.map(Double.init)
        for q in [0.541_196_1, 1.306_563] {
            y = Biquad.highpass(low, q: q, sampleRate: sampleRate).run(y)
            y = Biquad.lowpass(high, q: q, sampleRate: sampleRate).run(y)
        }
        return y
    }

    /// The octave band centred on `center` Hz (center/√2 … center·√2).
    public static func octaveBand(_ x: [Float], center: Double, sampleRate: Double = 48000) -> [Double] {
        bandpass(x, low: center / 2.0.squareRoot(), high: center * 2.0.squareRoot(), sampleRate: sampleRate)
    }

    // MARK: Decay

    /// Schroeder's energy decay curve in dB (0 dB at the start): the backward integral of
    /// the squared impulse response.
    public static func decayCurve(_ h: [Double]) -> [Double] {
        var e = [Double](repeating: 0, count: h.count)
        var sum = 0.0
        for i in stride(from: h.count - 1, through: 0, by: -1) {
            sum += h[i] * h[i]
            e[i] = sum
        }
        let total = max(e.first ?? 0, 1e-300)
        return e.map { 10 * log10(max($0, 1e-300) / total) }
    }

    /// RT60 in seconds from the decay curve of `h`: a least-squares line through the
    /// curve between `upper` and `lower` dB (T20 by default: −5 … −25 dB), extended to
    /// −60 dB. Returns nil when the curve never reaches `lower`.
    public static func rt60(_ h: [Double], sampleRate: Double = 48000, upper: Double = -5, lower: Double = -25) -> Double? {
        let curve = decayCurve(h)
        guard let start = curve.firstIndex(where: { $0 <= upper }),
            let end = curve.firstIndex(where: { $0 <= lower }), end > start + 1
        else { return nil }
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        let n = Double(end - start + 1)
        for i in start...end {
            let t = Double(i) / sampleRate
            sx += t
            sy += curve[i]
            sxx += t * t
            sxy += t * curve[i]
        }
        let slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)  // dB per second
        return slope < 0 ? -60 / slope : nil
    }

    /// RT60 of `h` in the octave band around `center` Hz.
    public static func rt60(_ h: [Float], octaveAround center: Double, sampleRate: Double = 48000) -> Double? {
        rt60(octaveBand(h, center: center, sampleRate: sampleRate), sampleRate: sampleRate)
    }

    // MARK: Spectra

    /// In-place radix-2 FFT of (re, im); the count must be a power of two.
    public static func fft(_ re: inout [Double], _ im: inout [Double]) {
        let n = re.count
        precondition(n > 0 && n & (n - 1) == 0 && im.count == n)
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 {
                j ^= bit
                bit >>= 1
            }
            j |= bit
            if i < j {
                re.swapAt(i, j)
                im.swapAt(i, j)
            }
        }
        var len = 2
        while len <= n {
            let ang = -2 * Double.pi / Double(len)
            for start in stride(from: 0, to: n, by: len) {
                for k in 0..<len / 2 {
                    let wr = cos(ang * Double(k))
                    let wi = sin(ang * Double(k))
                    let a = start + k
                    let b = a + len / 2
                    let tr = re[b] * wr - im[b] * wi
                    let ti = re[b] * wi + im[b] * wr
                    re[b] = re[a] - tr
                    im[b] = im[a] - ti
                    re[a] += tr
                    im[a] += ti
                }
            }
            len <<= 1
        }
    }

    /// Averaged power spectrum (Welch: Hann windows of `size` samples, half overlap) of
    /// `x`; element k is the power at k·sampleRate/size Hz.
    public static func powerSpectrum(_ x: [Float], size: Int = 8192) -> [Double] {
        var sum = [Double](repeating: 0, count: size / 2 + 1)
        var count = 0
        var start = 0
        let window = (0..<size).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size)) }
        while start + size <= x.count {
            var re = (0..<size).map { Double(x[start + $0]) * window[$0] }
            var im = [Double](repeating: 0, count: size)
            fft(&re, &im)
            for k in 0...size / 2 { sum[k] += re[k] * re[k] + im[k] * im[k] }
            count += 1
            start += size / 2
        }
        return sum.map { $0 / Double(max(count, 1)) }
    }

    /// The strongest spectral peak of `x` between `low` and `high` Hz, as (frequency, dB
    /// above its neighbourhood): the power spectrum is smoothed over ±`smoothBins` bins,
    /// and each smoothed bin is compared with the median of the bins within ±1/3 octave.
    /// A reverb tail has no audible ringing when this stays under about 10 dB.
    public static func strongestPeak(
        _ x: [Float], sampleRate: Double = 48000, low: Double = 100, high: Double = 10000, size: Int = 8192,
        smoothBins: Int = 2
    ) -> (frequency: Double, decibels: Double) {
        let p = powerSpectrum(x, size: size)
        let binHz = sampleRate / Double(size)
        var smooth = p
        for k in 0..<p.count {
            let a = max(0, k - smoothBins)
            let b = min(p.count - 1, k + smoothBins)
            smooth[k] = p[a...b].reduce(0, +) / Double(b - a + 1)
        }
        var best = (frequency: 0.0, decibels: -300.0)
        let first = max(1, Int(low / binHz))
        let last = min(p.count - 1, Int(high / binHz))
        guard first < last else { return best }
        for k in first...last {
            let f = Double(k) * binHz
            let a = max(1, Int(f * pow(2, -1.0 / 3) / binHz))
            let b = min(p.count - 1, Int(f * pow(2, 1.0 / 3) / binHz))
            let neighbours = smooth[a...b].sorted()
            let median = neighbours[neighbours.count / 2]
            let db = 10 * log10(max(smooth[k], 1e-300) / max(median, 1e-300))
            if db > best.decibels { best = (f, db) }
        }
        return best
    }

    // MARK: Stereo

    /// Normalised correlation (Pearson, mean removed) of `a` and `b`.
    public static func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        let n = min(a.count, b.count)
        guard n > 1 else { return 0 }
        let aa = Array(a.prefix(n)).map(Double.init)
        let bb = Array(b.prefix(n)).map(Double.init)
        let ma = aa.reduce(0, +) / Double(n)
        let mb = bb.reduce(0, +) / Double(n)
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for i in 0..<n {
            sab += (aa[i] - ma) * (bb[i] - mb)
            saa += (aa[i] - ma) * (aa[i] - ma)
            sbb += (bb[i] - mb) * (bb[i] - mb)
        }
        return sab / max((saa * sbb).squareRoot(), 1e-300)
    }

    /// True when any sample is subnormal (a denormal).
    public static func hasSubnormals(_ x: [Float]) -> Bool { x.contains { $0.isSubnormal } }
}
