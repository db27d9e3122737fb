#if canImport(Glibc)
import Glibc
#endif

/// Measurements for pitch-shifting tests: a synthetic vowel, a fundamental-frequency
/// estimator precise to a fraction of a cent, formants from an LPC envelope, and delay by
/// cross-correlation. Allocates freely; never for real-time use. Thread: any.
public enum PitchMeasure {
    /// The formants of the test vowel (an open "a"-like vowel): frequency and bandwidth, Hz.
    public static let vowelFormants: [(frequency: Double, bandwidth: Double)] = [(700, 80), (1200, 90), (2600, 120)]

    /// A synthetic vowel: a glottal pulse train (unit impulses every 1/f0 s, rounded to the
    /// nearest sample) through cascaded two-pole resonators with unity gain at 0 Hz,
    /// scaled to peak `amplitude`.
    /// With `vibratoCents` > 0 the pitch swings sinusoidally by ±vibratoCents at
    /// `vibratoRate` Hz (see `vibratoPitch`).
    public static func vowel(
        f0: Double, formants: [(frequency: Double, bandwidth: Double)] = vowelFormants, sampleRate: Double = 48000,
        frames: Int, amplitude: Float = 0.5, vibratoCents: Double = 0, vibratoRate: Double = 5.5
    ) -> [Float] {
        var x = [Double](repeating: 0, count: frames)
        if vibratoCents == 0 {
            var k = 0.0
            while true {
                let i = Int((k * sampleRate / f0).rounded())
                if i >= frames { break }
                x[i] = 1
                k += 1
            }
        } else {
            var phase = 1.0
            for i in 0..<frames {
                if phase >= 1 {
                    x[i] = 1
                    phase -= 1
                }
                phase += vibratoPitch(f0: f0, cents: vibratoCents, rate: vibratoRate, at: Double(i) / sampleRate) / sampleRate
            }
        }
        for (f, b) in formants {
            let r = exp(-Double.pi * b / sampleRate)
            let c = 2 * r * cos(2 * Double.pi * f / sampleRate)
            let g = 1 - c + r * r
            var y1 = 0.0
            var y2 = 0.0
            for i in 0..<frames {
                let y = g * x[i] + c * y1 - r * r * y2
                y2 = y1
                y1 = y
                x[i] = y
            }
        }
        let peak = x.reduce(0) { max($0, abs($1)) }
        return x.map { Float($0 / peak) * amplitude }
    }

    /// The instantaneous pitch of a vibrato vowel at `time` seconds.
    public static func vibratoPitch(f0: Double, cents: Double, rate: Double, at time: Double) -> Double {
        f0 * pow(2, cents / 1200 * sin(2 * Double.pi * rate * time))
    }

    /// A pitch track: the YIN period (with parabolic refinement) of `frame`-sample frames
    /// every `hop` samples, in Hz, nil where the frame is not clearly periodic.
    public static func pitchTrack(
        _ x: [Float], sampleRate: Double = 48000, frame: Int = 1920, hop: Int = 480, low: Double = 60, high: Double = 1000
    ) -> [Double?] {
        let s = x.map { Double($0) }
        let minLag = max(2, Int(sampleRate / high))
        let maxLag = Int(sampleRate / low) + 1
        var track: [Double?] = []
        var start = 0
        while start + frame + maxLag + 2 <= s.count {
            let p = yinPeriod(s, start: start, window: frame, minLag: minLag, maxLag: maxLag)
            track.append(p > 0 ? sampleRate / p : nil)
            start += hop
        }
        return track
    }

    /// The fundamental frequency of a (quasi-)periodic signal, in Hz.
    ///
    /// Coarse period: YIN's cumulative-mean-normalised difference on three frames (start,
    /// middle, end; median of the three). Refinement: the normalised autocorrelation of the
    /// whole slice is maximised near 1, 4, 16, ... periods (parabolic peak), and the period
    /// is the best lag ÷ the number of periods, so its error shrinks with the lag: a
    /// fraction of a cent over half a second. It measures the mean period, so sample jitter
    /// of individual periods averages out.
    public static func fundamental(
        _ x: ArraySlice<Float>, sampleRate: Double = 48000, low: Double = 50, high: Double = 2000
    ) -> Double {
        let s = x.map { Double($0) }
        let minLag = max(2, Int(sampleRate / high))
        let maxLag = Int(sampleRate / low) + 1
        let w = maxLag
        guard s.count > 2 * maxLag + w + 2 else { return 0 }
        var coarse: [Double] = []
        for start in [0, (s.count - w - maxLag - 2) / 2, s.count - w - maxLag - 2] {
            coarse.append(yinPeriod(s, start: start, window: w, minLag: minLag, maxLag: maxLag))
        }
        coarse.sort()
        var period = coarse[1]
        var periods = 1
        let longest = Double(s.count) / 3
        while true {
            let lag = period * Double(periods)
            let refined = autocorrelationPeak(s, near: lag, radius: periods == 1 ? 3 : 2)
            period = refined / Double(periods)
            if period * Double(periods * 4) > longest { break }
            periods *= 4
        }
        return sampleRate / period
    }

