import StageCore
import Synchronization

/// `reverb`: a dense stereo reverb for voice, with the parameters of Apple's Reverb2.
///
/// Parameters (ids, ranges and meanings as `AUReverb2` / `kReverb2Param_*`):
/// - `dryWetMix` 0–100 %: 0 is the dry input untouched (bit-exact), 100 only reverb.
/// - `gain` −20…20 dB: level of the reverb (wet) signal. It is applied before the mix,
///   so `dryWetMix` 0 stays a bit-exact bypass whatever the gain.
/// - `minDelayTime`, `maxDelayTime` 0.0001–1 s: the span of the early reflections. The first
///   reflection comes at `minDelayTime`, the last at `maxDelayTime`; the late reverb is fed
///   at `minDelayTime` (the pre-delay). Swapped when min > max.
/// - `decayTimeAt0Hz`, `decayTimeAtNyquist` 0.001–20 s: RT60 (time to fall 60 dB) of the
///   late reverb at DC and at the Nyquist frequency.
/// - `randomizeReflections` 1–1000 (whole numbers): picks a pattern of reflection times and
///   gains and of delay-line lengths. 1 is the hand-tuned pattern; every other value is a
///   fixed, reproducible variation of it (a seed: the same value always sounds the same).
///
/// Defaults are for live vocals: a 1.8 s plate-like hall (decay 1.8 s at 0 Hz, 0.9 s at
/// Nyquist so sibilants do not hang), reflections from 15 to 55 ms (a short pre-delay keeps
/// the words clear of the tail), `dryWetMix` 25 %, gain 0 dB. Apple's own defaults
/// (100 % wet, 1.0 / 0.5 s, 8–50 ms) suit a send bus rather than an insert on a microphone.
///
/// Mono in (a stereo source is averaged by the engine), stereo out (decorrelated).
public struct ReverbUnitType: UnitType {
    public init() {}
    public var name: String { "reverb" }
    public var summary: String { "dense stereo reverb for voice (Apple Reverb2 parameters), mono in, stereo out" }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] { ReverbUnit.parameterSpecs }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.channels(1)], outputs: [.channels(2)])
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { ReverbUnit() }
}

/// The reverb: input diffusion, early reflections, and an 8-line feedback delay network.
///
/// Signal flow: input → 3 Schroeder allpasses (diffusion) → reflection line → 6 taps per
/// side between min and max delay (early reflections, L and R apart), and one tap at the
/// min delay that feeds an 8-line feedback delay network (FDN: Hadamard mixing, one
/// absorption filter per line). Wet = reflections + two orthogonal outputs of the FDN (so
/// L and R are decorrelated). The network is fed from one tap, not from the reflections,
/// so the reflections' comb-like spectrum does not colour the tail.
///
/// Absorption (Jot): line i of length dᵢ samples loses `−60·dᵢ/(fs·T)` dB per pass, with
/// T = `decayTimeAt0Hz` at DC and `decayTimeAtNyquist` at Nyquist, so every line decays at
/// the same rate per second and the RT60 of the whole network is the one asked for at both
/// ends. The filter is a 3-tap FIR per line whose gain at fs/4 also matches Jot's one-pole
/// (see `ReverbCore.computeCoefficients`): the decay moves between the two values like the
/// classic one-pole design for ratios up to about 4:1, more gently beyond, and the low band
/// holds `decayTimeAt0Hz` whatever the ratio.
///
/// Real-time structure (see REALTIME-SWIFT.md): all memory in pointers sized in `prepare`,
/// all render state in a struct behind a pointer (no class-property exclusivity checks).
/// Every line is at least 128 samples long and the absorption has no feedback of its own,
/// so inside a segment of at most 64 samples nothing read was written: the network runs
/// as loops over time that vectorize (absorbed reads into 8 rows, the Hadamard as adds
/// across rows, rows written back), like the diffusion, reflections and output mix.
/// This costs about half a C -O2 Freeverb (Benchmarks/reverb/run.sh).
///
/// Control: the slow derived values (reflection taps, line lengths, absorption
/// coefficients) are recomputed at fixed absolute times (every 64 samples of
/// `sampleTime`), from the parameters at that sample. New reflection taps (min/max delay,
/// which the engine steps rather than ramps) and new line lengths (`randomizeReflections`)
/// are reached by one raised-cosine crossfade of 512 samples; a knob that keeps moving gives
/// a chain of such crossfades, each to its latest value: no clicks, no zipper. Absorption
/// coefficients move linearly across each 64-sample interval, following the smoothed decay
/// times; `dryWetMix` and `gain` are applied per sample. Nothing depends on block
/// boundaries, so the output is the same for any block size. After the input has been
/// silent and the output has stayed below −160 dB for longer than the longest delay, the
/// state is cleared: no denormals, exact silence, and silence costs almost nothing.
///
/// Thread: render for `render`/`reset`; control for `init`/`prepare`.
public final class ReverbUnit: RackUnit {
    // MARK: Parameters

