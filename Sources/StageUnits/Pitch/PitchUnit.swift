import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// `pitch`: a live pitch shifter, parameters as Apple's NewTimePitch where they apply.
///
/// - `pitch` −2400…2400 cents (default 0; smoothed over 50 ms, so sweeps glide).
/// - `wetDryMix` 0–100 % (default 100). The dry signal is delayed by the unit's latency, so
///   a 50 % mix is an aligned harmony, not a flanger.
/// - `mode`: `voice` (default) or `any`, a real-time parameter. Switching is click-free:
///   both modes have the same latency, the granular path runs whenever voice grains do not
///   cover the output, and the change crossfades through the grains' windows. So it is a
///   parameter, not a unit setting.
///
/// `voice` (one singer; keeps formants): TD-PSOLA (`VoicePath`) on pitch marks placed one
/// per period by a YIN detector (`PitchDetector`, 70–1100 Hz) and a peak tracker; grains of
/// two periods, Hann-windowed, placed at the shifted period. Unvoiced sound (consonants,
/// breath, noise) passes unshifted (delayed by the latency), so an "s" keeps its spectrum
/// (a shifted noise is still noise, but an octave down it loses everything above 4 kHz and
/// lisps); the voiced onset before the first grain goes through the granular path, and the
/// two cross over 5 ms as the detector's voicing changes. Below 120 Hz the grain edges shorten to
/// fit the latency (flat-topped windows). A pure tone's spectral envelope is the tone
/// itself, so shifting a sine (a whistle) up an octave in this mode nearly silences it: use
/// `any` for whistles and instruments.
///
/// `any` (chords, instruments, noise; formants move with the pitch): two crossfaded read
/// taps (`GranularPath`), 22 ms grains, each jump phase-matched by correlation so single
/// notes stay exact. Chords whose notes share no short period cannot be matched for every
/// note: the others spread into sidebands at the jump rate and dip where their two taps
/// cross out of phase (the warble of granular harmonizers). Measured over 1.2 s on a
/// triad: each note's energy centre within ±21 cents of its target, nothing left at the
/// original pitch.
///
/// Latency: 14.5 ms in both modes (696 frames at 48 kHz), reported by `latencyFrames`. It
/// is the mean delay: PSOLA grains read within half a period of it, granular taps sweep
/// 3.4–25.6 ms around it (±3.3 ms for phase matching). At 0 cents the unit is exactly a
/// 14.5 ms delay. (Rubber Band's real-time mode, for comparison, adds 45–93 ms.)
///
/// Defaults for live vocals: voice mode, 0 cents (a pure delay until a shift is set), 100 %
/// wet; use 50 % wet for a harmony voice beside the dry one. Level: pitch up keeps the RMS;
/// pitch down in voice mode keeps each glottal pulse's level, so the RMS falls with the
/// pulse rate (−3 dB an octave down), like a lower voice; no shift raises peaks.
///
/// Channels: each input channel is shifted on its own (mono per channel).
///
/// Block-size invariance: all processing is per sample; the pitch detector runs at fixed
/// absolute sample times (every 256 samples at 48 kHz counted from the last reset), so the
/// output does not depend on how the stream is cut into blocks.
public struct PitchUnitType: UnitType {
    public init() {}
    public var name: String { "pitch" }
    public var summary: String {
        "pitch shift ±2 octaves: formant-preserving voice mode (PSOLA) or granular any mode; 14.5 ms latency"
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(
                id: "pitch", name: "Pitch", unit: .cents, range: -2400...2400, defaultValue: 0, smoothingSeconds: 0.05,
                help: "shift in cents (100 = a semitone, 1200 = an octave); glides over 50 ms"),
            ParameterSpec(
                id: "wetDryMix", name: "Wet/dry mix", unit: .percent, range: 0...100, defaultValue: 100,
                smoothingSeconds: 0.02,
                help: "100 = shifted only; 50 = harmony beside the dry voice (kept aligned)"),
            .choice(
                id: "mode", name: "Mode", choices: ["voice", "any"], defaultIndex: 0,
                help: "voice: one singer, keeps formants; any: chords, instruments, noise (formants move)"),
        ]
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.any], outputs: [.sameAsInput(0)])
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        PitchUnit()
    }
}

