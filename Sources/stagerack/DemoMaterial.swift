import StageCore
import StageDrivers

/// The built-in demo (`render --demo`, `play --demo`): StageCore's sung phrase
/// (DemoPhrase) and a chord progression for the synth, 9 seconds.
enum DemoMaterial {
    static let seconds = DemoPhrase.seconds

    static func voice(sampleRate: Double) -> AudioData {
        AudioData(channels: [DemoPhrase.voice(sampleRate: sampleRate)], sampleRate: sampleRate)
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