    /// The parameters, as Apple's Reverb2 names and ranges them. Thread: any.
    public static let parameterSpecs: [ParameterSpec] = [
        ParameterSpec(
            id: "dryWetMix", name: "Dry/wet mix", unit: .percent, range: 0...100, defaultValue: 25,
            smoothingSeconds: 0.02, help: "0 = dry input only (bit-exact), 100 = reverb only"),
        ParameterSpec(
            id: "gain", name: "Gain", unit: .decibels, range: -20...20, defaultValue: 0, smoothingSeconds: 0.02,
            help: "level of the reverb signal (before the mix)"),
        ParameterSpec(
            id: "minDelayTime", name: "Min delay time", unit: .seconds, range: 0.0001...1, defaultValue: 0.015,
            smoothingSeconds: 0, help: "first early reflection (pre-delay of the reverb)"),
        ParameterSpec(
            id: "maxDelayTime", name: "Max delay time", unit: .seconds, range: 0.0001...1, defaultValue: 0.055,
            smoothingSeconds: 0, help: "last early reflection"),
        ParameterSpec(
            id: "decayTimeAt0Hz", name: "Decay time at 0 Hz", unit: .seconds, range: 0.001...20, defaultValue: 1.8,
            smoothingSeconds: 0.05, help: "RT60 of the tail at low frequencies"),
        ParameterSpec(
            id: "decayTimeAtNyquist", name: "Decay time at Nyquist", unit: .seconds, range: 0.001...20,
            defaultValue: 0.9, smoothingSeconds: 0.05, help: "RT60 of the tail at the highest frequencies"),
        ParameterSpec(
            id: "randomizeReflections", name: "Randomize reflections", unit: .generic, range: 1...1000,
            defaultValue: 1, smoothingSeconds: 0,
            help: "pattern of reflections and delay lengths (1 = tuned; each value is reproducible)"),
        ParameterSpec(
            id: "feed", name: "Feed", unit: .percent, range: 0...100, defaultValue: 100, smoothingSeconds: 0.05,
            help: "share of the input fed into the hall (Talk sets 0: the tail rings out, the dry part stays)"),
    ]
    static let feedIndex = 7

    let core: UnsafeMutablePointer<ReverbCore>
    /// Tail length for the engine: the longer decay time plus the reflections, as last
    /// rendered (the defaults before the first block). Thread: render writes, any reads.
    let tail = Atomic<Double>(1.8 + 0.055)

    public init() {
        core = .allocate(capacity: 1)
        core.initialize(to: ReverbCore())
    }

    /// The input copy `feed` scales (FeedGate).
    var gate = FeedGate()

    deinit {
        gate.deallocate()
        core.pointee.deallocate()
        core.deinitialize(count: 1)
        core.deallocate()
    }

    public var latencyFrames: Int { 0 }
    public var tailSeconds: Double { tail.load(ordering: .relaxed) }

    /// Sizes every buffer for the sample rate. Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        guard spec.sampleRate >= 1000, spec.sampleRate <= 1_000_000 else {
            throw UnitError("reverb: sample rate \(spec.sampleRate) is outside 1 kHz…1 MHz")
        }
        core.pointee.prepare(sampleRate: spec.sampleRate)
        gate.prepare(channels: 1, maxFrames: spec.maxFrames)
    }

    /// Clears the tail; derived values are recomputed at the next sample rendered.
    /// Thread: render, or control while not rendering.
    public func reset() { core.pointee.reset() }

    /// Renders one block. Thread: render.
    public func render(_ context: RenderContext) {
        let p = context.parameters
        if FeedGate.isOpen(p, Self.feedIndex) {
            core.pointee.render(context)
        } else {
            core.pointee.render(gate.gated(context, feed: p[Self.feedIndex]))
            // Mono out: the dry is on the left only (ReverbKernels.mix); stereo: on both.
            FeedGate.restoreDry(context, outputs: context.outputs[0].channelCount, mix: p[0], feed: p[Self.feedIndex])
        }
        tail.store(core.pointee.tailSeconds, ordering: .relaxed)
    }
}
