#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import StageCore

/// `deesser`: turns sibilants ("s", "sh", "t") down when the band above `frequency` gets
/// louder than `threshold`.
///
/// - `frequency` 2…16 kHz (default 6 kHz): the split. The detector listens only above it
///   (a 4th-order Linkwitz–Riley high-pass, 24 dB per octave), and in split mode only the
///   band above it is reduced.
/// - `threshold` dB (default −30): the RMS level of the band above `frequency` where
///   reduction starts. Below it nothing is reduced.
/// - `range` dB (0…24, default 6): the most reduction. Above the threshold the reduction
///   is the excess in dB (an infinite ratio), up to `range`.
/// - `mode`: "split" reduces only the band above `frequency` (the voice keeps its body;
///   the two Linkwitz–Riley bands sum to an all-pass, so with no reduction the magnitude
///   is flat and only the phase near the split turns); "wideband" turns the whole voice
///   down (the input itself passes untouched when nothing is reduced).
///
/// Detector: mean square of the high band (largest over channels: stereo is linked)
/// through a 1 ms one-pole; the reduction, in dB, follows with 1 ms attack and 60 ms
/// release. Channels follow the input.
public struct DeEsserUnitType: UnitType {
    public init() {}
    public var name: String { "deesser" }
    public var summary: String { "de-esser: split-band or wideband reduction of sibilants (channels follow the input)" }

    public static let modes = ["split", "wideband"]

    /// Parameter indices, in declaration order.
    enum Param {
        static let frequency = 0
        static let threshold = 1
        static let range = 2
        static let mode = 3
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(
                id: "frequency", name: "Frequency", unit: .hertz, range: 2000...16000, defaultValue: 6000,
                smoothingSeconds: 0.02, help: "split: the detector listens above it (split mode reduces only there)"),
            ParameterSpec(
                id: "threshold", name: "Threshold", unit: .decibels, range: -60...0, defaultValue: -30,
                smoothingSeconds: 0.02, help: "RMS level of the high band where reduction starts"),
            ParameterSpec(
                id: "range", name: "Range", unit: .decibels, range: 0...24, defaultValue: 6, smoothingSeconds: 0.02,
                help: "the most reduction"),
            .choice(
                id: "mode", name: "Mode", choices: Self.modes, defaultIndex: 0,
                help: "split: reduce only above frequency; wideband: the whole signal"),
        ]
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.any], outputs: [.sameAsInput(0)])
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { DeEsserUnit() }
}

/// The de-esser. Pass 1 runs the crossover over the block for every channel (low and high
/// bands into scratch); pass 2 runs the linked detector and applies the gain per sample.
/// Crossover coefficients follow `frequency` on a 16-sample grid of absolute time (as the
/// EQ does), so the output does not depend on block size.
/// Thread: render for `render`/`reset`; control for `init`/`prepare`.
public final class DeEsserUnit: RackUnit, UnitMeter {
    typealias Param = DeEsserUnitType.Param
    static let grid = 16
    public static let detectorSeconds = 0.001
    public static let attackSeconds = 0.001
    public static let releaseSeconds = 0.06

    var sampleRate = 48000.0
    var channels = 1
    var maxFrames = 0
    var detector: Float = 0
    var attack: Float = 0
    var release: Float = 0
    /// Per channel: three filters' (s1, s2): the first split, then the high band's second
    /// stage, then the low band's.
    var filterState: UnsafeMutablePointer<Float>? = nil
    /// Per channel: high band, then low band, `maxFrames` each.
    var scratch: UnsafeMutablePointer<Float>? = nil
    /// Mean square, reduction (dB, ≤ 0).
    let state: UnsafeMutablePointer<Float>
    var coefficients = SVFCoefficients()
    var cachedFrequency: Float = .nan
    let reduction = Atomic<UInt32>(0)

    public init() {
        state = .allocate(capacity: 2)
        state.initialize(repeating: 0, count: 2)
    }

    deinit {
        state.deallocate()
        filterState?.deallocate()
        scratch?.deallocate()
    }

    /// The most reduction (dB, ≥ 0) in the last rendered block. Thread: any.
    public var gainReduction: Float { Float(bitPattern: reduction.load(ordering: .relaxed)) }

    public var meterName: String { "gain reduction" }
    public var meterValue: Float { gainReduction }

