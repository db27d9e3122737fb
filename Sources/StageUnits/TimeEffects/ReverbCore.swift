import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// Parameter indices of the reverb, in declaration order.
enum ReverbParameter {
    static let mix = 0, gain = 1, minDelay = 2, maxDelay = 3, decay0 = 4, decayNyquist = 5, randomize = 6
}

/// The reverb's state and control: a plain struct kept behind a pointer by `ReverbUnit`,
/// so the render path has no class-property exclusivity checks. The inner loops are in
/// ReverbKernels.swift. Thread: render, except `init`, `prepare`, `deallocate` (control).
struct ReverbCore {
    typealias P = ReverbParameter

    // MARK: Design constants

    static let lines = 8
    /// Control interval in samples (absolute time grid).
    static let grid = 64
    /// Changes of reflection taps and of line lengths crossfade (raised cosine) over this
    /// many control intervals (512 samples).
    static let fadeIntervals = 8
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
    /// Signs of the input into each line (not a Hadamard row): + − + + − + − −.
    /// The network's output level.
    static let networkOutput: Float = 0.7

    // MARK: Sizes and memory (set in prepare)

    var sampleRate: Double = 48000
    /// Reflection line: `erSize` samples (power of two), stored twice (mirror) so every
    /// window read by a tap is contiguous.
    var erSize = 1
    var erBuffer: UnsafeMutablePointer<Float>
    /// FDN lines: `fdnSize` samples each (power of two), line i's ring position j at
    /// `fdn[i * lineStride + lineOffset + j]`; the two slots before position 0 mirror the
    /// last two positions, so the absorption's older taps never wrap.
    var fdnSize = 1
    var lineStride = 1
    static let lineOffset = 16
    var fdn: UnsafeMutablePointer<Float>
    /// The network's working rows: 8 × grid (absorbed reads, then mixed values).
    var rows: UnsafeMutablePointer<Float>
    /// Absorption FIR per line: z = absorbA·x[n−d] + absorbB·x[n−d−1] + absorbC·x[n−d−2].
    var absorbA: UnsafeMutablePointer<Float>
    var absorbB: UnsafeMutablePointer<Float>
    var absorbC: UnsafeMutablePointer<Float>
    var allpassBuffer: UnsafeMutablePointer<Float>
    var allpassLength = (0, 0, 0)
    var allpassIndex = (0, 0, 0)
    /// Scratch, one control interval long: diffused input / network input, reflections,
    /// network outputs; and the crossfade ramps (j+1)/grid and 1 − that.
    var scratch: UnsafeMutablePointer<Float>
    var rampUp: UnsafeMutablePointer<Float>
    /// The crossfade: 0.5 − 0.5·cos(π·(j+1)/(fadeIntervals·grid)), j = 0 ..< fadeIntervals·grid.
    var fadeCurve: UnsafeMutablePointer<Float>
    /// Absorption coefficients at the start of the interval; the filter moves linearly
    /// from these to `absorbA/B/C` over the interval while `coefficientsRamping`.
    var startA: UnsafeMutablePointer<Float>
    var startB: UnsafeMutablePointer<Float>
    var startC: UnsafeMutablePointer<Float>
    var coefficientsRamping = false
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
    /// Control intervals left in the crossfade of the taps / of the line lengths (0: none).
    var tapFadeLeft = 0
    var lengthFadeLeft = 0
    var needsInit = true
    var silent = true
    var quietIntervals = 0
    var intervalInputBits: UInt32 = 0
    /// Largest |wet output| of the interval, as a bit pattern (order-preserving for ≥ 0).
    var intervalWetBits: UInt32 = 0
    /// Below this the tail counts as silent (1e-8, −160 dB).
    static let quietBits = Float(1e-8).bitPattern
    // Parameter values the derived state was computed from.
    var seed = 1
    var tapSeed = 1
    var tapLow: Float = -1
    var tapHigh: Float = -1
    var decayLow: Float = -1
    var decayHigh: Float = -1

    /// The longer decay time plus the last reflection, for `tailSeconds`.
    var tailSeconds = 1.8 + 0.055

