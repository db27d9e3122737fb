#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The built-in demo's voice (`render --demo`, `play --demo`): a sung phrase (a synthetic
/// voice: glottal pulses through vowel formants, with vibrato) with the consonants a
/// singer's strip is judged on, 9 seconds.
/// The demo's synth part is in the stagerack executable's DemoMaterial; the phrase is
/// here so the units' tests can sing it too. Built on any thread (allocates: never the
/// render thread).
///
/// The pulses are differentiated before the formants (the lips' radiation, as in a real
/// voice), so the excitation, and with it the voice, has no DC: unipolar pulses through
/// resonators left an offset of 0.02 that every unit downstream carried.
///
/// The phrase is "ah … sah, tah … kah, sah" with a breath before the last note: unvoiced
/// consonants are noise bursts shaped as speech's are (an "s": noise band-passed around
/// 6.5 kHz, 90 ms, 8 dB under the vowels; a "t": 15 ms of closure then a 25 ms burst
/// around 4 kHz; a "k": a 35 ms burst around 2 kHz; the breath: 250 ms of soft noise
/// around 1.5 kHz, 28 dB under), so `--demo` shows what a de-esser, a gate and an EQ do.
/// Each consonant sits at the start of its note, the vowel starting after it; the breath
/// ends 20 ms before its note (the note before it is cut short for it), so every note
/// still starts on its beat. The noise comes from a fixed seed: the demo is the same on
/// every run and machine.
public enum DemoPhrase {
    public static let seconds = 9.0
    /// The phrase: MIDI note and length in beats at 120 BPM.
    static let melody: [(note: Int, beats: Double)] = [
        (64, 1), (67, 1), (69, 2), (67, 1), (64, 1), (62, 2), (60, 4), (0, 4),
    ]
    /// The unvoiced sound at the start of each note of `melody`.
    static let consonants: [Consonant?] = [nil, .s, .t, nil, .k, .s, .breath, nil]

    enum Consonant {
        case s, t, k, breath

        /// Silence before the burst, the burst, its centre and Q, and its RMS against the vowels'.
        var shape: (gap: Double, length: Double, centre: Double, q: Double, level: Double) {
            switch self {
            case .s: return (0, 0.09, 6500, 1.2, -8)
            case .t: return (0.015, 0.025, 4000, 0.9, -6)
            case .k: return (0, 0.035, 2000, 1.5, -8)
            case .breath: return (0, 0.25, 1500, 0.5, -28)
            }
        }

        /// Where the vowel starts after the note's onset (s); the breath comes before it.
        var vowelDelay: Double { self == .breath ? 0 : shape.gap + shape.length * 0.9 }
        /// How long before the note's onset the sound starts (the breath: it ends 20 ms before).
        var lead: Double { self == .breath ? shape.length + 0.02 : 0 }
    }