/// The state of one channel: its input history and both shifting paths. Thread: render.
struct PitchChannel {
    /// Input history, double-written (sample t at t & mask and (t & mask) + size), so any
    /// recent window is contiguous.
    let ring: UnsafeMutablePointer<Float>
    let size: Int
    let mask: Int
    let latency: Int
    /// Absolute time of the next sample, counted from the last reset.
    var now: Int64 = 0
    var granular: GranularPath
    var voice: VoicePath
    /// Whether `voice.process` is being called (voice mode, or still fading out).
    var voiceAwake = false
    /// How much of the fallback (what the voice grains leave) is the delayed input rather
    /// than the granular path: 1 while voice mode hears unvoiced sound, 0 otherwise.
    var unvoicedShare: Float = 0
    let unvoicedStep: Float

    /// Thread: control.
    init(sampleRate: Double, latency: Int) {
        self.latency = latency
        unvoicedStep = Float(1 / (0.005 * sampleRate))
        // Longest reach back: voice grains ≤ 3 × latency; granular taps ≤ latency + grain/2
        // + search radius, plus the phase-match window and search; the detector's window.
        let history = max(4 * latency, PitchDetector.historyNeeded(sampleRate: sampleRate))
        var size = 1
        while size < history + Int(sampleRate * 0.013) + 64 { size <<= 1 }
        self.size = size
        mask = size - 1
        ring = .allocate(capacity: 2 * size)
        ring.initialize(repeating: 0, count: 2 * size)
        granular = GranularPath(sampleRate: sampleRate, latency: latency, historySize: size)
        self.voice = VoicePath(sampleRate: sampleRate, latency: latency, historySize: size)
    }

    /// Thread: control.
    func deallocate() {
        ring.deallocate()
        voice.deallocate()
    }

    /// Thread: render (or control while idle). Allocates nothing.
    mutating func reset() {
        ring.update(repeating: 0, count: 2 * size)
        now = 0
        granular.reset()
        voice.reset()
        voiceAwake = false
        unvoicedShare = 0
    }

    /// Renders `frames` samples. `ratio`, `gain` (PSOLA density compensation, min(1, 1/√ratio)),
    /// `mix` (0…1) and `mode` hold one value per frame. Thread: render.
    @inline(__always)
    mutating func render(
        input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, frames: Int,
        ratio: UnsafePointer<Float>, gain: UnsafePointer<Float>, mix: UnsafePointer<Float>,
        mode: UnsafePointer<Float>, hann: UnsafePointer<Float>, halfHann: UnsafePointer<Float>
    ) {
        let ring = self.ring
        let mask = self.mask
        let size = self.size
        let delay = Int64(latency)
        for i in 0..<frames {
            let x = input[i]
            let slot = Int(now & Int64(mask))
            ring[slot] = x
            ring[slot + size] = x
            let voiceMode = mode[i] < 0.5
            var shifted: Float = 0
            var fallback: Float = 1
            if voiceMode || voiceAwake {
                voiceAwake = true
                shifted = voice.process(
                    ring: ring, mask: mask, now: now, x: x, ratio: ratio[i], gain: gain[i],
                    voiceMode: voiceMode, riseTable: halfHann)
                fallback = voice.fallback
                if !voiceMode && voice.idle {
                    voiceAwake = false
                    voice.sleep()
                }
            }
            let dry = ring[Int((now - delay) & Int64(mask))]
            let unvoiced: Float = voiceMode && !voice.detector.voiced ? 1 : 0
            unvoicedShare = unvoiced > unvoicedShare
                ? min(unvoiced, unvoicedShare + unvoicedStep) : max(unvoiced, unvoicedShare - unvoicedStep)
            var wet = shifted
            if fallback > 0 {
                var other = unvoicedShare * dry
                if unvoicedShare < 1 {
                    other += (1 - unvoicedShare) * granular.process(ring: ring, mask: mask, now: now, ratio: ratio[i], table: hann)
                }
                wet += fallback * other
            }
            output[i] = dry + mix[i] * (wet - dry)
            now += 1
        }
    }
}

