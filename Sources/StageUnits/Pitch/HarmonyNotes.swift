import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// The harmony unit's notes: which keys are held (or latched), and what each voice sings
/// because of them and of the sung note. Thread: render; allocates nothing.
extension HarmonyUnit {
    /// A MIDI message at its frame: notes that the unit's `channel` and `keys` take, and
    /// All Notes Off / All Sound Off on its channel.
    func handle(_ m: MIDIMessage, glideFrames: Double) {
        guard let held, let latched else { return }
        let key = Int(m.data1)
        switch m.kind {
        case .noteOn where m.data2 > 0:
            guard config.notes.takes(channel: m.channel, key: key) else { return }
            if heldCount == 0 {
                latched.update(repeating: 0, count: 128)
                latchEnd = .max
            }
            stamp += 1
            if held[key] == 0 { heldCount += 1 }
            held[key] = stamp
            latched[key] = stamp
        case .noteOn, .noteOff:
            guard config.notes.takes(channel: m.channel, key: key), held[key] != 0 else { return }
            held[key] = 0
            heldCount -= 1
            if heldCount == 0 && config.hold && config.holdReleaseMs > 0 {
                latchEnd = now + Int64(config.holdReleaseMs * sampleRate / 1000)
            }
        case .controlChange where m.data1 == 120 || m.data1 == 123:
            guard config.notes.channel == nil || config.notes.channel == m.channel else { return }
            held.update(repeating: 0, count: 128)
            latched.update(repeating: 0, count: 128)
            heldCount = 0
        default:
            return
        }
        retarget(glideFrames: glideFrames)
    }

    /// The latched chord's hold-release time is over.
    func endLatch(glideFrames: Double) {
        latchEnd = .max
        latched?.update(repeating: 0, count: 128)
        retarget(glideFrames: glideFrames)
    }

    /// After each analysis of the detector: follow the sung note (chord and scale modes).
    func heard(_ detector: PitchDetector, glideFrames: Double) {
        guard detector.voiced, detector.period > 0 else { return }
        let note = 69 + 12 * log2(sampleRate / detector.period / 440)
        guard note.isFinite else { return }
        // 0.15 semitone hysteresis: vibrato around a note's edge does not flip the harmony.
        if sung < -100 || abs(note - Double(sung)) > 0.65 { sung = Int(note.rounded()) }
        if config.source == .chord || config.source == .scale { retarget(glideFrames: glideFrames) }
    }

    /// The keys that sound: the held ones, else the latched chord when `hold` is on.
    var sounding: UnsafeMutablePointer<Int64>? { heldCount > 0 || !config.hold ? held : latched }

    /// Sets each voice's gate and target from the notes and the sung note.
    func retarget(glideFrames: Double) {
        guard let voices, let keys = sounding else { return }
        var lowest = -1
        var chord: UInt16 = 0
        for k in 0..<128 where keys[k] != 0 {
            if lowest < 0 { lowest = k }
            chord |= 1 << UInt16(k % 12)
        }
        switch config.source {
        case .notes:
            retargetNotes(keys, root: lowest, glideFrames: glideFrames)
        case .chord:
            for v in 0..<config.voices {
                let position = config.positions[v]
                guard sung > -100,
                    let tone = HarmonyTheory.chordTone(from: sung, chord: chord, up: position % 2 == 0, rank: position / 2 + 1)
                else {
                    voices[v].gate = false
                    continue
                }
                let just = config.just ? HarmonyTheory.justOffset(note: tone, root: lowest) : 0
                voices[v].aim(at: Double(tone - sung) + just, glideFrames: glideFrames)
                voices[v].gate = true
            }
        case .scale:
            guard sung > -100 else { return }
            let from = HarmonyTheory.nearestScaleNote(sung, mask: scaleMask)
            for v in 0..<config.voices {
                let tone = HarmonyTheory.scaleStep(from, steps: config.intervals[v], mask: scaleMask)
                let just = config.just ? HarmonyTheory.justOffset(note: tone, root: key) : 0
                voices[v].aim(at: Double(tone - sung) + just, glideFrames: glideFrames)
            }
        case .intervals:
            for v in 0..<config.voices {
                let just = config.just ? HarmonyTheory.justOffset(note: config.intervals[v], root: 0) : 0
                voices[v].aim(at: Double(config.intervals[v]) + just, glideFrames: glideFrames)
            }
        }
    }

    /// Notes mode: the newest `voices` keys, in order of pitch, one per voice.
    func retargetNotes(_ keys: UnsafeMutablePointer<Int64>, root: Int, glideFrames: Double) {
        guard let voices else { return }
        var chosen = (-1, -1, -1, -1)
        var count = 0
        withUnsafeMutableBytes(of: &chosen) { raw in
            let picks = raw.bindMemory(to: Int.self)
            // The newest first: repeatedly the key with the largest stamp below the last.
            var below = Int64.max
            while count < config.voices {
                var best = -1
                for k in 0..<128 where keys[k] != 0 && keys[k] < below && (best < 0 || keys[k] > keys[best]) { best = k }
                if best < 0 { break }
                picks[count] = best
                below = keys[best]
                count += 1
            }
            // In order of pitch (insertion sort of at most four).
            for i in 1..<max(count, 1) {
                var j = i
                while j > 0 && picks[j - 1] > picks[j] {
                    picks.swapAt(j - 1, j)
                    j -= 1
                }
            }
            for v in 0..<config.voices {
                guard v < count else {
                    voices[v].gate = false
                    continue
                }
                let note = picks[v]
                let just = config.just && root >= 0 ? HarmonyTheory.justOffset(note: note, root: root) : 0
                let wasSilent = !voices[v].gate
                voices[v].aim(at: Double(note) + just, glideFrames: wasSilent ? 0 : glideFrames)
                voices[v].gate = true
            }
        }
    }
}
