import StageCore
import Synchronization

/// A FluidSynth synthesizer as a rack unit: MIDI events in, stereo audio out.
///
/// **Events and timing.** `render` splits the block at every event's frame offset and pulls
/// FluidSynth's audio piece by piece (`fluid_synth_write_float` straight into the output
/// bus), sending each event once the audio before it is rendered. FluidSynth itself starts
/// notes and applies controllers only at the start of its internal 64-frame blocks, which
/// it counts from its creation (or our `reset`); so an event at absolute frame t takes
/// effect at frame ⌈t/64⌉·64: up to 63 frames (1.3 ms at 48 kHz) late, never early, and the
/// same whatever the engine's block size. That makes the output block-size invariant
/// (bit-identical for blocks of 1, 17, 64 or 512 frames); the 64-frame granularity is
/// FluidSynth's and cannot be made finer through its API. The `reverb`, `chorus` and `tune`
/// parameters are likewise applied at those 64-frame boundaries, with their value at the
/// boundary frame; `gain` is applied per sample.
///
/// **Notes.** Only the channel the unit listens to passes (all by default; each channel
/// plays on its own FluidSynth channel). Note-ons outside `keys` are ignored; the others are
/// transposed and played (channel 10, General MIDI's drums, is not transposed unless the
/// unit listens to it alone: a kit's keys are instruments, not pitches, so a transposed
/// song's MIDI file keeps its drums), and the sounding key is remembered per incoming channel and key,
/// so the note-off (and polyphonic pressure) reach the note that sounds even if `transpose`
/// changed meanwhile (it can change live: `transpose`). A repeated note-on of a key that
/// sounds elsewhere first releases the old note. Pitch bend (with the font's bend range and
/// RPN 0 via CC 101/100/6/38), modulation, expression, volume, pan, sustain (64), sostenuto
/// (66), all-sound-off (120), reset-controllers (121), all-notes-off (123), bank select and
/// program change go to FluidSynth as they are; the mode messages (124–127) only end the
/// channel's notes (FluidSynth's mono modes stay off). The soft pedal (67) is forwarded too, but
/// FluidSynth 2.3 ignores it, so notes struck while it is down have their velocity scaled by
/// `softPedalVelocityScale` (softer and, through the font's velocity modulators, darker).
///
/// **Allocation (measured with CAllocCounter on Debian's libfluidsynth 2.3.1).**
/// Rendering, note, controller, bend, program and reset calls allocate nothing while
/// FluidSynth's reverb and chorus are off (the defaults): 0 allocations per block. While
/// `reverb` or `chorus` is on, libfluidsynth runs its effects in an OpenMP parallel region
/// whose libgomp team is allocated and freed on every entry even with one thread
/// (`memalign(64, 1568)` + `free` in `GOMP_parallel`): one allocation per FluidSynth
/// render of new audio, i.e. one per 64 frames (at most ⌈n/64⌉ per n-frame block). No
/// setting avoids it (`synth.cpu-cores` 1, `OMP_NUM_THREADS` 1, `fluid_synth_process`
/// and `fluid_synth_write_float` behave alike); only keeping both effects off does.
///
/// **Idle.** With no voice sounding and both effects off, FluidSynth would only write
/// zeros: from its next 64-frame boundary on, `render` does not call it, writes the zeros
/// itself and flags its output silent (`RenderContext.markOutputSilent`: the units after it
/// may sleep, EngineSilence). It still takes every event: before the first event (or grid
/// parameter change) it catches up with one silent block read to the current phase, so its
/// grid, and so every note's frame, is where it would have been (`SignalSilenceTests`
/// compares block sizes). FluidSynth's own tick count then lags the frames by the skipped
/// blocks: it only orders voices by age for stealing.
///
/// **Limits.** FluidSynth queues voice updates in a ring of polyphony × 64 entries drained
/// at each 64-frame block; a flood beyond that within 1.3 ms drops updates (FluidSynth then
/// logs a warning to `FluidSynthLog`). `tailSeconds` is a fixed 3 s (release tails of
/// typical fonts; a held sustain pedal lasts longer); `activeVoiceCount` tells when the
/// synth has really fallen silent.
///
/// **Held notes.** Per channel it counts the keys down and knows whether the sustain pedal
/// is down (`UnitHeldNotes`), so that leaving the rack sends sustain-off and all-notes-off
/// only on those channels (`RenderEngine.releaseAllNotes`): FluidSynth scans every voice
/// slot for each controller message, sounding or not.
///
/// Thread: control (init, prepare, deinit); render (render, reset, `activeVoiceCount`,
/// `channelsHoldingNotes`); any (`transpose`, the descriptive properties).
public final class SynthUnit: RackUnit, UnitHeldNotes {
    /// Parameter indices, in the order `SynthUnitType.parameters` declares them.
    enum Parameter {
        static let gain = 0
        static let reverb = 1
        static let chorus = 2
        static let tune = 3
    }