    static func yinPeriod(_ s: [Double], start: Int, window: Int, minLag: Int, maxLag: Int) -> Double {
        var d = [Double](repeating: 0, count: maxLag + 2)
        for lag in 1...(maxLag + 1) {
            var sum = 0.0
            for j in 0..<window {
                let v = s[start + j] - s[start + j + lag]
                sum += v * v
            }
            d[lag] = sum
        }
        var cmnd = [Double](repeating: 1, count: maxLag + 2)
        var running = 0.0
        for lag in 1...(maxLag + 1) {
            running += d[lag]
            cmnd[lag] = running > 0 ? d[lag] * Double(lag) / running : 1
        }
        var best = -1
        var lag = minLag
        while lag <= maxLag {
            if cmnd[lag] < 0.15 {
                while lag + 1 <= maxLag && cmnd[lag + 1] < cmnd[lag] { lag += 1 }
                best = lag
                break
            }
            lag += 1
        }
        if best < 0 {
            best = minLag
            for l in minLag...maxLag where cmnd[l] < cmnd[best] { best = l }
        }
        let a = cmnd[best - 1]
        let b = cmnd[best]
        let c = cmnd[best + 1]
        let den = a - 2 * b + c
        return Double(best) + (den > 0 ? 0.5 * (a - c) / den : 0)
    }

    static func normalizedAutocorrelation(_ s: [Double], lag: Int) -> Double {
        var xy = 0.0
        var xx = 0.0
        var yy = 0.0
        for i in 0..<(s.count - lag) {
            xy += s[i] * s[i + lag]
            xx += s[i] * s[i]
            yy += s[i + lag] * s[i + lag]
        }
        return xy / max((xx * yy).squareRoot(), 1e-30)
    }

    static func autocorrelationPeak(_ s: [Double], near lag: Double, radius: Int) -> Double {
        let center = Int(lag.rounded())
        var best = center
        var bestValue = -Double.infinity
        var values: [Int: Double] = [:]
        for l in max(1, center - radius)...(center + radius) {
            let v = normalizedAutocorrelation(s, lag: l)
            values[l] = v
            if v > bestValue {
                bestValue = v
                best = l
            }
        }
        let a = values[best - 1] ?? normalizedAutocorrelation(s, lag: best - 1)
        let c = values[best + 1] ?? normalizedAutocorrelation(s, lag: best + 1)
        let den = a - 2 * bestValue + c
        return Double(best) + (den < 0 ? 0.5 * (a - c) / den : 0)
    }

    /// Formant frequencies: the `count` strongest peaks of the LPC spectral envelope
    /// (autocorrelation method, Hann window, `order` poles) between 150 Hz and
    /// `maxFrequency`, refined by a parabola in dB, in ascending order.
    public static func formants(
        _ x: ArraySlice<Float>, sampleRate: Double = 48000, order: Int = 14, count: Int = 3,
        maxFrequency: Double = 4000
    ) -> [Double] {
        let a = lpc(x, order: order)
        var freqs: [Double] = []
        var mags: [Double] = []
        var f = 150.0
        while f <= maxFrequency {
            freqs.append(f)
            mags.append(envelopeDecibels(a, frequency: f, sampleRate: sampleRate))
            f += 2
        }
        var peaks: [(f: Double, level: Double)] = []
        for i in 1..<(mags.count - 1) where mags[i] > mags[i - 1] && mags[i] >= mags[i + 1] {
            let den = mags[i - 1] - 2 * mags[i] + mags[i + 1]
            let off = den < 0 ? 0.5 * (mags[i - 1] - mags[i + 1]) / den : 0
            peaks.append((freqs[i] + 2 * off, mags[i]))
        }
        peaks.sort { $0.level > $1.level }
        return peaks.prefix(count).map(\.f).sorted()
    }

