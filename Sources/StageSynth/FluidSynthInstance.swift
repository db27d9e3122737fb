import CFluidSynth
import StageCore

/// Thin wrappers over libfluidsynth: every C call of this module goes through here, named,
/// with control-thread failures turned into `UnitError`s that say which C function failed.
enum Fluid {
    /// Throws unless `rc` is FLUID_OK. Thread: control.
    static func check(_ rc: Int32, _ function: String, _ detail: @autoclosure () -> String = "") throws {
        if rc == FLUID_FAILED {
            let d = detail()
            throw UnitError("synth: \(function) failed\(d.isEmpty ? "" : ": " + d)")
        }
    }

    /// A settings object configured for a synth driven by the render thread.
    /// Thread: control.
    static func newSettings(sampleRate: Double, polyphony: Int) throws -> OpaquePointer {
        guard let s = new_fluid_settings() else { throw UnitError("synth: new_fluid_settings failed (out of memory?)") }
        do {
            // One caller (the render thread, fed by the engine's queue): no API lock.
            try setInt(s, "synth.threadsafe-api", 0)
            try setInt(s, "synth.cpu-cores", 1)
            try setInt(s, "synth.polyphony", polyphony)
            // Effects start off; the unit's `reverb`/`chorus` parameters switch them.
            try setInt(s, "synth.reverb.active", 0)
            try setInt(s, "synth.chorus.active", 0)
            try setNum(s, "synth.gain", 0.2)
            if fluid_settings_setnum(s, "synth.sample-rate", sampleRate) == FLUID_FAILED {
                throw UnitError(
                    "synth: FluidSynth cannot run at \(formatNumber(sampleRate)) Hz "
                        + "(fluid_settings_setnum synth.sample-rate accepts 8000…96000)")
            }
        } catch {
            delete_fluid_settings(s)
            throw error
        }
        return s
    }

    static func setInt(_ s: OpaquePointer, _ name: String, _ value: Int) throws {
        try check(fluid_settings_setint(s, name, Int32(value)), "fluid_settings_setint \(name)=\(value)")
    }

    static func setNum(_ s: OpaquePointer, _ name: String, _ value: Double) throws {
        try check(fluid_settings_setnum(s, name, value), "fluid_settings_setnum \(name)=\(value)")
    }
}

/// One FluidSynth synthesizer with no audio driver, playing one shared SoundFont.
///
/// Made and destroyed on the control thread; every other method is for the render thread
/// (FluidSynth's API lock is off, so exactly one thread may call them, and none may run
/// while the control thread destroys it). Render-thread calls ignore FluidSynth's return
/// codes: they cannot throw or log there, and a failed note (no preset) is just silence.
/// Thread: control (init, deinit, selectProgram); render (the rest).
final class FluidSynthInstance {
    let settings: OpaquePointer
    let synth: OpaquePointer
    let font: SoundFont
    /// The id the font has inside this synth (it is the synth's only font).
    let fontID: Int32

    /// Thread: control.
    init(sampleRate: Double, polyphony: Int, font: SoundFont) throws {
        settings = try Fluid.newSettings(sampleRate: sampleRate, polyphony: polyphony)
        guard let s = new_fluid_synth(settings) else {
            delete_fluid_settings(settings)
            throw UnitError("synth: new_fluid_synth failed (\(formatNumber(sampleRate)) Hz, polyphony \(polyphony))")
        }
        synth = s
        self.font = font
        // The font stays owned by the library's holder synth; this synth only borrows it and
        // gives it back before it is deleted (deinit).
        let id = fluid_synth_add_sfont(s, font.sfont)
        if id == FLUID_FAILED {
            delete_fluid_synth(s)
            delete_fluid_settings(settings)
            throw UnitError("synth: fluid_synth_add_sfont failed for \(font.path)")
        }
        fontID = id
        Self.exactBendRange(s)
    }

