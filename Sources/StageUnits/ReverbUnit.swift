import StageCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `reverb`: a dense stereo reverb for voice, with the parameters of Apple's Reverb2.
///
/// Parameters (ids, ranges and meanings as `AUReverb2` / `kReverb2Param_*`):
/// - `dryWetMix` 0–100 %: 0 is the dry input untouched (bit-exact), 100 only reverb.
/// - `gain` −20…20 dB: level of the reverb (wet) signal. It is applied before the mix,
///   so `dryWetMix` 0 stays a bit-exact bypass whatever the gain.
/// - `minDelayTime`, `maxDelayTime` 0.0001–1 s: the span of the early reflections. The first
///   reflection (and so the start of the reverb) comes at `minDelayTime`, the last at
///   `maxDelayTime`; the late reverb is fed from the reflections. Swapped when min > max.
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
/// T = `decayTimeAt0Hz` at DC and `decayTimeAtNyquist` at Nyquist, through a one-pole
/// low-pass (or, when Nyquist decays slower, high-boost) `y = bᵢ·x + pᵢ·y'`. Every line then
/// decays at the same rate per second, so the RT60 of the whole network is the one asked
/// for at both ends. A first-order filter cannot follow very large ratios: the pole is
/// clamped to −0.95…0.995 (stability), and beyond about 10:1 between the two decay times
/// the low band decays somewhat faster than `decayTimeAt0Hz`.
///
/// Real-time structure (see REALTIME-SWIFT.md): all memory in pointers sized in `prepare`;
/// the FDN lines are interleaved (one 8-float frame per sample), so a write is one SIMD8
/// store and the 8 reads run in one loop with the mixing in SIMD8; the diffusion,
/// reflections and output mix are block loops that vectorize.
///
/// Control: the slow derived values (reflection taps, line lengths, absorption
/// coefficients) are recomputed at fixed absolute times (every 64 samples of
/// `sampleTime`), from the smoothed parameters at that sample. Changed reflection taps
/// crossfade over the next 64 samples; changed line lengths (`randomizeReflections`)
/// crossfade their reads over 512 samples: no clicks. `dryWetMix` and `gain` are applied
/// per sample. Nothing depends on block boundaries, so the output is the same for any
/// block size. After the input has been silent and the tail has fallen below −160 dB the
/// state is cleared (no denormals, and silence costs almost nothing).
///
/// Thread: render for `render`/`reset`; control for `init`/`prepare`.
public final class ReverbUnit: RackUnit {
    // MARK: Parameters