    public let configuration: SynthConfiguration
    /// The SoundFont played (shared with other units through `SoundFontLibrary`).
    public let soundFont: SoundFont
    /// Which file was picked and why, for the app to log.
    public let soundFontChoice: SoundFontChoice
    /// Warnings FluidSynth gave while loading the font and preparing the synth.
    public private(set) var warnings: [String]
    /// Velocity factor for notes struck while the soft pedal (CC 67) is down.
    public static let softPedalVelocityScale = 7  // tenths
    /// General MIDI's percussion channel, 10 (9 counted from 0).
    public static let drumChannel = 9

    /// One line for the app's log: "synth: SoundFont /usr/share/…/TimGM6mb.sf2 (default: …)".
    public var soundFontDescription: String { "synth: SoundFont \(soundFontChoice)" }

    /// Semitones added to notes that start from now on (sounding notes keep theirs); not to
    /// channel 10's unless the unit listens to channel 10 alone (`transposesDrums`).
    /// Thread: any.
    public var transpose: Int {
        get { transposeValue.load(ordering: .relaxed) }
        set {
            let r = SynthConfiguration.transposeRange
            transposeValue.store(min(max(newValue, r.lowerBound), r.upperBound), ordering: .relaxed)
        }
    }

    private let transposeValue: Atomic<Int>
    /// Whether `transpose` moves channel 10's notes: only in a unit that listens to channel
    /// 10 alone (its `channel` setting: a choice the rack made), never in one that plays
    /// every channel (a General MIDI file's drums are there, each key an instrument).
    public let transposesDrums: Bool
    private var instance: FluidSynthInstance?
    private let channelFilter: Int
    private let lowKey: Int
    private let highKey: Int
    private let programBank: Int
    private let programNumber: Int
    private let selectsProgram: Bool
    /// Per incoming channel and key: the key sounding for it, or -1.
    private let sounding: UnsafeMutablePointer<Int16>
    private let softPedal: UnsafeMutablePointer<Bool>
    /// Per channel: keys down (entries of `sounding` that are set), and the sustain pedal.
    private let keysDown: UnsafeMutablePointer<Int16>
    private let sustainDown: UnsafeMutablePointer<Bool>
    private let sostenutoDown: UnsafeMutablePointer<Bool>
    private var scratch: UnsafeMutablePointer<Float>
    private var scratchHalf = 64
    /// Frames rendered since prepare/reset, modulo 64 (FluidSynth's block grid).
    private var phase = 0
    /// Idle (EngineSilence): no voice sounding and the effects off, so FluidSynth is not
    /// called; it was left at one of its block boundaries, `phase` frames ago.
    private var idle = false
    private var appliedReverb: Int8 = -1
    private var appliedChorus: Int8 = -1
    private var appliedTune: Float = .nan