    init() {
        erBuffer = .allocate(capacity: 1)
        fdn = .allocate(capacity: 1)
        rows = .allocate(capacity: 1)
        absorbA = .allocate(capacity: Self.lines)
        absorbB = .allocate(capacity: Self.lines)
        absorbC = .allocate(capacity: Self.lines)
        absorbA.initialize(repeating: 0, count: Self.lines)
        absorbB.initialize(repeating: 0, count: Self.lines)
        absorbC.initialize(repeating: 0, count: Self.lines)
        allpassBuffer = .allocate(capacity: 1)
        scratch = .allocate(capacity: 1)
        rampUp = .allocate(capacity: 1)
        fadeCurve = .allocate(capacity: 1)
        startA = .allocate(capacity: Self.lines)
        startB = .allocate(capacity: Self.lines)
        startC = .allocate(capacity: Self.lines)
        startA.initialize(repeating: 0, count: Self.lines)
        startB.initialize(repeating: 0, count: Self.lines)
        startC.initialize(repeating: 0, count: Self.lines)
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

    /// Frees every buffer. Thread: control.
    func deallocate() {
        for p in [
            erBuffer, fdn, rows, absorbA, absorbB, absorbC, startA, startB, startC, allpassBuffer, scratch, rampUp,
            fadeCurve, tapGain, nextTapGain,
        ] {
            p.deallocate()
        }
        for p in [tapDelay, nextTapDelay, length, oldLength] { p.deallocate() }
    }

    static func nextPowerOfTwo(_ n: Int) -> Int {
        var p = 1
        while p < n { p <<= 1 }
        return p
    }

    /// Sizes every buffer for `sampleRate`. Thread: control.
    mutating func prepare(sampleRate: Double) {
        self.sampleRate = sampleRate
        let g = Self.grid
        // Reflections reach back at most 1 s (maxDelayTime's top).
        erSize = Self.nextPowerOfTwo(Int(sampleRate.rounded(.up)) + 2 * g + 2)
        // Lines: the longest base length with +7 % of jitter, never shorter than 2 grids.
        longestLine = max(Int((Self.baseLengths.max()! * 1.07 * sampleRate / 48000).rounded(.up)) + 8, 2 * g + 8)
        fdnSize = Self.nextPowerOfTwo(longestLine + 1)
        lineStride = fdnSize + Self.lineOffset
        let apLengths = Self.allpassLengths.map { max(1, Int(($0 * sampleRate / 48000).rounded())) }
        allpassLength = (apLengths[0], apLengths[1], apLengths[2])

        for p in [erBuffer, fdn, rows, allpassBuffer, scratch, rampUp, fadeCurve] { p.deallocate() }
        erBuffer = Self.allocateZeroed(2 * erSize)
        fdn = Self.allocateZeroed(Self.lines * lineStride)
        rows = Self.allocateZeroed(Self.lines * g)
        allpassBuffer = Self.allocateZeroed(apLengths.reduce(0, +))
        scratch = Self.allocateZeroed(6 * g)
        rampUp = Self.allocateZeroed(g)
        for j in 0..<g { rampUp[j] = Float(j + 1) / Float(g) }
        let fade = Self.fadeIntervals * g
        fadeCurve = Self.allocateZeroed(fade)
        for j in 0..<fade { fadeCurve[j] = Float(0.5 - 0.5 * cos(Double.pi * Double(j + 1) / Double(fade))) }
        reset()
    }

    /// Zeroed storage aligned to 64 bytes (SIMD8 stores into the lines). Thread: control.
    static func allocateZeroed(_ count: Int) -> UnsafeMutablePointer<Float> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * 4, alignment: 64)
        return raw.initializeMemory(as: Float.self, repeating: 0, count: max(count, 1))
    }

    /// Clears tails and starts from silence; derived values are recomputed at the next
    /// sample rendered. Thread: render, or control while not rendering.
    mutating func reset() {
        clearState()
        needsInit = true
        tapFadeLeft = 0
        lengthFadeLeft = 0
        coefficientsRamping = false
        quietIntervals = 0
        intervalInputBits = 0
        intervalWetBits = 0
        erWrite = 0
        fdnWrite = 0
        allpassIndex = (0, 0, 0)
    }

    /// Zeroes every buffer and filter state (no allocation). Thread: render.
    mutating func clearState() {
        erBuffer.update(repeating: 0, count: 2 * erSize)
        fdn.update(repeating: 0, count: Self.lines * lineStride)
        allpassBuffer.update(repeating: 0, count: allpassLength.0 + allpassLength.1 + allpassLength.2)
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
    mutating func computeLengths(seed: Int, into out: UnsafeMutablePointer<Int>) {
        let scale = sampleRate / 48000
        for i in 0..<Self.lines {
            let j = seed == 1 ? 0 : 0.06 * Self.jitter(seed, 100 + i)
            var d = max(2 * Self.grid, Int((Self.baseLengths[i] * (1 + j) * scale).rounded()))
            while (0..<i).contains(where: { out[$0] == d }) { d += 1 }
            out[i] = min(d, longestLine)
        }
    }

    /// Reflection taps for the span low…high seconds and `seed`. Thread: render.
    mutating func computeTaps(low: Float, high: Float, seed: Int, delays: UnsafeMutablePointer<Int>, gains: UnsafeMutablePointer<Float>) {
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

    /// Absorption coefficients for the current lengths and decay times (Jot): line i,
    /// dᵢ samples long, keeps g = 10^(−3·dᵢ/(fs·T)) per pass, with T = decay0 at DC and
    /// decayNyquist at Nyquist, through the FIR a·x[n] + b·x[n−1] + c·x[n−2]:
    /// a+b+c = g₀ (DC), a−b+c = g_N (Nyquist), and |H| at fs/4 = that of Jot's one-pole
    /// low-pass with the same ends, |H(π/2)|² = (a−c)² + b². (a−c)² is clamped so that |H|
    /// stays monotonic (|H|² is a quadratic in cos ω): then the decay moves from the 0 Hz
    /// value to the Nyquist value without overshoot, like the one-pole for ratios up to
    /// about 4:1 and more gently beyond. An FIR (not the one-pole) keeps the network free
    /// of recursion inside a 64-sample segment, so it vectorizes over time. The Hadamard's
    /// 1/√8 is folded in. Thread: render.
    mutating func computeCoefficients(decay0: Float, decayNyquist: Float) {
        let scale = 1 / Double(Self.lines).squareRoot()
        for i in 0..<Self.lines {
            let d = Double(length[i])
            let g0 = pow(10, -3 * d / (sampleRate * Double(decay0)))
            let gN = pow(10, -3 * d / (sampleRate * Double(decayNyquist)))
            let ratio = gN / max(g0, 1e-300)
            let pole = (1 - ratio) / (1 + ratio)
            let onePoleMid = g0 * (1 - pole) / (1 + pole * pole).squareRoot()  // |H(π/2)| of the one-pole
            let b = (g0 - gN) / 2
            let m = (g0 + gN) / 2
            let e2 = min(max(onePoleMid * onePoleMid - b * b, m * m - abs(b) * m), m * m + abs(b) * m)
            let e = max(e2, 0).squareRoot()
            absorbA[i] = Self.coefficient(scale * (m + e) / 2)
            absorbB[i] = Self.coefficient(scale * b)
            absorbC[i] = Self.coefficient(scale * (m - e) / 2)
        }
    }

    /// A coefficient as a Float, 0 when it would be tiny (or denormal). Thread: any.
    static func coefficient(_ x: Double) -> Float { abs(x) < 1e-20 ? 0 : Float(x) }

    /// Runs at every multiple of 64 samples (and at the first sample after a reset):
    /// closes the last interval (fades, silence detection) and derives the slow values
    /// from the parameters at `frame`. Thread: render.
    mutating func control(_ params: ParameterValues, frame: Int) {
        let g = Self.grid
        if !needsInit {
            if tapFadeLeft > 0 {
                tapFadeLeft -= 1
                if tapFadeLeft == 0 {
                    tapDelay.update(from: nextTapDelay, count: Self.taps)
                    tapGain.update(from: nextTapGain, count: Self.taps)
                }
            }
            if lengthFadeLeft > 0 {
                lengthFadeLeft -= 1
                if lengthFadeLeft == 0 { oldLength.update(from: length, count: Self.lines) }
            }
            let quiet = intervalInputBits == 0 && intervalWetBits < Self.quietBits
            quietIntervals = quiet ? quietIntervals + 1 : 0
            if !silent && quietIntervals * g >= longestLine + erSize / 2 + 4 * g {
                clearState()
            }
        }
        intervalInputBits = 0
        intervalWetBits = 0
        if coefficientsRamping {
            startA.update(from: absorbA, count: Self.lines)
            startB.update(from: absorbB, count: Self.lines)
            startC.update(from: absorbC, count: Self.lines)
            coefficientsRamping = false
        }

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
            tapSeed = seed
            lengthsChanged = true
        } else {
            // One crossfade at a time, each to the latest values: a knob that moves
            // gives a chain of smooth 512-sample crossfades that follows it.
            if newSeed != seed && lengthFadeLeft == 0 && tapFadeLeft == 0 {
                seed = newSeed
                computeLengths(seed: seed, into: length)
                for i in 0..<Self.lines where length[i] != oldLength[i] { lengthsChanged = true }
                if lengthsChanged { lengthFadeLeft = Self.fadeIntervals }
            }
            if tapFadeLeft == 0 && (low != tapLow || high != tapHigh || seed != tapSeed) {
                tapLow = low
                tapHigh = high
                tapSeed = seed
                computeTaps(low: low, high: high, seed: seed, delays: nextTapDelay, gains: nextTapGain)
                for k in 0..<Self.taps where nextTapDelay[k] != tapDelay[k] || nextTapGain[k] != tapGain[k] {
                    tapFadeLeft = Self.fadeIntervals
                }
            }
        }
        if lengthsChanged || d0 != decayLow || dN != decayHigh {
            decayLow = d0
            decayHigh = dN
            computeCoefficients(decay0: d0, decayNyquist: dN)
            tailSeconds = Double(max(d0, dN)) + Double(high)
            if needsInit {
                startA.update(from: absorbA, count: Self.lines)
                startB.update(from: absorbB, count: Self.lines)
                startC.update(from: absorbC, count: Self.lines)
            } else {
                coefficientsRamping = true
            }
        }
        needsInit = false
    }

    // MARK: Render

    /// Renders one block. Thread: render.
    mutating func render(_ context: RenderContext) {
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