    /// Parameter indices, in declaration order.
    enum P {
        static let mix = 0, gain = 1, minDelay = 2, maxDelay = 3, decay0 = 4, decayNyquist = 5, randomize = 6
    }

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
            smoothingSeconds: 0.05, help: "first early reflection (pre-delay of the reverb)"),
        ParameterSpec(
            id: "maxDelayTime", name: "Max delay time", unit: .seconds, range: 0.0001...1, defaultValue: 0.055,
            smoothingSeconds: 0.05, help: "last early reflection"),
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
    ]

    // MARK: Design constants

    static let lines = 8
    /// Control interval in samples (absolute time grid).
    static let grid = 64
    /// A change of line lengths crossfades over this many control intervals.
    static let lengthFadeIntervals = 8
    static let tapsPerSide = 6
    /// Six reflections per side, then the network's input tap (the pre-delay).
    static let taps = 2 * tapsPerSide + 1
    static let allpasses = 3
    /// Line lengths at 48 kHz (26–52 ms), mutually prime.
    static let baseLengths: [Double] = [1277, 1451, 1627, 1801, 1979, 2153, 2333, 2503]
    /// Diffusion allpass lengths at 48 kHz and their coefficient.
    static let allpassLengths: [Double] = [241, 163, 103]
    static let allpassGain: Float = 0.62
    /// Reflection positions (0 = min delay, 1 = max delay) and gains: left taps, then right.
    static let tapPositions: [Double] = [0.00, 0.17, 0.31, 0.52, 0.74, 0.97, 0.07, 0.23, 0.41, 0.60, 0.83, 1.00]
    static let tapGains: [Double] = [0.80, -0.66, 0.55, -0.45, 0.36, -0.30, -0.76, 0.62, -0.52, 0.42, -0.34, 0.28]
    /// Level of the reflections in the output, and of the input into the network.
    static let reflectionLevel: Double = 0.42
    static let networkInput: Double = 0.6
    /// Signs of the input into each line (not a Hadamard row).
    static let inputSigns = SIMD8<Float>(1, -1, 1, 1, -1, 1, -1, -1)
    /// The network's output level.
    static let networkOutput: Float = 0.7

    // MARK: Sizes and memory (set in prepare)

    var sampleRate: Double = 48000
    var maxFrames = 0
    /// Reflection line: `erSize` samples (power of two), stored twice (mirror) so every
    /// window read by a tap is contiguous.
    var erSize = 1
    var erBuffer: UnsafeMutablePointer<Float>
    /// FDN lines, interleaved: sample t of line i at `fdn[(t & fdnMask) * 8 + i]`.
    var fdnSize = 1
    var fdn: UnsafeMutablePointer<Float>
    var allpassBuffer: UnsafeMutablePointer<Float>
    var allpassLength = (0, 0, 0)
    var allpassIndex = (0, 0, 0)
    /// Scratch, one control interval long: diffused input / network input, reflections,
    /// network outputs; and the crossfade ramps (j+1)/grid and 1 − that.
    var scratch: UnsafeMutablePointer<Float>
    var rampUp: UnsafeMutablePointer<Float>
    var rampDown: UnsafeMutablePointer<Float>
    /// Reflection taps (delay in samples, gain): current and next (while crossfading).
    var tapDelay: UnsafeMutablePointer<Int>
    var tapGain: UnsafeMutablePointer<Float>
    var nextTapDelay: UnsafeMutablePointer<Int>
    var nextTapGain: UnsafeMutablePointer<Float>
    /// Line lengths: current, and the ones faded from while `lengthFadeLeft > 0`.
    var length: UnsafeMutablePointer<Int>
    var oldLength: UnsafeMutablePointer<Int>
    var longestLine = 0

    // MARK: Render state

    var erWrite = 0
    var fdnWrite = 0
    var filterState = SIMD8<Float>.zero
    var coefB = SIMD8<Float>.zero
    var coefP = SIMD8<Float>.zero
    var tapsFading = false
    var lengthFadeLeft = 0
    var needsInit = true
    var silent = true
    var quietIntervals = 0
    var intervalInputBits: UInt32 = 0
    var intervalEnergy: Float = 0
    // Parameter values the derived state was computed from.
    var seed = 1
    var tapLow: Float = -1
    var tapHigh: Float = -1
    var decayLow: Float = -1
    var decayHigh: Float = -1

    /// Tail length for the engine: the longer decay time plus the reflections, as last
    /// rendered (the defaults before the first block). Thread: render writes, any reads.
    let tail = Atomic<Double>(1.8 + 0.055)

    public init() {
        erBuffer = .allocate(capacity: 1)
        fdn = .allocate(capacity: 1)
        allpassBuffer = .allocate(capacity: 1)
        scratch = .allocate(capacity: 1)
        rampUp = .allocate(capacity: 1)
        rampDown = .allocate(capacity: 1)
        tapDelay = .allocate(capacity: Self.taps)
        tapGain = .allocate(capacity: Self.taps)
        nextTapDelay = .allocate(capacity: Self.taps)
        nextTapGain = .allocate(capacity: Self.taps)
        length = .allocate(capacity: Self.lines)
        oldLength = .allocate(capacity: Self.lines)
        tapDelay.initialize(repeating: 1, count: Self.taps)
        nextTapDelay.initialize(repeating: 1, count: Self.taps)
        tapGain.initialize(repeating: 0, count: Self.taps)
        nextTapGain.initialize(repeating: 0, count: Self.taps)
        length.initialize(repeating: 1, count: Self.lines)
        oldLength.initialize(repeating: 1, count: Self.lines)
    }

    deinit {
        for p in [erBuffer, fdn, allpassBuffer, scratch, rampUp, rampDown, tapGain, nextTapGain] { p.deallocate() }
        for p in [tapDelay, nextTapDelay, length, oldLength] { p.deallocate() }
    }

    public var latencyFrames: Int { 0 }
    public var tailSeconds: Double { tail.load(ordering: .relaxed) }

    static func nextPowerOfTwo(_ n: Int) -> Int {
        var p = 1
        while p < n { p <<= 1 }
        return p
    }

    /// Sizes every buffer for `spec.sampleRate`. Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        guard spec.sampleRate >= 1000, spec.sampleRate <= 1_000_000 else {
            throw UnitError("reverb: sample rate \(spec.sampleRate) is outside 1 kHz…1 MHz")
        }
        sampleRate = spec.sampleRate
        maxFrames = spec.maxFrames
        let g = Self.grid
        // Reflections reach back at most 1 s (maxDelayTime's top).
        erSize = Self.nextPowerOfTwo(Int(sampleRate.rounded(.up)) + 2 * g + 2)
        // Lines: the longest base length with +7 % of jitter, never shorter than 2 grids.
        longestLine = max(Int((Self.baseLengths.max()! * 1.07 * sampleRate / 48000).rounded(.up)) + 8, 2 * g + 8)
        fdnSize = Self.nextPowerOfTwo(longestLine + 1)
        let apLengths = Self.allpassLengths.map { max(1, Int(($0 * sampleRate / 48000).rounded())) }
        allpassLength = (apLengths[0], apLengths[1], apLengths[2])

        for p in [erBuffer, fdn, allpassBuffer, scratch, rampUp, rampDown] { p.deallocate() }
        erBuffer = Self.allocateZeroed(2 * erSize)
        fdn = Self.allocateZeroed(Self.lines * fdnSize)
        allpassBuffer = Self.allocateZeroed(apLengths.reduce(0, +))
        scratch = Self.allocateZeroed(6 * g)
        rampUp = Self.allocateZeroed(g)
        rampDown = Self.allocateZeroed(g)
        for j in 0..<g {
            rampUp[j] = Float(j + 1) / Float(g)
            rampDown[j] = 1 - rampUp[j]
        }
        reset()
    }

    /// Zeroed storage aligned to 64 bytes (SIMD8 stores into the lines). Thread: control.
    static func allocateZeroed(_ count: Int) -> UnsafeMutablePointer<Float> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * 4, alignment: 64)
        return raw.initializeMemory(as: Float.self, repeating: 0, count: max(count, 1))
    }

    /// Clears tails and starts from silence; derived values are recomputed at the next
    /// sample rendered. Thread: render, or control while not rendering.
    public func reset() {
        clearState()
        needsInit = true
        tapsFading = false
        lengthFadeLeft = 0
        quietIntervals = 0
        intervalInputBits = 0
        intervalEnergy = 0
        erWrite = 0
        fdnWrite = 0
        allpassIndex = (0, 0, 0)
    }

    /// Zeroes every buffer and filter state (no allocation). Thread: render.
    func clearState() {
        erBuffer.update(repeating: 0, count: 2 * erSize)
        fdn.update(repeating: 0, count: Self.lines * fdnSize)
        allpassBuffer.update(repeating: 0, count: allpassLength.0 + allpassLength.1 + allpassLength.2)
        filterState = .zero
        silent = true
    }

    // MARK: Control (every 64 samples of absolute time)

    /// A reproducible number in −1…1 for (seed, index). Thread: any.
    static func jitter(_ seed: Int, _ index: Int) -> Double {
        var z = UInt64(truncatingIfNeeded: seed) &* 0x1_0000 &+ UInt64(truncatingIfNeeded: index) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 52) - 1
    }

    /// Line lengths for `seed`, distinct, into `out`. Thread: render (no allocation).
    func computeLengths(seed: Int, into out: UnsafeMutablePointer<Int>) {
        let scale = sampleRate / 48000
        for i in 0..<Self.lines {
            let j = seed == 1 ? 0 : 0.06 * Self.jitter(seed, 100 + i)
            var d = max(2 * Self.grid, Int((Self.baseLengths[i] * (1 + j) * scale).rounded()))
            while (0..<i).contains(where: { out[$0] == d }) { d += 1 }
            out[i] = min(d, longestLine)
        }
    }

    /// Reflection taps for the span low…high seconds and `seed`. Thread: render.
    func computeTaps(low: Float, high: Float, seed: Int, delays: UnsafeMutablePointer<Int>, gains: UnsafeMutablePointer<Float>) {
        let lo = Double(low) * sampleRate
        let hi = Double(high) * sampleRate
        let scale = Self.reflectionLevel / Double(Self.tapsPerSide).squareRoot()
        for k in 0..<2 * Self.tapsPerSide {
            var u = Self.tapPositions[k]
            var g = Self.tapGains[k]
            if seed != 1 {
                u = min(max(u + 0.05 * Self.jitter(seed, k), 0), 1)
                g *= 1 + 0.15 * Self.jitter(seed, 50 + k)
            }
            delays[k] = min(max(1, Int((lo + (hi - lo) * u).rounded())), erSize - 2 * Self.grid)
            gains[k] = Float(g * scale)
        }
        delays[Self.taps - 1] = min(max(1, Int(lo.rounded())), erSize - 2 * Self.grid)
        gains[Self.taps - 1] = Float(Self.networkInput)
    }

    /// Absorption coefficients for the current lengths and decay times. Thread: render.
    func computeCoefficients(decay0: Float, decayNyquist: Float) {
        let c = 1 / Double(Self.lines).squareRoot()  // the Hadamard's normalisation
        var b = SIMD8<Double>.zero
        var p = SIMD8<Double>.zero
        for i in 0..<Self.lines {
            let d = Double(length[i])
            let a0 = -3 * d / (sampleRate * Double(decay0))  // log10 of the DC gain per pass
            let aN = -3 * d / (sampleRate * Double(decayNyquist))
            let g0 = pow(10, a0)
            let r = pow(10, aN - a0)  // Nyquist gain / DC gain
            let pole = min(max((1 - r) / (1 + r), -0.95), 0.995)
            b[i] = c * g0 * (1 - pole)
            p[i] = pole
        }
        coefB = SIMD8<Float>(b)
        coefP = SIMD8<Float>(p)
    }

    /// Runs at every multiple of 64 samples (and at the first sample after a reset):
    /// closes the last interval (fades, silence detection) and derives the slow values
    /// from the parameters at `frame`. Thread: render.
    func control(_ params: ParameterValues, frame: Int) {
        let g = Self.grid
        if !needsInit {
            if tapsFading {
                tapDelay.update(from: nextTapDelay, count: Self.taps)
                tapGain.update(from: nextTapGain, count: Self.taps)
                tapsFading = false
            }
            if lengthFadeLeft > 0 {
                lengthFadeLeft -= 1
                if lengthFadeLeft == 0 { oldLength.update(from: length, count: Self.lines) }
            }
            let quiet = intervalInputBits == 0 && intervalEnergy < 1e-16
            quietIntervals = quiet ? quietIntervals + 1 : 0
            if !silent && quietIntervals * g >= longestLine + erSize / 2 + 4 * g {
                clearState()
            }
        }
        intervalInputBits = 0
        intervalEnergy = 0

        let a = params[P.minDelay][frame]
        let b = params[P.maxDelay][frame]
        let low = min(a, b)
        let high = max(a, b)
        let newSeed = min(max(Int(params[P.randomize][frame].rounded()), 1), 1000)
        let d0 = params[P.decay0][frame]
        let dN = params[P.decayNyquist][frame]
        var lengthsChanged = false
        if needsInit {
            seed = newSeed
            computeLengths(seed: seed, into: length)
            oldLength.update(from: length, count: Self.lines)
            computeTaps(low: low, high: high, seed: seed, delays: tapDelay, gains: tapGain)
            tapLow = low
            tapHigh = high
            lengthsChanged = true
        } else {
            var tapsDirty = low != tapLow || high != tapHigh
            if newSeed != seed && lengthFadeLeft == 0 {
                seed = newSeed
                tapsDirty = true
                computeLengths(seed: seed, into: length)
                for i in 0..<Self.lines where length[i] != oldLength[i] { lengthsChanged = true }
                if lengthsChanged { lengthFadeLeft = Self.lengthFadeIntervals }
            }
            if tapsDirty {
                tapLow = low
                tapHigh = high
                computeTaps(low: low, high: high, seed: seed, delays: nextTapDelay, gains: nextTapGain)
                for k in 0..<Self.taps where nextTapDelay[k] != tapDelay[k] || nextTapGain[k] != tapGain[k] {
                    tapsFading = true
                }
            }
        }
        if lengthsChanged || d0 != decayLow || dN != decayHigh {
            decayLow = d0
            decayHigh = dN
            computeCoefficients(decay0: d0, decayNyquist: dN)
            tail.store(Double(max(d0, dN)) + Double(high), ordering: .relaxed)
        }
        needsInit = false
    }

    // MARK: Render

    /// Renders one block. Thread: render.
    public func render(_ context: RenderContext) {
        let n = context.frameCount
        guard n > 0 else { return }
        let input = context.inputs[0][0]
        let out = context.outputs[0]
        let outL = out[0]
        let mono = out.channelCount < 2
        let outR = mono ? out[0] : out[1]
        let params = context.parameters
        let g = Int64(Self.grid)
        var i = 0
        while i < n {
            let t = context.sampleTime + Int64(i)
            let phase = Int(((t % g) + g) % g)
            if phase == 0 || needsInit { control(params, frame: i) }
            let len = segment(
                input: input + i, left: outL + i, right: outR + i, count: min(n - i, Self.grid - phase),
                phase: phase, params: params, frame: i, mono: mono)
            i += len
        }
    }
}