    /// Sizes the filter states and scratch. Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        guard spec.sampleRate >= 8000, spec.sampleRate <= 1_000_000, spec.maxFrames > 0 else {
            throw UnitError("deesser: sample rate \(spec.sampleRate) is outside 8 kHz…1 MHz")
        }
        sampleRate = spec.sampleRate
        maxFrames = spec.maxFrames
        channels = max(1, spec.outputChannels.first ?? spec.inputChannels.first ?? 1)
        detector = DynamicsUnit.smoothingCoefficient(Self.detectorSeconds, sampleRate)
        attack = DynamicsUnit.smoothingCoefficient(Self.attackSeconds, sampleRate)
        release = DynamicsUnit.smoothingCoefficient(Self.releaseSeconds, sampleRate)
        filterState?.deallocate()
        scratch?.deallocate()
        filterState = .allocate(capacity: 6 * channels)
        filterState!.initialize(repeating: 0, count: 6 * channels)
        scratch = .allocate(capacity: 2 * maxFrames * channels)
        scratch!.initialize(repeating: 0, count: 2 * maxFrames * channels)
        reset()
    }

    /// Clears the filters and the detector. Thread: render, or control while not rendering.
    public func reset() {
        filterState?.update(repeating: 0, count: 6 * channels)
        state.update(repeating: 0, count: 2)
        cachedFrequency = .nan
    }

    /// Butterworth (Q = 1/√2) state-variable coefficients at `hz`, clamped under 0.45·fs.
    func crossover(_ hz: Float) -> SVFCoefficients {
        let f = min(Double(hz), 0.45 * sampleRate)
        return SVFCoefficients(SVFDesign(g: tan(Double.pi * f / sampleRate), k: 2.0.squareRoot(), m0: 0, m1: 0, m2: 1))
    }

    public func render(_ context: RenderContext) {
        guard let filterState, let scratch, let buses = StripBuses(context, preparedChannels: channels) else { return }
        let n = buses.frames, input = buses.input, output = buses.output, chans = buses.channels
        let params = context.parameters
        splitBands(params, input: input, frames: n, channels: chans, start: context.sampleTime, state: filterState, scratch: scratch)
        applyReduction(params, input: input, output: output, frames: n, channels: chans, scratch: scratch)
        buses.clearUnusedOutputs()
    }

    /// Pass 1: the Linkwitz–Riley bands of every channel into scratch (high, low).
    @inline(__always)
    func splitBands(
        _ params: ParameterValues, input: AudioBus, frames n: Int, channels chans: Int, start: Int64,
        state: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>
    ) {
        let frequency = params[Param.frequency]
        let stride = 2 &* maxFrames, lowOffset = maxFrames
        let grid = Self.grid
        // Only the first segment can start off the grid: the remainder is taken once.
        let phase = Int(start % Int64(grid))
        if params.isSteady(Param.frequency) && frequency[0] == cachedFrequency {
            // The usual block (the split holds still): no coefficient checks, the channel
            // loop outside the segments; the same segments and flushes as below, so the
            // same result. About 5 instructions a sample fewer.
            let coef = coefficients
            for c in 0..<chans {
                let src = input[min(c, input.channelCount - 1)]
                let high = scratch + stride &* c
                var i = 0
                var gridPoint = grid &- phase
                while i < n {
                    let end = min(n, gridPoint)
                    Self.runCrossover(
                        coef, src, high: high, low: high + lowOffset, from: i, to: end, state: state + 6 &* c,
                        flush: end == gridPoint)
                    i = end
                    gridPoint = end &+ grid
                }
            }
            return
        }
        var i = 0
        var segmentPhase = phase
        while i < n {
            if (segmentPhase == 0 || cachedFrequency.isNaN) && frequency[i] != cachedFrequency {
                cachedFrequency = frequency[i]
                coefficients = crossover(cachedFrequency)
            }
            // Segments stop at every grid point, where the states are flushed (no denormals).
            let gridPoint = i &+ grid &- segmentPhase
            let end = min(n, gridPoint)
            let coef = coefficients
            for c in 0..<chans {
                let high = scratch + stride &* c
                Self.runCrossover(
                    coef, input[min(c, input.channelCount - 1)], high: high, low: high + lowOffset, from: i, to: end,
                    state: state + 6 &* c, flush: end == gridPoint)
            }
            i = end
            segmentPhase = 0
        }
    }

    /// The three state-variable filters of one channel (the split, the high band's second
    /// stage, the low band's second stage: a 4th-order Linkwitz–Riley crossover) over
    /// frames `from..<to` of `src` into the high and low bands; `state` holds their six
    /// states, flushed below 1e-15 at the end when `flush` (a grid point: no decay reaches
    /// the denormals from there within a segment). Thread: render.
    @inline(__always)
    static func runCrossover(
        _ coef: SVFCoefficients, _ src: UnsafeMutablePointer<Float>, high: UnsafeMutablePointer<Float>,
        low: UnsafeMutablePointer<Float>, from: Int, to: Int, state s: UnsafeMutablePointer<Float>, flush: Bool
    ) {
        let k: Float = 1.414_213_56
        var s1 = s[0], s2 = s[1], h1 = s[2], h2 = s[3], l1 = s[4], l2 = s[5]
        for j in from..<to {
            let x = src[j]
            let first = coef.tick(x, &s1, &s2)
            let hp1 = x - k * first.band - first.low
            let second = coef.tick(hp1, &h1, &h2)
            high[j] = hp1 - k * second.band - second.low
            low[j] = coef.tick(first.low, &l1, &l2).low
        }
        if flush {
            flushTiny(&s1, below: 1e-15)
            flushTiny(&s2, below: 1e-15)
            flushTiny(&h1, below: 1e-15)
            flushTiny(&h2, below: 1e-15)
            flushTiny(&l1, below: 1e-15)
            flushTiny(&l2, below: 1e-15)
        }
        s[0] = s1
        s[1] = s2
        s[2] = h1
        s[3] = h2
        s[4] = l1
        s[5] = l2
    }

    /// Pass 2: the linked detector, the reduction, and the output.
    @inline(__always)
    func applyReduction(
        _ params: ParameterValues, input: AudioBus, output: AudioBus, frames n: Int, channels chans: Int,
        scratch: UnsafeMutablePointer<Float>
    ) {
        let threshold = params[Param.threshold]
        let range = params[Param.range]
        let mode = params[Param.mode]
        var detector = DeEsserDetector(
            power: state[0], change: state[1], coefficient: self.detector, attack: attack, release: release)
        let stride = 2 * maxFrames, lowOffset = maxFrames
        let mono = chans == 1
        let out0 = output[0]
        let steady = params.isSteady(Param.threshold) && params.isSteady(Param.range) && params.isSteady(Param.mode)
        let steadyThreshold = threshold[0], steadyFloor = -max(range[0], 0), steadySplit = mode[0] < 0.5
        if mono && steady {
            // The usual case, one loop each with nothing to decide per sample (deciding
            // mono/steady/split per sample cost about 30 instructions a sample).
            let high = scratch, low = scratch + lowOffset
            if steadySplit {
                for i in 0..<n {
                    let h = high[i]
                    let gain = detector.gain(h * h, threshold: steadyThreshold, floor: steadyFloor)
                    out0[i] = low[i] + gain * h
                }
            } else {
                let x = input[0]
                for i in 0..<n {
                    let h = high[i]
                    let gain = detector.gain(h * h, threshold: steadyThreshold, floor: steadyFloor)
                    out0[i] = detector.change == 0 ? x[i] : gain * x[i]
                }
            }
        } else {
            for i in 0..<n {
                var square: Float = 0
                if mono {
                    let h = scratch[i]
                    square = h * h
                } else {
                    for c in 0..<chans {
                        let h = scratch[stride &* c &+ i]
                        square = max(square, h * h)
                    }
                }
                let gain =
                    steady
                    ? detector.gain(square, threshold: steadyThreshold, floor: steadyFloor)
                    : detector.gain(square, threshold: threshold[i], floor: -max(range[i], 0))
                let split = steady ? steadySplit : mode[i] < 0.5
                for c in 0..<chans {
                    let high = scratch + stride * c
                    let y: Float
                    if split {
                        y = high[lowOffset + i] + gain * high[i]
                    } else {
                        let x = input[min(c, input.channelCount - 1)][i]
                        y = detector.change == 0 ? x : gain * x
                    }
                    output[c][i] = y
                }
            }
        }
        state[0] = detector.power
        state[1] = detector.change
        reduction.store((-detector.most).bitPattern, ordering: .relaxed)
    }
}

/// The de-esser's detector and reduction, carried in registers through a block.
/// Thread: render.
struct DeEsserDetector {
    var power: Float
    /// The reduction in dB (≤ 0), smoothed.
    var change: Float
    let coefficient: Float, attack: Float, release: Float
    /// The block's most reduction (dB, ≤ 0), for the meter.
    var most: Float = 0

    /// One sample: the high band's (largest) square in, the gain for that sample out.
    /// Above `threshold` the target is the excess in dB, no deeper than `floor` (−range).
    @inline(__always)
    mutating func gain(_ square: Float, threshold: Float, floor: Float) -> Float {
        power += coefficient * (square - power)
        if power < 1e-30 { power = 0 }
        let level = FastDecibels.powerToDecibels(power)
        let target = max(min(threshold - level, 0), floor)
        change += (target < change ? attack : release) * (target - change)
        if target == 0 && change > -1e-9 { change = 0 }
        most = min(most, change)
        // Nothing reduced (the usual case): unity without the exponential (exp2(0) is 1).
        return change == 0 ? 1 : FastDecibels.decibelsToGain(change)
    }
}