    /// FluidSynth's default "pitch wheel × sensitivity → fine tune" modulator has the SF2
    /// amount of 12700 cents over a sensitivity normalized by 128, so a bend range of 2
    /// semitones bends 198.4 cents (0.8 % short: measured 493.2 Hz instead of 493.88 Hz at
    /// full bend from A4). Overwriting it with 12800 makes RPN 0 mean exact semitones. A
    /// font's own pitch-wheel modulator still replaces it. Thread: control.
    private static func exactBendRange(_ synth: OpaquePointer) {
        guard let mod = new_fluid_mod() else { return }
        defer { delete_fluid_mod(mod) }
        let gc = Int32(FLUID_MOD_GC.rawValue) | Int32(FLUID_MOD_LINEAR.rawValue) | Int32(FLUID_MOD_POSITIVE.rawValue)
        fluid_mod_set_source1(mod, Int32(FLUID_MOD_PITCHWHEEL.rawValue), gc | Int32(FLUID_MOD_BIPOLAR.rawValue))
        fluid_mod_set_source2(mod, Int32(FLUID_MOD_PITCHWHEELSENS.rawValue), gc | Int32(FLUID_MOD_UNIPOLAR.rawValue))
        fluid_mod_set_dest(mod, Int32(GEN_FINETUNE.rawValue))
        fluid_mod_set_amount(mod, 12800)
        _ = fluid_synth_add_default_mod(synth, mod, Int32(FLUID_SYNTH_OVERWRITE.rawValue))
    }

    deinit {
        defaultCC?.deallocate()
        defaultBendRange?.deallocate()
        defaultProgram?.deallocate()
        defaultGen?.deallocate()
        _ = fluid_synth_remove_sfont(synth, font.sfont)
        delete_fluid_synth(synth)
        delete_fluid_settings(settings)
    }

    /// Selects `bank`:`program` on channel `channel` (0-based). Thread: control, or render
    /// (measured: no allocation).
    @discardableResult
    func selectProgram(channel: Int, bank: Int, program: Int) -> Bool {
        fluid_synth_program_select(synth, Int32(channel), fontID, Int32(bank), Int32(program)) != FLUID_FAILED
    }

    // MARK: Render thread

    /// Renders `frames` frames into two non-interleaved buffers. Thread: render.
    @inline(__always)
    func write(_ frames: Int, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>) {
        _ = fluid_synth_write_float(synth, Int32(frames), left, 0, 1, right, 0, 1)
    }

    @inline(__always) func noteOn(_ channel: Int, _ key: Int, _ velocity: Int) {
        _ = fluid_synth_noteon(synth, Int32(channel), Int32(key), Int32(velocity))
    }
    @inline(__always) func noteOff(_ channel: Int, _ key: Int) {
        _ = fluid_synth_noteoff(synth, Int32(channel), Int32(key))
    }
    @inline(__always) func controlChange(_ channel: Int, _ controller: Int, _ value: Int) {
        controlChangesSent &+= 1
        _ = fluid_synth_cc(synth, Int32(channel), Int32(controller), Int32(value))
    }
    /// `controlChange` calls so far (each is a `fluid_synth_cc`, which scans every voice
    /// slot). Thread: render, or control while not rendering.
    private(set) var controlChangesSent = 0
    @inline(__always) func pitchBend(_ channel: Int, _ value: Int) {
        _ = fluid_synth_pitch_bend(synth, Int32(channel), Int32(value))
    }
    @inline(__always) func channelPressure(_ channel: Int, _ value: Int) {
        _ = fluid_synth_channel_pressure(synth, Int32(channel), Int32(value))
    }
    @inline(__always) func keyPressure(_ channel: Int, _ key: Int, _ value: Int) {
        _ = fluid_synth_key_pressure(synth, Int32(channel), Int32(key), Int32(value))
    }
    @inline(__always) func programChange(_ channel: Int, _ program: Int) {
        _ = fluid_synth_program_change(synth, Int32(channel), Int32(program))
    }

    /// Channel fine tuning in cents (FluidSynth's GEN_FINETUNE offset; RPN 1 sets the same).
    func setFineTune(_ channel: Int, cents: Float) {
        _ = fluid_synth_set_gen(synth, Int32(channel), Int32(GEN_FINETUNE.rawValue), cents)
    }

    /// Switches FluidSynth's reverb (all effect groups). Takes effect at its next 64-frame
    /// block. Thread: render.
    func setReverb(_ on: Bool) { _ = fluid_synth_reverb_on(synth, -1, on ? 1 : 0) }
    /// Switches FluidSynth's chorus (all effect groups). Thread: render.
    func setChorus(_ on: Bool) { _ = fluid_synth_chorus_on(synth, -1, on ? 1 : 0) }

    @inline(__always) func allNotesOff(_ channel: Int) {
        _ = fluid_synth_all_notes_off(synth, Int32(channel))
    }

    // MARK: Reset

    static let genCount = Int(GEN_LAST.rawValue)
    /// Channel state right after prepare, restored by `restoreDefaults`.
    private var defaultCC: UnsafeMutablePointer<UInt8>?
    private var defaultBendRange: UnsafeMutablePointer<Int32>?
    private var defaultProgram: UnsafeMutablePointer<Int32>?
    private var defaultGen: UnsafeMutablePointer<Float>?

