/// Finds a test signal in a recording: where it came back (cross-correlation), and
/// whether what came back is the signal at all (level over noise, peak over sidelobes).
/// Pure: tested with synthetic recordings. Thread: any.
public enum LatencyAnalysis {
    /// A maximum length sequence of 2^order − 1 values ±1 (a Fibonacci LFSR with
    /// primitive taps): its circular autocorrelation is N at lag 0 and −1 elsewhere, so a
    /// recording cross-correlated with it shows one sharp peak where it came back.
    public static func mls(order: Int) -> [Float] {
        // Taps of primitive polynomials (x^order + ... + 1), from the usual tables.
        let taps: [Int: [Int]] = [10: [10, 7], 11: [11, 9], 12: [12, 11, 10, 4], 13: [13, 12, 11, 8], 14: [14, 13, 12, 2],
                                  15: [15, 14], 16: [16, 15, 13, 4]]
        let t = taps[order]!
        var state: UInt32 = 1
        let length = (1 << order) - 1
        var out = [Float](repeating: 0, count: length)
        for i in 0..<length {
            let bit = state & 1
            out[i] = bit == 1 ? 1 : -1
            var feedback: UInt32 = 0
            for tap in t { feedback ^= (state >> UInt32(order - tap)) & 1 }
            state = (state >> 1) | (feedback << UInt32(order - 1))
        }
        return out
    }

    /// What one measurement found.
    public struct Finding: Sendable, Equatable {
        /// Where the signal starts in the recording (frames).
        public var position: Int
        /// The correlation peak over the correlation's RMS elsewhere (a clean loop gives
        /// about √N; noise alone about 4).
        public var peakRatio: Double
        /// RMS of what came back (dBFS) and of the recording before anything could (dBFS).
        public var signalDBFS: Double
        public var noiseDBFS: Double
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Nothing above the floor: no cable, or the capture input muted.
        case nothingCameBack(peakDBFS: Double)
        /// Something came back, but too quiet against the noise to be found.
        case tooLow(signalDBFS: Double, noiseDBFS: Double)
        /// The noise is loud: the signal is lost in it.
        case tooNoisy(signalDBFS: Double, noiseDBFS: Double)

        public var description: String {
            switch self {
            case .nothingCameBack(let peak):
                return "no signal came back (the recording peaks at \(db(peak)) dBFS): connect the playback output to the "
                    + "capture input with a cable (or put a microphone in front of the speaker), and check that the "
                    + "capture input is not muted (alsamixer)"
            case .tooLow(let s, let n):
                return "the signal came back too low to be found (\(db(s)) dBFS over noise at \(db(n)) dBFS): raise the "
                    + "capture gain or the playback level (--level)"
            case .tooNoisy(let s, let n):
                return "too noisy: the recording's noise (\(db(n)) dBFS) hides the signal (\(db(s)) dBFS): lower the noise "
                    + "(a cable rather than a microphone, the capture gain down) or raise --level"
            }
        }

        func db(_ x: Double) -> String { x < -200 ? "-inf" : formatDB(x) }
    }

    /// Looks for `signal` in `recording` at or after `earliest` (nothing can come back
    /// before it was played); frames before `earliest` are the noise reference.
    public static func find(_ signal: [Float], in recording: [Float], earliest: Int) -> Result<Finding, Failure> {
        let n = signal.count
        let noise = rmsDBFS(recording[0..<min(max(earliest, 0), recording.count)])
        let after = recording[min(earliest, recording.count)...]
        let peak = Double(after.reduce(0) { max($0, abs($1)) })
        let peakDBFS = peak > 0 ? 20 * log10(peak) : -240
        if peakDBFS < -80 { return .failure(.nothingCameBack(peakDBFS: peakDBFS)) }
        guard recording.count - earliest >= n else { return .failure(.nothingCameBack(peakDBFS: peakDBFS)) }
        // Cross-correlation at every lag (time domain: the recording is a few seconds).
        let lags = recording.count - n - earliest + 1
        var correlation = [Float](repeating: 0, count: lags)
        recording.withUnsafeBufferPointer { r in
            signal.withUnsafeBufferPointer { s in
                for lag in 0..<lags {
                    // Four partial sums: the loop vectorises.
                    var s0: Float = 0, s1: Float = 0, s2: Float = 0, s3: Float = 0
                    let base = r.baseAddress! + earliest + lag
                    var i = 0
                    while i + 4 <= n {
                        s0 += base[i] * s[i]
                        s1 += base[i + 1] * s[i + 1]
                        s2 += base[i + 2] * s[i + 2]
                        s3 += base[i + 3] * s[i + 3]
                        i += 4
                    }
                    while i < n {
                        s0 += base[i] * s[i]
                        i += 1
                    }
                    correlation[lag] = (s0 + s1) + (s2 + s3)
                }
            }
        }
        var best = 0
        for i in 1..<lags where abs(correlation[i]) > abs(correlation[best]) { best = i }
        var energy = 0.0
        var count = 0
        for i in 0..<lags where abs(i - best) > 16 {
            energy += Double(correlation[i]) * Double(correlation[i])
            count += 1
        }
        let floor = count > 0 ? (energy / Double(count)).squareRoot() : 0
        let ratio = floor > 0 ? Double(abs(correlation[best])) / floor : .infinity
        let position = earliest + best
        let signalDBFS = rmsDBFS(recording[position..<(position + n)])
        // A clean return stands far over its sidelobes (√N ≈ 90 for N = 8191); noise or a
        // wrong signal gives 4 to 6.
        if ratio < 12 {
            if signalDBFS - noise < 6 && noise > -60 { return .failure(.tooNoisy(signalDBFS: signalDBFS, noiseDBFS: noise)) }
            return .failure(.tooLow(signalDBFS: signalDBFS, noiseDBFS: noise))
        }
        return .success(Finding(position: position, peakRatio: ratio, signalDBFS: signalDBFS, noiseDBFS: noise))
    }

    static func rmsDBFS(_ x: ArraySlice<Float>) -> Double {
        guard !x.isEmpty else { return -240 }
        let ms = x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)
        return ms > 0 ? 10 * log10(ms) : -240
    }
}

/// A level in dB with one decimal.
func formatDB(_ x: Double) -> String {
    let r = (x * 10).rounded() / 10
    return r == r.rounded() ? String(Int(r)) : String(r)
}

#if canImport(Glibc)
import Glibc
#endif
