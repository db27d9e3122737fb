#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import StageCore

/// `dynamics`: a compressor and a downward expander/gate, with Apple's DynamicsProcessor
/// names where they exist (`threshold`, `attackTime`, `releaseTime`, `expansionThreshold`,
/// `expansionRatio`, `overallGain`, `headRoom`) plus `ratio`, `knee` and
/// `expansionHysteresis`, and the setting `lookahead`.
///
/// Levels are RMS: the detector is the mean square of the input (the largest over the
/// channels: stereo is linked) through a one-pole, 1 ms for the compressor and 10 ms for
/// the expander (steadier near its threshold), so a steady signal's level is its RMS in
/// dBFS (a sine at −20 dBFS RMS has a peak of −17 dBFS).
///
/// Compressor (L = level, T = `threshold`, R = `ratio`, W = `knee`, all in dB), the usual
/// quadratic soft knee: reduction 0 for L − T < −W/2, (1/R − 1)·(L − T + W/2)²/(2W)
/// within the knee, (1/R − 1)·(L − T) above it. `ratio` 100 acts as a limiter.
/// `headRoom` (Apple's stand-in for a ratio) is 0 by default, meaning "use `ratio`"; a
/// value h > 0 replaces the ratio by R = −T/h (clamped to 1…100): a 0 dBFS input then
/// comes out h dB above the threshold, which is what Apple's curve does with its head
/// room. A rack sets one or the other.
///
/// Expander/gate (Te = `expansionThreshold`, E = `expansionRatio`, H = `expansionHysteresis`):
/// open, the gain is unity until L falls below Te − H; closed, the level is reduced by
/// (E − 1) dB per dB below Te (so the output falls E dB per input dB: a gate at high
/// ratios, at most 120 dB of reduction), and it opens again when L rises above Te. (So
/// between Te − H and Te the curve has two branches: that is the hysteresis.) A note
/// that decays across the threshold therefore closes the gate once, not back and forth.
///
/// Times: `attackTime` and `releaseTime` are time constants of one-pole smoothers, attack
/// when the level rises (the compressor reducing more, the gate opening), release when it
/// falls. The compressor's change is smoothed in dB, so after a level step it has gone
/// 63 % of its way in dB after one time constant; the expander's gain is smoothed as a
/// factor (63 % of its way in amplitude), so a gate opens in about its attack time from
/// any depth. The 1 ms detector adds a little to the measured attack (about 5 % at 20 ms).
/// The gate starts open (after `prepare` and `reset`).
/// `overallGain` is make-up gain after both. Setting `lookahead` (0…20 ms, default 0)
/// delays the audio, not the detector, by that much; the unit reports it as latency.
///
/// The gain reduction (compressor and expander, dB) of the last block is published as
/// `DynamicsUnit.gainReduction` and through `UnitMeter` for meters (the engine has no
/// read-only parameters yet; `--meters` does not show it yet).
public struct DynamicsUnitType: UnitType {
    public init() {}
    public var name: String { "dynamics" }
    /// `headRoom` is Apple's way of giving a ratio (ratio = −threshold / headRoom).
    public var exclusiveParameters: [[String]] { [["ratio", "headRoom"]] }
    public var summary: String {
        "compressor and expander/gate, RMS detector (Apple DynamicsProcessor names; channels follow the input, linked)"
    }

    /// Parameter indices, in declaration order.
    enum Param {
        static let threshold = 0
        static let ratio = 1
        static let knee = 2
        static let attackTime = 3
        static let releaseTime = 4
        static let expansionThreshold = 5
        static let expansionRatio = 6
        static let expansionHysteresis = 7
        static let overallGain = 8
        static let headRoom = 9
    }

    public static let maxLookahead = 0.02