    /// Thread: control. `soundFont` is already loaded; `prepare` makes the synthesizer.
    public init(configuration: SynthConfiguration, soundFont: SoundFont, choice: SoundFontChoice) {
        self.configuration = configuration
        self.soundFont = soundFont
        soundFontChoice = choice
        warnings = soundFont.warnings
        transposeValue = Atomic(configuration.transpose)
        channelFilter = configuration.channel ?? -1
        transposesDrums = channelFilter == Self.drumChannel
        lowKey = configuration.keys.lowerBound
        highKey = configuration.keys.upperBound
        selectsProgram = configuration.program != nil || configuration.bank != nil
        programBank = Self.bank(for: configuration, channel: configuration.channel ?? 0, font: soundFont)
        programNumber = configuration.program ?? 0
        sounding = .allocate(capacity: 16 * 128)
        sounding.initialize(repeating: -1, count: 16 * 128)
        softPedal = .allocate(capacity: 16)
        softPedal.initialize(repeating: false, count: 16)
        keysDown = .allocate(capacity: 16)
        keysDown.initialize(repeating: 0, count: 16)
        sustainDown = .allocate(capacity: 16)
        sustainDown.initialize(repeating: false, count: 16)
        sostenutoDown = .allocate(capacity: 16)
        sostenutoDown.initialize(repeating: false, count: 16)
        scratch = .allocate(capacity: 2 * scratchHalf)
        scratch.initialize(repeating: 0, count: 2 * scratchHalf)
    }

    deinit {
        instance = nil
        sounding.deallocate()
        softPedal.deallocate()
        keysDown.deallocate()
        sustainDown.deallocate()
        sostenutoDown.deallocate()
        scratch.deallocate()
    }

    /// The bank a configured program is taken from: the setting, else 128 (drums) when the
    /// unit listens to channel 10 only and the font has a kit there, else 0.
    static func bank(for config: SynthConfiguration, channel: Int, font: SoundFont) -> Int {
        if let b = config.bank { return b }
        if config.channel == 9, font.preset(bank: 128, program: config.program ?? 0) != nil { return 128 }
        return 0
    }