/// Shifts pitch; see `PitchUnitType`. Thread: render (after prepare).
public final class PitchUnit: RackUnit {
    public private(set) var latencyFrames: Int = 0
    var channels: UnsafeMutablePointer<PitchChannel>?
    var channelCount = 0
    var maxFrames = 0
    /// Per-frame parameter values of the current block.
    var ratio: UnsafeMutablePointer<Float>?
    var gain: UnsafeMutablePointer<Float>?
    var mix: UnsafeMutablePointer<Float>?
    /// sin²(π i/1024), i = 0…1024 (granular crossfade), and sin²(π i/2048) (grain halves).
    var hann: UnsafeMutablePointer<Float>?
    var halfHann: UnsafeMutablePointer<Float>?

    public init() {}

    deinit { free() }

    func free() {
        if let c = channels {
            for i in 0..<channelCount { c[i].deallocate() }
            c.deinitialize(count: channelCount)
            c.deallocate()
        }
        channels = nil
        channelCount = 0
        ratio?.deallocate()
        gain?.deallocate()
        mix?.deallocate()
        hann?.deallocate()
        halfHann?.deallocate()
        ratio = nil
        gain = nil
        mix = nil
        hann = nil
        halfHann = nil
    }

    /// Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        free()
        guard spec.sampleRate >= 8000 else { throw UnitError("pitch: sample rate \(spec.sampleRate) is too low") }
        latencyFrames = Int((0.0145 * spec.sampleRate).rounded())
        channelCount = max(spec.inputChannels.first ?? 1, 1)
        maxFrames = max(spec.maxFrames, 1)
        let c = UnsafeMutablePointer<PitchChannel>.allocate(capacity: channelCount)
        for i in 0..<channelCount {
            (c + i).initialize(to: PitchChannel(sampleRate: spec.sampleRate, latency: latencyFrames))
        }
        channels = c
        ratio = .allocate(capacity: maxFrames)
        gain = .allocate(capacity: maxFrames)
        mix = .allocate(capacity: maxFrames)
        let h = UnsafeMutablePointer<Float>.allocate(capacity: 1025)
        let hh = UnsafeMutablePointer<Float>.allocate(capacity: 1025)
        for i in 0...1024 {
            let s = sin(Double.pi * Double(i) / 1024)
            let sh = sin(Double.pi * Double(i) / 2048)
            h[i] = Float(s * s)
            hh[i] = Float(sh * sh)
        }
        hann = h
        halfHann = hh
        reset()
    }

    /// Thread: render, or control while not rendering.
    public func reset() {
        guard let c = channels else { return }
        for i in 0..<channelCount { c[i].reset() }
    }

    public func render(_ context: RenderContext) {
        guard let channels, let ratio, let gain, let mix, let hann, let halfHann else { return }
        let n = context.frameCount
        let p = context.parameters
        if p.isSteady(0) {
            let r = exp2f(p.value(0) / 1200)
            let g = min(1, 1 / r.squareRoot())
            ratio.update(repeating: r, count: n)
            gain.update(repeating: g, count: n)
        } else {
            let cents = p[0]
            for i in 0..<n {
                let r = exp2f(cents[i] / 1200)
                ratio[i] = r
                gain[i] = min(1, 1 / r.squareRoot())
            }
        }
        if p.isSteady(1) {
            mix.update(repeating: p.value(1) * 0.01, count: n)
        } else {
            let m = p[1]
            for i in 0..<n { mix[i] = m[i] * 0.01 }
        }
        let input = context.inputs[0]
        let output = context.outputs[0]
        let count = min(channelCount, output.channelCount)
        for c in 0..<count {
            let source = input[min(c, input.channelCount - 1)]
            channels[c].render(
                input: source, output: output[c], frames: n, ratio: ratio, gain: gain, mix: mix, mode: p[2],
                hann: hann, halfHann: halfHann)
        }
    }
}