    public var settings: [SettingSpec] {
        [
            SettingSpec(
                key: "lookahead", kind: .number(0...Self.maxLookahead),
                help: "seconds the audio waits for the detector (adds that latency; default 0)")
        ]
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(
                id: "threshold", name: "Threshold", unit: .decibels, range: -60...20, defaultValue: -20,
                smoothingSeconds: 0.02, help: "RMS level where compression starts (middle of the knee)"),
            ParameterSpec(
                id: "ratio", name: "Ratio", unit: .ratio, range: 1...100, defaultValue: 3, smoothingSeconds: 0.02,
                help: "dB in per dB out above the threshold; 100 acts as a limiter"),
            ParameterSpec(
                id: "knee", name: "Knee", unit: .decibels, range: 0...24, defaultValue: 6, smoothingSeconds: 0.02,
                help: "width of the soft knee around the threshold (0: hard)"),
            ParameterSpec(
                id: "attackTime", name: "Attack time", unit: .seconds, range: 0.0001...0.2, defaultValue: 0.01,
                smoothingSeconds: 0, help: "time constant of the gain change when the level rises"),
            ParameterSpec(
                id: "releaseTime", name: "Release time", unit: .seconds, range: 0.01...3, defaultValue: 0.15,
                smoothingSeconds: 0, help: "time constant of the gain change when the level falls"),
            ParameterSpec(
                id: "expansionThreshold", name: "Expansion threshold", unit: .decibels, range: -120...0,
                defaultValue: -60, smoothingSeconds: 0.02, help: "RMS level that opens the expander/gate"),
            ParameterSpec(
                id: "expansionRatio", name: "Expansion ratio", unit: .ratio, range: 1...50, defaultValue: 2,
                smoothingSeconds: 0.02, help: "dB out per dB in below the threshold (high values gate)"),
            ParameterSpec(
                id: "expansionHysteresis", name: "Expansion hysteresis", unit: .decibels, range: 0...12,
                defaultValue: 4, smoothingSeconds: 0.02, help: "the gate closes this far below where it opens"),
            ParameterSpec(
                id: "overallGain", name: "Overall gain", unit: .decibels, range: -40...40, defaultValue: 0,
                smoothingSeconds: 0.02, help: "make-up gain after compression"),
            ParameterSpec(
                id: "headRoom", name: "Head room", unit: .decibels, range: 0...40, defaultValue: 0,
                smoothingSeconds: 0.02, help: "0: use ratio; else ratio = −threshold/headRoom (Apple's curve)"),
        ]
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.any], outputs: [.sameAsInput(0)])
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        DynamicsUnit(lookaheadSeconds: min(max(settings.double("lookahead") ?? 0, 0), Self.maxLookahead))
    }
}

/// The values the per-sample loop uses, derived from the parameters. Thread: render.
struct DynamicsControl {
    var threshold: Float = 0
    /// 1/R − 1 (≤ 0).
    var slope: Float = 0
    var knee: Float = 0
    var expansionThreshold: Float = 0
    /// E − 1 (≥ 0).
    var expansionSlope: Float = 0
    var hysteresis: Float = 0
    var makeup: Float = 0
    var attack: Float = 1
    var release: Float = 1
    /// The raw values these were made from (NaN: none yet).
    var raw = SIMD8<Float>(repeating: .nan)
    var rawAttack: Float = .nan
    var rawRelease: Float = .nan