    /// The phrase at `sampleRate`, mono, −17.7 dBFS RMS over its 9 s.
    public static func voice(sampleRate: Double) -> [Float] {
        let frames = Int(seconds * sampleRate)
        var out = [Float](repeating: 0, count: frames)
        var noise = [Float](repeating: 0, count: frames)
        // Formants of "ah": frequency, bandwidth, gain.
        let formants: [(Double, Double, Double)] = [(730, 90, 1.0), (1090, 110, 0.5), (2440, 170, 0.25)]
        var states = Array(repeating: (0.0, 0.0), count: formants.count)
        let coeffs = formants.map { f, bw, g -> (Double, Double, Double) in
            let r = exp(-Double.pi * bw / sampleRate)
            return (2 * r * cos(2 * Double.pi * f / sampleRate), -r * r, g * (1 - r))
        }
        var phase = 0.0
        var lastPulse = 0.0
        var t = 0.0
        var seed: UInt32 = 0x5EED
        for (index, (note, beats)) in melody.enumerated() {
            let noteStart = Int(t * sampleRate)
            let noteLength = Int(beats * 0.5 * sampleRate)
            t += beats * 0.5
            guard note > 0 else { continue }
            var start = noteStart
            var length = noteLength
            if index + 1 < consonants.count, let next = consonants[index + 1] { length -= Int(next.lead * sampleRate) }
            if let c = consonants[index] {
                let shape = c.shape
                burst(
                    into: &noise, at: noteStart + Int((shape.gap - c.lead) * sampleRate), frames: Int(shape.length * sampleRate),
                    centre: shape.centre, q: shape.q, level: shape.level, sampleRate: sampleRate, seed: &seed)
                let delay = Int(c.vowelDelay * sampleRate)
                start += delay
                length -= delay
            }
            let f0 = 440 * pow(2, Double(note - 57 - 12) / 12)  // an octave below: a sung range
            for i in 0..<length where start + i < frames {
                let time = Double(i) / sampleRate
                let vibrato = 1 + 0.006 * sin(2 * Double.pi * 5.5 * time) * min(time / 0.3, 1)
                phase += f0 * vibrato / sampleRate
                var pulse = 0.0
                if phase >= 1 {
                    phase -= 1
                    pulse = 1
                }
                let attack = min(time / 0.05, 1)
                let release = min(Double(length - i) / (0.08 * sampleRate), 1)
                let excitation = pulse - lastPulse
                lastPulse = pulse
                var y = 0.0
                for k in 0..<formants.count {
                    let (a1, a2, g) = coeffs[k]
                    let v = g * excitation + a1 * states[k].0 + a2 * states[k].1
                    states[k] = (v, states[k].0)
                    y += v
                }
                out[start + i] = Float(0.5 * y * attack * release)
            }
        }
        // The consonants' levels are against the vowels' RMS while they sound.
        let sung = out.filter { $0 != 0 }
        let vowelRMS = (sung.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(sung.count, 1))).squareRoot()
        for i in 0..<frames { out[i] += Float(vowelRMS) * noise[i] }
        // −17.7 dBFS RMS over the 9 s (the level the default rack's balance was set on).
        let rms = (out.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(frames, 1))).squareRoot()
        if rms > 0 { out = out.map { $0 * Float(0.13 / rms) } }
        return out
    }

    /// Adds a burst of noise band-passed at `centre` (RBJ band-pass, constant peak gain) with
    /// an RMS of `level` dB (relative to 1) over `frames`, raised-cosine edges of 5 ms (an "s"
    /// and the breath: a third of its length). Deterministic: a 32-bit LCG from `seed`.
    static func burst(
        into x: inout [Float], at start: Int, frames: Int, centre: Double, q: Double, level: Double, sampleRate: Double,
        seed: inout UInt32
    ) {
        let w = 2 * Double.pi * centre / sampleRate
        let alpha = sin(w) / (2 * q)
        let a0 = 1 + alpha
        let (b0, b2, a1, a2) = (alpha / a0, -alpha / a0, -2 * cos(w) / a0, (1 - alpha) / a0)
        var (x1, x2, y1, y2) = (0.0, 0.0, 0.0, 0.0)
        var shaped = [Double](repeating: 0, count: frames)
        for i in 0..<frames {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            let v = Double(seed >> 8) / Double(1 << 24) * 2 - 1
            let y = b0 * v + b2 * x2 - a1 * y1 - a2 * y2
            (x2, x1, y2, y1) = (x1, v, y1, y)
            shaped[i] = y
        }
        let edge = max(1, min(frames / 3, Int(0.005 * sampleRate) + (frames > Int(0.1 * sampleRate) ? frames / 3 : 0)))
        for i in 0..<frames {
            let e = min(i, frames - 1 - i)
            if e < edge { shaped[i] *= 0.5 - 0.5 * cos(Double.pi * Double(e) / Double(edge)) }
        }
        let rms = (shaped.reduce(0) { $0 + $1 * $1 } / Double(max(frames, 1))).squareRoot()
        guard rms > 0 else { return }
        let gain = pow(10, level / 20) / rms
        for i in 0..<frames where start + i < x.count { x[start + i] += Float(shaped[i] * gain) }
    }
}