    /// Makes the FluidSynth synthesizer for `spec.sampleRate` (8000…96000 Hz) and selects
    /// the configured program. Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        instance = nil
        let logStart = FluidSynthLog.position
        let inst = try FluidSynthInstance(sampleRate: spec.sampleRate, polyphony: configuration.polyphony, font: soundFont)
        instance = inst
        applyPrograms(inst)
        inst.captureDefaults()
        warnings = soundFont.warnings + FluidSynthLog.messages(since: logStart).filter { $0.level <= 2 }.map(\.description)
        let half = max(spec.maxFrames, 64)
        if half != scratchHalf {
            scratch.deallocate()
            scratchHalf = half
            scratch = .allocate(capacity: 2 * half)
            scratch.initialize(repeating: 0, count: 2 * half)
        }
        clearState()
        phase = 0
        idle = false
    }

    /// Voices sounding now. Thread: render, or control while not rendering.
    public var activeVoiceCount: Int { instance?.activeVoiceCount ?? 0 }

    public var tailSeconds: Double { 3 }

    /// Channels with a key down or the sustain pedal down (bit c: channel c, 0-based).
    /// Thread: render, or control while not rendering.
    public var channelsHoldingNotes: UInt16 {
        var mask: UInt16 = 0
        for ch in 0..<16 where keysDown[ch] > 0 || sustainDown[ch] || sostenutoDown[ch] { mask |= 1 << UInt16(ch) }
        return mask
    }

    /// Channels with the sostenuto pedal down (bit c: channel c, 0-based). Thread: render,
    /// or control while not rendering.
    public var channelsWithSostenutoDown: UInt16 {
        var mask: UInt16 = 0
        for ch in 0..<16 where sostenutoDown[ch] { mask |= 1 << UInt16(ch) }
        return mask
    }

    /// Controller messages sent to FluidSynth from MIDI (each a `fluid_synth_cc`, a scan of
    /// every voice slot): for tests. Thread: render, or control while not rendering.
    public var controlChangesSent: Int { instance?.controlChangesSent ?? 0 }

    private func applyPrograms(_ inst: FluidSynthInstance) {
        guard selectsProgram else { return }
        for ch in 0..<16 where channelFilter < 0 || ch == channelFilter {
            inst.selectProgram(channel: ch, bank: programBank, program: programNumber)
        }
    }

    private func clearState() {
        sounding.update(repeating: -1, count: 16 * 128)
        softPedal.update(repeating: false, count: 16)
        keysDown.update(repeating: 0, count: 16)
        sustainDown.update(repeating: false, count: 16)
        sostenutoDown.update(repeating: false, count: 16)
        appliedReverb = -1
        appliedChorus = -1
        appliedTune = .nan
    }

    /// Silences every voice at once, returns every channel's controllers, bend range,
    /// tuning and program to how `prepare` left them, and realigns FluidSynth's 64-frame
    /// grid with frame 0, without allocating. Two things libfluidsynth 2.3.1 cannot reset:
    /// its own reverb and chorus tails (when those parameters were on) ring on; and a note
    /// that reuses one of FluidSynth's voices starts with the pan gains that voice last had
    /// instead of fading them in from 0 over its first 64-frame block as a never-used voice
    /// does, so after a reset the first block of such a note differs slightly (measured up
    /// to 1.2e-4 with FluidR3_GM's piano, 4e-3 with TimGM6mb's organ) and the rest of the
    /// output is identical. Thread: render, or control while not rendering.
    public func reset() {
        guard let inst = instance else { return }
        inst.restoreDefaults()
        // FluidSynth's effects stay as they were switched and its tuning as restored: the
        // next render calls FluidSynth only for what differs (16 `fluid_synth_set_gen`
        // calls, each a scan of every voice slot, took 7 µs of a warmed rack's first block).
        let (reverb, chorus) = (appliedReverb, appliedChorus)
        clearState()
        (appliedReverb, appliedChorus) = (reverb, chorus)
        appliedTune = inst.restoredFineTune ?? .nan
        if idle {
            idle = false  // FluidSynth stands at a block boundary already
        } else if phase != 0 {
            // Throw away the rest of the block FluidSynth already rendered.
            inst.write(64 - phase, scratch, scratch + scratchHalf)
            phase = 0
        }
    }

    /// Thread: render.
    public func render(_ context: RenderContext) {
        let n = context.frameCount
        let out = context.outputs[0]
        guard let inst = instance, out.channelCount > 0 else {
            out.clear(frames: n)
            return
        }
        let left = out[0]
        let right = out.channelCount > 1 ? out[1] : scratch + scratchHalf
        let params = context.parameters
        let gridSteady = params.isSteady(Parameter.reverb) && params.isSteady(Parameter.chorus) && params.isSteady(Parameter.tune)
        let events = context.events
        var e = 0
        var pos = 0
        var wrote = false
        while true {
            if idle && ((e < events.count && (Int(events[e].frameOffset) <= pos || pos >= n))
                || (pos < n && phase == 0 && gridDiffers(params, pos)))
            {
                wakeUp(inst)
            }
            if pos < n && phase == 0 { applyGrid(inst, params, pos) }
            while e < events.count && (Int(events[e].frameOffset) <= pos || pos >= n) {
                handle(inst, events[e].message)
                e += 1
            }
            if pos >= n { break }
            var next = n
            if e < events.count { next = min(next, Int(events[e].frameOffset)) }
            if !gridSteady || gridDiffers(params, pos) { next = min(next, pos + 64 - phase) }
            if !idle && phase == 0 && appliedReverb == 0 && appliedChorus == 0 && inst.activeVoiceCount == 0 { idle = true }
            if idle {
                // What FluidSynth would write: exact zeros (no voice, no effect).
                (left + pos).update(repeating: 0, count: next - pos)
                (right + pos).update(repeating: 0, count: next - pos)
            } else {
                inst.write(next - pos, left + pos, right + pos)
                wrote = true
            }
            phase = (phase + next - pos) & 63
            pos = next
        }
        if !wrote {
            context.markOutputSilent()
        } else {
            applyGain(params, left, right, n)
        }
        if out.channelCount > 2 {
            for c in 2..<out.channelCount { out[c].update(repeating: 0, count: n) }
        }
    }

    /// Leaves the idle state: FluidSynth catches up with `phase` (one block of silence
    /// rendered and partly read), so its block grid stays where it would have been.
    private func wakeUp(_ inst: FluidSynthInstance) {
        if phase > 0 { inst.write(phase, scratch, scratch + scratchHalf) }
        idle = false
    }

    @inline(__always)
    private func applyGain(
        _ params: ParameterValues, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, _ n: Int
    ) {
        if params.isSteady(Parameter.gain) {
            let g = Self.gainFactor(params.value(Parameter.gain))
            if g == 1 { return }
            for i in 0..<n {
                left[i] *= g
                right[i] *= g
            }
        } else {
            let db = params[Parameter.gain]
            for i in 0..<n {
                let g = Self.gainFactor(db[i])
                left[i] *= g
                right[i] *= g
            }
        }
    }

    @inline(__always)
    static func gainFactor(_ db: Float) -> Float {
        db <= -96 ? 0 : (db == 0 ? 1 : Curves.decibelsToGain(db))
    }

    @inline(__always)
    private func gridDiffers(_ params: ParameterValues, _ pos: Int) -> Bool {
        (params[Parameter.reverb][pos] >= 0.5 ? 1 : 0) != appliedReverb || (params[Parameter.chorus][pos] >= 0.5 ? 1 : 0) != appliedChorus
            || params[Parameter.tune][pos] != appliedTune
    }

    /// Applies the block-grid parameters as they are at frame `pos` (a 64-frame boundary of
    /// FluidSynth's). Thread: render.
    private func applyGrid(_ inst: FluidSynthInstance, _ params: ParameterValues, _ pos: Int) {
        let reverb: Int8 = params[Parameter.reverb][pos] >= 0.5 ? 1 : 0
        if reverb != appliedReverb {
            inst.setReverb(reverb == 1)
            appliedReverb = reverb
        }
        let chorus: Int8 = params[Parameter.chorus][pos] >= 0.5 ? 1 : 0
        if chorus != appliedChorus {
            inst.setChorus(chorus == 1)
            appliedChorus = chorus
        }
        let tune = params[Parameter.tune][pos]
        if tune != appliedTune {
            for ch in 0..<16 { inst.setFineTune(ch, cents: tune) }
            appliedTune = tune
        }
    }

    /// Filters, transposes and forwards one MIDI message. Thread: render.
    private func handle(_ inst: FluidSynthInstance, _ m: MIDIMessage) {
        let kind = m.kind
        if kind == .system { return }
        let ch = m.channel
        if channelFilter >= 0 && ch != channelFilter { return }
        switch kind {
        case .noteOn where m.data2 > 0:
            let key = m.note
            guard key >= lowKey && key <= highKey else { return }
            let target = ch == Self.drumChannel && !transposesDrums ? key : key + transposeValue.load(ordering: .relaxed)
            guard target >= 0 && target <= 127 else { return }
            var velocity = m.velocity
            if softPedal[ch] { velocity = max(1, (velocity * Self.softPedalVelocityScale + 5) / 10) }
            let slot = ch * 128 + key
            let old = Int(sounding[slot])
            if old >= 0 && old != target { inst.noteOff(ch, old) }
            if old < 0 { keysDown[ch] += 1 }
            sounding[slot] = Int16(target)
            inst.noteOn(ch, target, velocity)
        case .noteOn, .noteOff:
            let slot = ch * 128 + m.note
            let s = Int(sounding[slot])
            if s >= 0 {
                inst.noteOff(ch, s)
                sounding[slot] = -1
                keysDown[ch] -= 1
            }
        case .polyPressure:
            let s = Int(sounding[ch * 128 + m.note])
            if s >= 0 { inst.keyPressure(ch, s, m.value) }
        case .controlChange:
            let c = m.controller
            if c == 67 { softPedal[ch] = m.value >= 64 }
            if c == 64 { sustainDown[ch] = m.value >= 64 }  // FluidSynth's threshold too
            if c == 66 { sostenutoDown[ch] = m.value >= 64 }
            if c == 121 {
                softPedal[ch] = false
                sustainDown[ch] = false
                sostenutoDown[ch] = false
            }
            if c >= 124 {
                // Omni/mono/poly mode messages: FluidSynth's mono modes are not used; MIDI
                // says they end every note, which is all they do here.
                inst.allNotesOff(ch)
            } else {
                inst.controlChange(ch, c, m.value)
            }
            // All sound off, all notes off and the mode messages end every note.
            if c == 120 || c >= 123 {
                (sounding + ch * 128).update(repeating: -1, count: 128)
                keysDown[ch] = 0
            }
        case .programChange:
            inst.programChange(ch, Int(m.data1))
        case .channelPressure:
            inst.channelPressure(ch, Int(m.data1))
        case .pitchBend:
            inst.pitchBend(ch, m.bendValue)
        case .system:
            return
        }
    }
}

/// The song's transpose moves the synth's notes (`SongTranspose`).
extension SynthUnit: UnitTransposing {}