    /// Updates from the parameters at `frame` (only what changed).
    @inline(__always)
    mutating func update(_ p: ParameterValues, frame i: Int, sampleRate: Double) {
        typealias P = DynamicsUnitType.Param
        let a = p[P.attackTime][i], r = p[P.releaseTime][i]
        if a != rawAttack {
            rawAttack = a
            attack = DynamicsUnit.smoothingCoefficient(Double(a), sampleRate)
        }
        if r != rawRelease {
            rawRelease = r
            release = DynamicsUnit.smoothingCoefficient(Double(r), sampleRate)
        }
        let v = SIMD8<Float>(
            p[P.threshold][i], p[P.ratio][i], p[P.knee][i], p[P.expansionThreshold][i], p[P.expansionRatio][i],
            p[P.expansionHysteresis][i], p[P.overallGain][i], p[P.headRoom][i])
        // Lane-wise compare and one mask test (`v == raw` compiled to a loop over the lanes
        // through the stack, about 100 instructions a block).
        if all(v .== raw) { return }
        raw = v
        threshold = v[0]
        var ratio = min(max(v[1], 1), 100)
        if v[7] > 0 { ratio = min(max(-threshold / v[7], 1), 100) }
        slope = 1 / ratio - 1
        knee = max(v[2], 0)
        expansionThreshold = v[3]
        expansionSlope = max(v[4], 1) - 1
        hysteresis = max(v[5], 0)
        makeup = v[6]
    }

    /// The compressor's static gain change (dB, ≤ 0) at level `level` dB.
    @inline(__always)
    func compression(_ level: Float) -> Float {
        let over = level - threshold
        if 2 * over < -knee { return 0 }
        if 2 * over >= knee { return slope * over }
        let x = over + 0.5 * knee
        return slope * x * x / (2 * knee)
    }
}

/// The render state of the dynamics unit, in registers during a block. Thread: render.
struct DynamicsState {
    var power: Float, comp: Float, expansion: Float, open: Float, gatePower: Float
    /// The block's most compression (dB) and least expander gain, for the meter.
    var mostCompression: Float = 0
    var leastExpansion: Float = 1

    init(_ p: UnsafeMutablePointer<Float>) {
        power = p[0]
        comp = p[1]
        expansion = p[2]
        open = p[3]
        gatePower = p[4]
    }

    func store(_ p: UnsafeMutablePointer<Float>) {
        p[0] = power
        p[1] = comp
        p[2] = expansion
        p[3] = open
        p[4] = gatePower
    }
}

/// The compressor/expander. Per sample: detector, static curves, smoothing of the gain
/// change in dB, gain applied to the (optionally delayed) input. Everything per sample
/// from per-sample parameter values, so the output does not depend on block size.
/// Thread: render for `render`/`reset`; control for `init`/`prepare`.
public final class DynamicsUnit: RackUnit, UnitMeter {
    typealias Param = DynamicsUnitType.Param
    /// Time constant of the compressor's mean square.
    public static let detectorSeconds = 0.001
    /// Time constant of the expander's mean square (steadier near its threshold: a 1 ms
    /// mean square of a 100 Hz voice ripples by ±3 dB).
    public static let gateDetectorSeconds = 0.01
    /// The deepest reduction the expander applies.
    static let maxExpansion: Float = -120

    let lookaheadSeconds: Double
    var sampleRate = 48000.0
    var channels = 1
    var lookahead = 0
    var detectorCoefficient: Float = 0
    var gateDetectorCoefficient: Float = 0
    /// Render state, behind a pointer: mean square, compressor change (dB), expander gain
    /// (factor), gate open (1) or closed (0).
    let state: UnsafeMutablePointer<Float>
    let control: UnsafeMutablePointer<DynamicsControl>
    /// Lookahead delay lines, `channels × ringSize`.
    var ring: UnsafeMutablePointer<Float>? = nil
    var ringSize = 1
    var writeIndex = 0
    /// Per block: squares, then gains (`maxFrames`).
    var scratch: UnsafeMutablePointer<Float>? = nil
    let reduction = Atomic<UInt32>(0)

    public init(lookaheadSeconds: Double = 0) {
        self.lookaheadSeconds = lookaheadSeconds
        state = .allocate(capacity: 5)
        state.initialize(repeating: 0, count: 5)
        control = .allocate(capacity: 1)
        control.initialize(to: DynamicsControl())
    }

    deinit {
        state.deallocate()
        control.deallocate()
        ring?.deallocate()
        scratch?.deallocate()
    }