    /// Controllers that `restoreDefaults` does not replay: data entry, RPN/NRPN selection
    /// and increments (they act on the selected parameter), and the channel-mode messages.
    @inline(__always)
    private static func restorable(_ cc: Int) -> Bool {
        !(cc == 6 || cc == 38 || (96...101).contains(cc) || cc >= 120)
    }

    /// Records every channel's controllers, bend range, program and generator offsets, for
    /// `restoreDefaults`. Thread: control (after the programs are selected).
    func captureDefaults() {
        let cc = defaultCC ?? .allocate(capacity: 16 * 128)
        let bend = defaultBendRange ?? .allocate(capacity: 16)
        let program = defaultProgram ?? .allocate(capacity: 16 * 3)
        let gen = defaultGen ?? .allocate(capacity: 16 * Self.genCount)
        for ch in 0..<16 {
            var v: Int32 = 0
            for c in 0..<128 {
                v = 0
                _ = fluid_synth_get_cc(synth, Int32(ch), Int32(c), &v)
                cc[ch * 128 + c] = UInt8(clamping: v)
            }
            v = 2
            _ = fluid_synth_get_pitch_wheel_sens(synth, Int32(ch), &v)
            bend[ch] = v
            var sf: Int32 = 0
            var bank: Int32 = 0
            var prog: Int32 = 0
            _ = fluid_synth_get_program(synth, Int32(ch), &sf, &bank, &prog)
            program[ch * 3] = sf
            program[ch * 3 + 1] = bank
            program[ch * 3 + 2] = prog
            for g in 0..<Self.genCount { gen[ch * Self.genCount + g] = fluid_synth_get_gen(synth, Int32(ch), Int32(g)) }
        }
        let tune = (0..<16).map { gen[$0 * Self.genCount + Int(GEN_FINETUNE.rawValue)] }
        restoredFineTune = tune.allSatisfy { $0 == tune[0] } ? tune[0] : nil
        defaultCC = cc
        defaultBendRange = bend
        defaultProgram = program
        defaultGen = gen
    }

    /// Silences every voice at once and puts every channel back as `captureDefaults` found
    /// it: controllers (after "reset all controllers"), bend range, generator offsets (RPN
    /// and NRPN tuning) and program. Only state that differs is rewritten. No allocation
    /// (measured). FluidSynth's own reverb and chorus keep their tail: libfluidsynth 2.3.1
    /// has no call that clears them (`fluid_synth_system_reset` would, but in this version
    /// it loses its queued voice and effect updates: voices keep sounding after it).
    /// Thread: render, or control while not rendering.
    func restoreDefaults() {
        _ = fluid_synth_all_sounds_off(synth, -1)
        guard let cc = defaultCC, let bend = defaultBendRange, let program = defaultProgram, let gen = defaultGen
        else { return }
        for ch in 0..<16 {
            let c32 = Int32(ch)
            _ = fluid_synth_cc(synth, c32, 121, 0)
            var v: Int32 = 0
            for c in 0..<128 where Self.restorable(c) {
                v = -1
                _ = fluid_synth_get_cc(synth, c32, Int32(c), &v)
                let want = Int32(cc[ch * 128 + c])
                if v != want { _ = fluid_synth_cc(synth, c32, Int32(c), want) }
            }
            v = -1
            _ = fluid_synth_get_pitch_wheel_sens(synth, c32, &v)
            if v != bend[ch] { _ = fluid_synth_pitch_wheel_sens(synth, c32, bend[ch]) }
            for g in 0..<Self.genCount {
                let want = gen[ch * Self.genCount + g]
                if fluid_synth_get_gen(synth, c32, Int32(g)) != want { _ = fluid_synth_set_gen(synth, c32, Int32(g), want) }
            }
            var sf: Int32 = 0
            var bank: Int32 = 0
            var prog: Int32 = 0
            _ = fluid_synth_get_program(synth, c32, &sf, &bank, &prog)
            if sf != program[ch * 3] || bank != program[ch * 3 + 1] || prog != program[ch * 3 + 2] {
                _ = fluid_synth_program_select(synth, c32, program[ch * 3], program[ch * 3 + 1], program[ch * 3 + 2])
            }
        }
    }

    /// The channel fine tuning (GEN_FINETUNE, cents) `restoreDefaults` leaves when it is the
    /// same on all 16 channels, else nil. Thread: any, after `captureDefaults`.
    private(set) var restoredFineTune: Float?

    /// Voices currently sounding. Thread: render, or control while not rendering.
    var activeVoiceCount: Int { Int(fluid_synth_get_active_voice_count(synth)) }
}
