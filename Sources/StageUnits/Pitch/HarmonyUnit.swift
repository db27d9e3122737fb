import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// One harmony voice: a PSOLA synthesis on the unit's shared pitch marks, its pitch (with
/// glide) and its envelope. Thread: render.
struct HarmonyVoice {
    var synthesis: PsolaSynthesis
    /// Where the voice is going: a MIDI note (notes mode) or semitones from the sung pitch.
    var target: Double = 0
    var current: Double = 0
    /// Semitones per sample while gliding (0: jump).
    var glideStep: Double = 0
    var placed = false
    /// Whether the voice should sound (a note or chord for it; always in scale/intervals).
    var gate = false
    var envelope: Float = 0
    /// The synthesis was reset and is not being called.
    var asleep = true
    /// Density compensation of the grain being played.
    var gain: Float = 1
    /// The step the synthesis takes: a ratio (0 period) or an output period, and the pitch
    /// and local period they were computed for.
    var ratio: Float = 1
    var period = 0.0
    var stepSemitones = Double.nan
    var stepLocal = Double.nan

    mutating func reset(gate: Bool) {
        synthesis.reset()
        target = 0
        current = 0
        glideStep = 0
        placed = false
        self.gate = gate
        envelope = gate ? 1 : 0
        asleep = true
        gain = 1
        ratio = 1
        period = 0
        stepSemitones = .nan
        stepLocal = .nan
    }

    /// Sets the target; jumps when the voice is silent or `glideFrames` is 0.
    mutating func aim(at value: Double, glideFrames: Double) {
        if !placed || envelope == 0 || glideFrames < 1 {
            current = value
            glideStep = 0
        } else if value != target {
            glideStep = abs(value - current) / glideFrames
        }
        target = value
        placed = true
    }
}

/// Harmony voices from one singer; see `HarmonyUnitType` for the settings.
///
/// Method: the pitch unit's voice path, shared. One `PitchMarkTracker` (the YIN detector
/// and the pitch marks) analyses the input once; each voice is a `PsolaSynthesis` placing
/// two-period Hann grains at its own output period. So every voice keeps the singer's
/// formants, timing and dynamics. In `notes` mode a voice's period is fixed by its note
/// (the output is at the note whatever the singer sings); in the other modes it is the
/// singer's local period over the voice's ratio, so the singer's vibrato and inflections
/// carry into the harmony. The voices decide per sample and sound per block
/// (PsolaBlockSynthesis.swift: each grain is one vectorized loop). Unvoiced sound (consonants, breath) makes no grains: it passes
/// once, in the lead, so an "s" is not doubled by every voice (with the lead off, the
/// voices sing the vowels only).
///
/// The sung note (for chord and scale modes) is the detector's pitch rounded to a semitone
/// with 0.15 semitone hysteresis, updated every detector hop (5.3 ms at 48 kHz). A note
/// event takes effect at its frame; the voice's next grain (within one output period) is
/// at the new pitch, reached over `glide` ms.
///
/// Latency: the voices' is the pitch unit's, 14.5 ms (reported by `latencyFrames`); the lead
/// is the input itself (no latency) unless `alignLead` delays it by the same amount.
/// Output: the lead centred at `leadLevel`, each voice at `voiceLevelN` and `panN` with the
/// mixer's constant-power pan law (unity at centre on each side). Thread: render (after
/// prepare); `prepare` allocates everything.
public final class HarmonyUnit: RackUnit {
    public private(set) var latencyFrames: Int = 0
    let config: HarmonyConfiguration
    var sampleRate = 48000.0
    var ring: UnsafeMutablePointer<Float>?
    var size = 0
    var mask = 0
    var now: Int64 = 0
    var tracker: PitchMarkTracker?
    var voices: UnsafeMutablePointer<HarmonyVoice>?
    var riseTable: UnsafeMutablePointer<Float>?
    /// Per key: the order in which it was pressed (0 = up), and the latched chord.
    var held: UnsafeMutablePointer<Int64>?
    var latched: UnsafeMutablePointer<Int64>?
    var heldCount = 0
    var stamp: Int64 = 0
    var latchEnd: Int64 = .max
    /// The sung note (MIDI), −1000 before the first voiced analysis.
    var sung = -1000
    var scratch: UnsafeMutablePointer<Float>?
    /// Per voice: its samples for the block, then per voice its envelope; then a spare channel.
    var voiceBuffers: UnsafeMutablePointer<Float>?
    var maxFrames = 0
    /// The key (0 = C) and the scale in it, from the `key` parameter.
    var key = 0
    var scaleMask: UInt16 = 0
    var attackStep: Float = 1
    var releaseStep: Float = 1