    public var latencyFrames: Int { lookahead }

    /// The most gain reduction (dB, ≥ 0) in the last rendered block. Thread: any.
    public var gainReduction: Float { Float(bitPattern: reduction.load(ordering: .relaxed)) }

    public var meterName: String { "gain reduction" }
    public var meterValue: Float { gainReduction }

    /// 1 − e^(−1/(τ·fs)): a one-pole's coefficient for time constant τ.
    static func smoothingCoefficient(_ seconds: Double, _ sampleRate: Double) -> Float {
        Float(1 - exp(-1 / (max(seconds, 1e-6) * sampleRate)))
    }

    /// Sizes the lookahead lines. Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        guard spec.sampleRate >= 1000, spec.sampleRate <= 1_000_000 else {
            throw UnitError("dynamics: sample rate \(spec.sampleRate) is outside 1 kHz…1 MHz")
        }
        sampleRate = spec.sampleRate
        channels = max(1, spec.outputChannels.first ?? spec.inputChannels.first ?? 1)
        detectorCoefficient = Self.smoothingCoefficient(Self.detectorSeconds, sampleRate)
        gateDetectorCoefficient = Self.smoothingCoefficient(Self.gateDetectorSeconds, sampleRate)
        lookahead = Int((lookaheadSeconds * sampleRate).rounded())
        ringSize = 1
        while ringSize < lookahead + 1 { ringSize <<= 1 }
        ring?.deallocate()
        ring = .allocate(capacity: channels * ringSize)
        scratch?.deallocate()
        scratch = .allocate(capacity: max(spec.maxFrames, 1))
        scratch!.initialize(repeating: 0, count: max(spec.maxFrames, 1))
        ring!.initialize(repeating: 0, count: channels * ringSize)
        reset()
    }

    /// Clears the detector, the smoothers and the lookahead; the gate starts open.
    /// Thread: render, or control while not rendering.
    public func reset() {
        state.update(repeating: 0, count: 5)
        state[2] = 1
        state[3] = 1
        control.pointee = DynamicsControl()
        ring?.update(repeating: 0, count: channels * ringSize)
        writeIndex = 0
    }

    public func render(_ context: RenderContext) {
        guard let ring, let scratch, let buses = StripBuses(context, preparedChannels: channels) else { return }
        let n = buses.frames, input = buses.input, output = buses.output, chans = buses.channels
        let params = context.parameters
        // Pass 1: the detector's input, the largest square over the channels.
        let first = input[0]
        for i in 0..<n { scratch[i] = first[i] * first[i] }
        for c in 1..<max(chans, 1) where c < input.channelCount {
            let src = input[c]
            for i in 0..<n { scratch[i] = max(scratch[i], src[i] * src[i]) }
        }
        // Pass 2: squares to gains, in place.
        var steady = true
        for p in 0..<params.count where !params.isSteady(p) { steady = false }
        var ctl = control.pointee
        ctl.update(params, frame: 0, sampleRate: sampleRate)
        var st = DynamicsState(state)
        let alpha = detectorCoefficient, gateAlpha = gateDetectorCoefficient
        if steady {
            Self.gains(scratch, count: n, ctl, &st, alpha, gateAlpha)
        } else {
            for i in 0..<n {
                ctl.update(params, frame: i, sampleRate: sampleRate)
                Self.gains(scratch + i, count: 1, ctl, &st, alpha, gateAlpha)
            }
        }
        st.store(state)
        control.pointee = ctl
        // Pass 3: the gains applied, through the lookahead line when there is one.
        let delay = lookahead, mask = ringSize - 1
        for c in 0..<chans {
            let src = input[min(c, input.channelCount - 1)]
            let dst = output[c]
            if delay == 0 {
                for i in 0..<n {
                    let y = src[i] * scratch[i]
                    dst[i] = abs(y) < 1e-30 ? 0 : y
                }
            } else {
                let line = ring + c * ringSize
                var w = writeIndex
                for i in 0..<n {
                    line[w] = src[i]
                    let y = line[(w &- delay) & mask] * scratch[i]
                    dst[i] = abs(y) < 1e-30 ? 0 : y
                    w = (w &+ 1) & mask
                }
            }
        }
        if delay > 0 { writeIndex = (writeIndex + n) & mask }
        buses.clearUnusedOutputs()
        let expanded = st.leastExpansion > 0 ? -FastDecibels.powerToDecibels(st.leastExpansion * st.leastExpansion) : 120
        reduction.store((-st.mostCompression + expanded).bitPattern, ordering: .relaxed)
    }

    /// Detector, curves and smoothing over `count` samples: each (largest) square in
    /// `buffer` becomes the gain for that sample. The state lives in locals for the loop.
    /// Thread: render.
    static func gains(
        _ buffer: UnsafeMutablePointer<Float>, count: Int, _ ctl: DynamicsControl, _ state: inout DynamicsState,
        _ alpha: Float, _ gateAlpha: Float
    ) {
        // One loop with the expander and one without: deciding per sample cost a compare
        // and a branch a sample.
        if ctl.expansionSlope > 0 {
            gainsLoop(buffer, count: count, ctl, &state, alpha, gateAlpha, gateOn: true)
        } else {
            gainsLoop(buffer, count: count, ctl, &state, alpha, gateAlpha, gateOn: false)
        }
    }

    /// `gains` with the expander on or off (a constant where it is inlined).
    @inline(__always)
    static func gainsLoop(
        _ buffer: UnsafeMutablePointer<Float>, count: Int, _ ctl: DynamicsControl, _ state: inout DynamicsState,
        _ alpha: Float, _ gateAlpha: Float, gateOn: Bool
    ) {
        var power = state.power, comp = state.comp, expansion = state.expansion, open = state.open
        var gatePower = state.gatePower, mostCompression = state.mostCompression, leastExpansion = state.leastExpansion
        let attack = ctl.attack, release = ctl.release, makeup = ctl.makeup
        let te = ctl.expansionThreshold, closeBelow = te - ctl.hysteresis
        let expansionSlope = ctl.expansionSlope
        for i in 0..<count {
            let square = buffer[i]
            power += alpha * (square - power)
            if power < 1e-30 { power = 0 }
            gatePower += gateAlpha * (square - gatePower)
            if gatePower < 1e-30 { gatePower = 0 }
            let level = FastDecibels.powerToDecibels(power)
            // Compressor: the change in dB, smoothed in dB.
            let gc = ctl.compression(level)
            comp += (gc < comp ? attack : release) * (gc - comp)
            if gc == 0 && comp > -1e-9 { comp = 0 }
            // Expander with hysteresis: closes below Te − H, opens above Te; its gain is
            // smoothed as a factor (a gate opens in about its attack time from any depth).
            var target: Float = 1
            if gateOn {
                let gateLevel = FastDecibels.powerToDecibels(gatePower)
                if open != 0 {
                    if gateLevel < closeBelow { open = 0 }
                } else if gateLevel > te {
                    open = 1
                }
                if open == 0 {
                    target = FastDecibels.decibelsToGain(max((gateLevel - te) * expansionSlope, maxExpansion))
                }
            } else {
                open = 1
            }
            expansion += (target < expansion ? release : attack) * (target - expansion)
            if target == 1 && expansion > 0.999_999_9 { expansion = 1 }
            mostCompression = min(mostCompression, comp)
            leastExpansion = min(leastExpansion, expansion)
            buffer[i] = FastDecibels.decibelsToGain(comp + makeup) * expansion
        }
        state.power = power
        state.comp = comp
        state.expansion = expansion
        state.open = open
        state.gatePower = gatePower
        state.mostCompression = mostCompression
        state.leastExpansion = leastExpansion
    }
}
