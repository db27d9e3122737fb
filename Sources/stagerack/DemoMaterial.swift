import StageCore
import StageDrivers

#if canImport(Glibc)
import Glibc
#endif

/// The built-in demo: a sung "ah" phrase (a synthetic voice: glottal pulses through vowel
/// formants, with vibrato) and a chord progression for the synth, 8 seconds.
///
/// The pulses are differentiated before the formants (the lips' radiation, as in a real
/// voice), so the excitation, and with it the voice, has no DC: unipolar pulses through
/// resonators left an offset of 0.02 that every unit downstream carried.
enum DemoMaterial {
    static let seconds = 9.0
    /// The phrase: MIDI note and length in beats at 120 BPM.
    static let melody: [(note: Int, beats: Double)] = [
        (64, 1), (67, 1), (69, 2), (67, 1), (64, 1), (62, 2), (60, 4), (0, 4),
    ]

    static func voice(sampleRate: Double) -> AudioData {
        let frames = Int(seconds * sampleRate)
        var out = [Float](repeating: 0, count: frames)
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
        for (note, beats) in melody {
            let start = Int(t * sampleRate)
            let length = Int(beats * 0.5 * sampleRate)
            t += beats * 0.5
            guard note > 0 else { continue }
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
        // −17.7 dBFS RMS over the 9 s (the level the default rack's balance was set on).
        let rms = (out.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(frames, 1))).squareRoot()
        if rms > 0 { out = out.map { $0 * Float(0.13 / rms) } }
        return AudioData(channels: [out], sampleRate: sampleRate)
    }

    static func song() -> StandardMIDIFile {
        let chords: [[Int]] = [[48, 60, 64, 67], [45, 57, 60, 64], [41, 57, 60, 65], [43, 55, 59, 62]]
        var messages: [StandardMIDIFile.TimedMessage] = []
        for (i, chord) in chords.enumerated() {
            let on = Double(i) * 2
            for n in chord { messages.append(.init(seconds: on, message: .noteOn(channel: 0, note: n, velocity: 70))) }
            for n in chord { messages.append(.init(seconds: on + 1.9, message: .noteOff(channel: 0, note: n))) }
        }
        messages.sort { $0.seconds < $1.seconds }
        return StandardMIDIFile(messages: messages, duration: 8)
    }
}