    /// LPC coefficients a[0] = 1, a[1...order] (prediction error filter A(z)).
    public static func lpc(_ x: ArraySlice<Float>, order: Int) -> [Double] {
        let n = x.count
        var s = [Double](repeating: 0, count: n)
        for (i, v) in x.enumerated() {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n - 1))
            s[i] = Double(v) * w
        }
        var r = [Double](repeating: 0, count: order + 1)
        for k in 0...order {
            var sum = 0.0
            for i in 0..<(n - k) { sum += s[i] * s[i + k] }
            r[k] = sum
        }
        r[0] *= 1 + 1e-9
        var a = [Double](repeating: 0, count: order + 1)
        a[0] = 1
        var error = r[0]
        guard error > 0 else { return a }
        for i in 1...order {
            var acc = r[i]
            for j in 1..<i { acc += a[j] * r[i - j] }
            let k = -acc / error
            var next = a
            for j in 1..<i { next[j] = a[j] + k * a[i - j] }
            next[i] = k
            a = next
            error *= 1 - k * k
        }
        return a
    }

    /// The LPC envelope 1/|A(e^jω)| at `frequency`, in dB.
    public static func envelopeDecibels(_ a: [Double], frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        var re = 0.0
        var im = 0.0
        for (k, c) in a.enumerated() {
            re += c * cos(w * Double(k))
            im -= c * sin(w * Double(k))
        }
        return -10 * log10(max(re * re + im * im, 1e-30))
    }

    /// The lag (0...maxLag) at which `y` best matches `x` (largest cross-correlation).
    public static func delay(of y: [Float], relativeTo x: [Float], maxLag: Int) -> Int {
        var best = 0
        var bestValue = -Double.infinity
        for lag in 0...maxLag {
            var sum = 0.0
            for i in 0..<min(x.count, y.count - lag) { sum += Double(x[i]) * Double(y[i + lag]) }
            if sum > bestValue {
                bestValue = sum
                best = lag
            }
        }
        return best
    }

    /// The lag (0...maxLag) that best aligns the amplitude envelope of `y` with that of `x`:
    /// envelopes are RMS over `window` samples taken every `step` samples, mean removed,
    /// compared by cross-correlation (refined by a parabola). For a pitch shifter whose
    /// grains read at varying delays, this is the mean delay.
    public static func envelopeDelay(
        of y: [Float], relativeTo x: [Float], window: Int = 128, step: Int = 8, maxLag: Int
    ) -> Double {
        func envelope(_ s: [Float]) -> [Double] {
            var e: [Double] = []
            var sum = 0.0
            for i in 0..<s.count {
                sum += Double(s[i]) * Double(s[i])
                if i >= window { sum -= Double(s[i - window]) * Double(s[i - window]) }
                if i % step == 0 { e.append((max(sum, 0) / Double(window)).squareRoot()) }
            }
            let mean = e.reduce(0, +) / Double(max(e.count, 1))
            return e.map { $0 - mean }
        }
        let ex = envelope(x)
        let ey = envelope(y)
        var values: [Double] = []
        for lag in 0...(maxLag / step) {
            var sum = 0.0
            for i in 0..<min(ex.count, ey.count - lag) { sum += ex[i] * ey[i + lag] }
            values.append(sum)
        }
        let best = values.indices.max { values[$0] < values[$1] } ?? 0
        var offset = 0.0
        if best > 0 && best < values.count - 1 {
            let den = values[best - 1] - 2 * values[best] + values[best + 1]
            if den < 0 { offset = 0.5 * (values[best - 1] - values[best + 1]) / den }
        }
        return (Double(best) + offset) * Double(step)
    }

    /// Syllables: vowel bursts of varying pitch and length with gaps, deterministic, for
    /// measuring delays through a voice effect.
    public static func syllables(sampleRate: Double = 48000, frames: Int) -> [Float] {
        var out: [Float] = []
        var k = 0
        let lengths = [0.16, 0.09, 0.22, 0.12, 0.3, 0.07, 0.18]
        let gaps = [0.06, 0.11, 0.05, 0.14, 0.08, 0.1, 0.07]
        let pitches = [150.0, 180, 130, 210, 160, 240, 120]
        while out.count < frames {
            let n = Int(lengths[k % 7] * sampleRate)
            var v = vowel(f0: pitches[k % 7], sampleRate: sampleRate, frames: n, amplitude: 0.5)
            let fade = min(n / 4, Int(0.01 * sampleRate))
            for i in 0..<fade {
                let g = Float(i) / Float(fade)
                v[i] *= g
                v[n - 1 - i] *= g
            }
            out += v
            out += [Float](repeating: 0, count: Int(gaps[k % 7] * sampleRate))
            k += 1
        }
        return Array(out.prefix(frames))
    }

    /// The power-weighted mean frequency and the total power (as squared sine amplitude)
    /// of `x` between `from` and `to` Hz, from Goertzel magnitudes every 1 Hz.
    public static func bandCentroid(
        _ x: ArraySlice<Float>, from: Double, to: Double, sampleRate: Double = 48000
    ) -> (frequency: Double, power: Double) {
        var weighted = 0.0
        var total = 0.0
        var f = from
        while f <= to {
            let m = Measure.magnitude(at: f, in: x, sampleRate: sampleRate)
            weighted += f * m * m
            total += m * m
            f += 1
        }
        // Hann-windowed Goertzel: summed over steps of 1 Hz, a pure sine of amplitude a
        // gives about 1.5·a²·fs/n; normalise so that it gives a².
        let binsPerStep = Double(x.count) / sampleRate
        return (total > 0 ? weighted / total : 0, total * binsPerStep / 1.5)
    }

    /// Deterministic white noise in −amplitude…amplitude (xorshift).
    public static func noise(frames: Int, amplitude: Float = 0.5, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [Float] {
        var state = seed
        return (0..<frames).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return (Float(state >> 40) / Float(1 << 24) * 2 - 1) * amplitude
        }
    }
}
