import Glibc

/// A pitch track that says where there is no pitch: for speech, whose voicing comes and
/// goes every syllable (`PitchMeasure.pitchTrack` always gives a period). Thread: any.
public enum VoicedPitchTrack {
    /// Per `hop`: the frequency (Hz) of the `frame`-sample frame when it is voiced, else nil.
    /// Voiced: YIN's cumulative-mean-normalised difference dips under `threshold` within
    /// `low…high` Hz (de Cheveigné and Kawahara's 0.1–0.15: an aperiodic share of 10–15 %)
    /// and the frame's energy is within `gateDecibels` of the loudest frame's. The period is
    /// the first such dip's minimum, refined by a parabola.
    public static func track(
        _ x: [Float], sampleRate: Double = 48000, frame: Int = 960, hop: Int = 480, low: Double = 60, high: Double = 600,
        threshold: Double = 0.12, gateDecibels: Double = 40
    ) -> [Double?] {
        let minLag = max(2, Int(sampleRate / high))
        let maxLag = Int(sampleRate / low) + 1
        var starts: [Int] = []
        var start = 0
        while start + frame + maxLag + 2 <= x.count {
            starts.append(start)
            start += hop
        }
        let energies = starts.map { s in x[s..<(s + frame)].reduce(0.0) { $0 + Double($1) * Double($1) } }
        let gate = (energies.max() ?? 0) * pow(10, -gateDecibels / 10)
        var d = [Double](repeating: 0, count: maxLag + 2)
        var cmnd = [Double](repeating: 1, count: maxLag + 2)
        return zip(starts, energies).map { s, e -> Double? in
            guard e > gate, e > 0 else { return nil }
            for lag in 1...(maxLag + 1) {
                var sum = 0.0
                for j in s..<(s + frame) {
                    let v = Double(x[j]) - Double(x[j + lag])
                    sum += v * v
                }
                d[lag] = sum
            }
            var running = 0.0
            for lag in 1...(maxLag + 1) {
                running += d[lag]
                cmnd[lag] = running > 0 ? d[lag] * Double(lag) / running : 1
            }
            var lag = minLag
            while lag <= maxLag && cmnd[lag] >= threshold { lag += 1 }
            guard lag <= maxLag else { return nil }
            while lag + 1 <= maxLag && cmnd[lag + 1] < cmnd[lag] { lag += 1 }
            let a = cmnd[lag - 1], b = cmnd[lag], c = cmnd[lag + 1]
            let den = a - 2 * b + c
            return sampleRate / (Double(lag) + (den > 0 ? 0.5 * (a - c) / den : 0))
        }
    }
}