    init(_ config: HarmonyConfiguration) { self.config = config }

    deinit { free() }

    var alwaysOn: Bool { config.source == .scale || config.source == .intervals }

    func free() {
        tracker?.deallocate()
        tracker = nil
        if let v = voices {
            for i in 0..<config.voices { v[i].synthesis.deallocate() }
            v.deinitialize(count: config.voices)
            v.deallocate()
        }
        voices = nil
        for p in [ring, riseTable, scratch, voiceBuffers] { p?.deallocate() }
        for p in [held, latched] { p?.deallocate() }
        ring = nil
        riseTable = nil
        scratch = nil
        voiceBuffers = nil
        held = nil
        latched = nil
    }

    /// Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        free()
        guard spec.sampleRate >= 8000 else { throw UnitError("harmony: sample rate \(spec.sampleRate) is too low") }
        sampleRate = spec.sampleRate
        latencyFrames = Int((0.0145 * spec.sampleRate).rounded())
        maxFrames = max(spec.maxFrames, 1)
        let history = max(4 * latencyFrames, PitchDetector.historyNeeded(sampleRate: sampleRate))
        var s = 1
        // The voices read a block after it was written, up to 3 latencies back (PsolaSynthesis).
        while s < history + Int(sampleRate * 0.013) + 64 + maxFrames { s <<= 1 }
        size = s
        mask = s - 1
        ring = .allocate(capacity: 2 * s)
        tracker = PitchMarkTracker(sampleRate: sampleRate, latency: latencyFrames, historySize: s)
        let v = UnsafeMutablePointer<HarmonyVoice>.allocate(capacity: config.voices)
        for i in 0..<config.voices {
            (v + i).initialize(to: HarmonyVoice(
                synthesis: PsolaSynthesis(sampleRate: sampleRate, latency: latencyFrames, grainCapacity: 32 + maxFrames / 4)))
        }
        voices = v
        let table = UnsafeMutablePointer<Float>.allocate(capacity: 1025)
        for i in 0...1024 {
            let x = sin(Double.pi * Double(i) / 2048)
            table[i] = Float(x * x)
        }
        riseTable = table
        held = .allocate(capacity: 128)
        latched = .allocate(capacity: 128)
        // Lead gain, formant ratio, then per voice: gain, left, right.
        scratch = .allocate(capacity: maxFrames * (2 + 3 * config.voices))
        voiceBuffers = .allocate(capacity: maxFrames * (2 * config.voices + 1))
        attackStep = config.attackMs > 0 ? Float(1000 / (config.attackMs * sampleRate)) : 1
        releaseStep = config.releaseMs > 0 ? Float(1000 / (config.releaseMs * sampleRate)) : 1
        reset()
    }

    /// Thread: render, or control while not rendering.
    public func reset() {
        guard let ring, let held, let latched, let voices else { return }
        ring.update(repeating: 0, count: 2 * size)
        tracker?.reset()
        for i in 0..<config.voices { voices[i].reset(gate: alwaysOn) }
        held.update(repeating: 0, count: 128)
        latched.update(repeating: 0, count: 128)
        heldCount = 0
        stamp = 0
        latchEnd = .max
        sung = -1000
        now = 0
        key = config.key
        scaleMask = config.scaleMask
        if alwaysOn { retarget(glideFrames: 0) }
    }

    public func render(_ context: RenderContext) {
        guard let ring, let voices, let riseTable, let scratch, let voiceBuffers, var marks = tracker else { return }
        // The tracker is worked on as a local for the block (a class's optional property
        // would be copied at each use) and stored back at the end.
        defer { tracker = marks }
        let n = context.frameCount
        let input = context.inputs[0][0]
        let p = context.parameters
        fillControls(p, frames: n)
        let glideFrames = Double(p.value(HarmonyParameter.glide)) * sampleRate / 1000
        let start = now
        let keyIndex = HarmonyParameter.key(voices: config.voices)
        let keys: UnsafePointer<Float>? = p.isSteady(keyIndex) ? nil : UnsafePointer(p[keyIndex])
        if keys == nil { follow(key: p.value(keyIndex), glideFrames: glideFrames) }
        // 1. Per sample: note events at their frame, the ring, the marks, and each voice's
        //    envelope, pitch and grain decisions (PsolaBlockSynthesis.swift).
        var e = 0
        let events = context.events
        for i in 0..<n {
            while e < events.count && Int(events[e].frameOffset) <= i {
                handle(events[e].message, glideFrames: glideFrames)
                e += 1
            }
            if let keys { follow(key: keys[i], glideFrames: glideFrames) }
            if now >= latchEnd { endLatch(glideFrames: glideFrames) }
            let x = input[i]
            let slot = Int(now & Int64(mask))
            ring[slot] = x
            ring[slot + size] = x
            if marks.advance(ring: ring, mask: mask, now: now, x: x, analyze: true) {
                heard(marks.detector, glideFrames: glideFrames)
            }
            for v in 0..<config.voices {
                step(voice: voices + v, index: v, marks: &marks, p: p, frame: i, envelope: voiceBuffers + (config.voices + v) * maxFrames)
            }
            now += 1
        }
        // 2. Per block: each voice's grains, then the lead and the voices at their levels and pans.
        let formant: UnsafePointer<Float>? =
            p.isSteady(HarmonyParameter.formant) && p.value(HarmonyParameter.formant) == 0 ? nil : UnsafePointer(scratch + maxFrames)
        let out = context.outputs[0]
        let right = out.channelCount > 1 ? out[1] : out[0]
        let spare: UnsafeMutablePointer<Float> = voiceBuffers + 2 * config.voices * maxFrames
        let left: UnsafeMutablePointer<Float> = out.channelCount > 1 ? out[0] : spare
        let delayed = Int((start - Int64(latencyFrames)) & Int64(mask))
        let lead: UnsafePointer<Float> = config.alignLead ? UnsafePointer(ring + delayed) : UnsafePointer(input)
        for i in 0..<n {
            let y = lead[i] * scratch[i]
            left[i] = y
            right[i] = y
        }
        for v in 0..<config.voices where voices[v].synthesis.grainCount > 0 {
            let y = voiceBuffers + v * maxFrames
            let envelope = voiceBuffers + (config.voices + v) * maxFrames
            y.update(repeating: 0, count: n)
            voices[v].synthesis.renderBlock(
                into: y, from: start, count: n, ring: ring, mask: mask, formant: formant, riseTable: riseTable)
            let gain = scratch + (2 + 3 * v) * maxFrames
            let panLeft = gain + maxFrames
            let panRight = gain + 2 * maxFrames
            for i in 0..<n {
                let s = y[i] * envelope[i] * gain[i]
                left[i] += s * panLeft[i]
                right[i] += s * panRight[i]
            }
        }
        if out.channelCount > 2 {
            for c in 2..<out.channelCount { out[c].update(repeating: 0, count: n) }
        }
    }

    /// The `key` parameter's value: a new key moves the scale (and the voices, in scale mode).
    @inline(__always)
    func follow(key value: Float, glideFrames: Double) {
        let k = Int(value)
        guard k != key else { return }
        scaleMask = HarmonyTheory.transpose(config.scaleMask, by: k - config.key)
        key = k
        if config.source == .scale { retarget(glideFrames: glideFrames) }
    }

    /// One sample of one voice's control: its envelope (into `envelope[i]`), glide, step
    /// and grain decisions. Thread: render.
    @inline(__always)
    func step(
        voice v: UnsafeMutablePointer<HarmonyVoice>, index: Int, marks: UnsafePointer<PitchMarkTracker>, p: ParameterValues, frame i: Int,
        envelope: UnsafeMutablePointer<Float>
    ) {
        if v.pointee.gate {
            v.pointee.envelope = min(1, v.pointee.envelope + attackStep)
            v.pointee.asleep = false
        } else if v.pointee.envelope > 0 {
            v.pointee.envelope = max(0, v.pointee.envelope - releaseStep)
        } else {
            if !v.pointee.asleep {
                v.pointee.synthesis.cut(at: now)
                v.pointee.asleep = true
            }
            envelope[i] = 0
            return
        }
        envelope[i] = v.pointee.envelope
        if v.pointee.current != v.pointee.target {
            let d = v.pointee.target - v.pointee.current
            let s = v.pointee.glideStep
            v.pointee.current = s == 0 || abs(d) <= s ? v.pointee.target : v.pointee.current + (d > 0 ? s : -s)
        }
        if v.pointee.synthesis.needsStep(at: now) {
            // Recomputed only when the pitch or detune moved (or the local period, for notes).
            let semitones = v.pointee.current + Double(p[HarmonyParameter.detune(index)][i]) / 100
            let local = marks.pointee.period
            if semitones != v.pointee.stepSemitones || (config.source == .notes && local != v.pointee.stepLocal) {
                v.pointee.stepSemitones = semitones
                v.pointee.stepLocal = local
                if config.source == .notes {
                    v.pointee.period = sampleRate / (440 * exp2((semitones - 69) / 12))
                    v.pointee.gain = min(1, Float((v.pointee.period / (local > 0 ? local : v.pointee.period)).squareRoot()))
                } else {
                    v.pointee.ratio = Float(exp2(semitones / 12))
                    v.pointee.gain = min(1, 1 / v.pointee.ratio.squareRoot())
                }
            }
        }
        v.pointee.synthesis.control(
            marks: marks, now: now, ratio: v.pointee.ratio, period: v.pointee.period, gain: v.pointee.gain)
    }

    /// Per-sample lead gain, formant ratio, and each voice's gain and pan gains. Thread: render.
    func fillControls(_ p: ParameterValues, frames n: Int) {
        guard let scratch else { return }
        func gains(_ index: Int, into d: UnsafeMutablePointer<Float>) {
            if p.isSteady(index) {
                let db = p.value(index)
                d.update(repeating: db <= -96 ? 0 : FastDecibels.decibelsToGain(db), count: n)
            } else {
                let s = p[index]
                for i in 0..<n { d[i] = s[i] <= -96 ? 0 : FastDecibels.decibelsToGain(s[i]) }
            }
        }
        gains(HarmonyParameter.leadLevel, into: scratch)
        let f = scratch + maxFrames
        if p.isSteady(HarmonyParameter.formant) {
            f.update(repeating: exp2f(p.value(HarmonyParameter.formant) / 12), count: n)
        } else {
            let s = p[HarmonyParameter.formant]
            for i in 0..<n { f[i] = exp2f(s[i] / 12) }
        }
        for v in 0..<config.voices {
            let base = scratch + (2 + 3 * v) * maxFrames
            gains(HarmonyParameter.level(v), into: base)
            let pan = HarmonyParameter.pan(v)
            if p.isSteady(pan) {
                let (pl, pr) = MixerUnit.panGains(p.value(pan))
                (base + maxFrames).update(repeating: pl, count: n)
                (base + 2 * maxFrames).update(repeating: pr, count: n)
            } else {
                let s = p[pan]
                for i in 0..<n { (base[maxFrames + i], base[2 * maxFrames + i]) = MixerUnit.panGains(s[i]) }
            }
        }
    }
}

/// Parameter indices of the harmony unit (declaration order in `HarmonyUnitType`).
enum HarmonyParameter {
    static let leadLevel = 0
    static let formant = 1
    static let glide = 2
    static func level(_ voice: Int) -> Int { 3 + 3 * voice }
    static func pan(_ voice: Int) -> Int { 4 + 3 * voice }
    static func detune(_ voice: Int) -> Int { 5 + 3 * voice }
    static func key(voices: Int) -> Int { 3 + 3 * voices }
}
