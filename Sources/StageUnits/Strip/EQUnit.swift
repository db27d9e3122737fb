#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import StageCore

/// `eq`: a parametric equalizer with the parameters of Apple's NBandEQ.
///
/// Setting `bands` 1…16 (default 5). Parameters: `globalGain` dB (−96…24, −96 is
/// silence) and per band N (1-based): `typeN` (Apple's eleven types, see `EQFilterType`),
/// `frequencyN` (10 Hz…24 kHz, clamped to 0.49 × the sample rate), `gainN` dB (−96…24;
/// parametric and shelves only), `bandwidthN` octaves (0.05…5), `bypassN` (off = the
/// band is active; switching crossfades over 10 ms).
///
/// Defaults are a vocal EQ: band 1 a high-pass at 90 Hz (rumble, handling noise, breath
/// pops); bands 2–4 peaks at 300 Hz (mud), 1 kHz (honk) and 3 kHz (presence), band 5 a
/// high shelf at 10 kHz (air), all at 0 dB and active, ready for a knob. Bands 6–16 start
/// as Apple's: parametric at 1 kHz, bypassed.
///
/// Channels follow the input (each channel filtered alike).
public struct EQUnitType: UnitType {
    public init() {}
    public var name: String { "eq" }
    public var summary: String {
        "parametric equalizer, 1–16 bands, Apple NBandEQ parameters (channels follow the input)"
    }

    public static let defaultBands = 5
    public static let maxBands = 16

    /// Parameter indices: `globalGain`, then five per band.
    enum Param {
        static let globalGain = 0
        static let perBand = 5
        static func type(_ band: Int) -> Int { 1 + perBand * band }
        static func frequency(_ band: Int) -> Int { 2 + perBand * band }
        static func gain(_ band: Int) -> Int { 3 + perBand * band }
        static func bandwidth(_ band: Int) -> Int { 4 + perBand * band }
        static func bypass(_ band: Int) -> Int { 5 + perBand * band }
    }

    public var settings: [SettingSpec] {
        [SettingSpec(key: "bands", kind: .integer(1...Self.maxBands), help: "number of bands (default 5)")]
    }

    /// The band count of these settings.
    static func bandCount(_ settings: UnitSettings) -> Int {
        min(max(settings.int("bands") ?? defaultBands, 1), maxBands)
    }

    /// The default (type, frequency, gain, bandwidth, bypassed) of band `band` (0-based).
    static func bandDefaults(_ band: Int) -> (EQFilterType, Float, Float, Float, Bool) {
        switch band {
        case 0: return (.highPass, 90, 0, 0.5, false)
        case 1: return (.parametric, 300, 0, 1, false)
        case 2: return (.parametric, 1000, 0, 1, false)
        case 3: return (.parametric, 3000, 0, 1, false)
        case 4: return (.highShelf, 10000, 0, 0.5, false)
        default: return (.parametric, 1000, 0, 0.5, true)
        }
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        var specs = [
            ParameterSpec(
                id: "globalGain", name: "Global gain", unit: .decibels, range: -96...24, defaultValue: 0,
                smoothingSeconds: 0.02, help: "level after the bands; −96 dB is silence")
        ]
        for band in 0..<Self.bandCount(settings) {
            let n = band + 1
            let (type, frequency, gain, bandwidth, bypassed) = Self.bandDefaults(band)
            specs += [
                .choice(
                    id: "type\(n)", name: "Type \(n)", choices: EQFilterType.names, defaultIndex: type.rawValue,
                    help: "filter type of band \(n)"),
                ParameterSpec(
                    id: "frequency\(n)", name: "Frequency \(n)", unit: .hertz, range: 10...24000,
                    defaultValue: frequency, smoothingSeconds: 0.02,
                    help: "centre or corner of band \(n) (clamped to 0.49 × the sample rate)"),
                ParameterSpec(
                    id: "gain\(n)", name: "Gain \(n)", unit: .decibels, range: -96...24, defaultValue: gain,
                    smoothingSeconds: 0.02, help: "boost or cut of band \(n) (parametric and shelves)"),
                ParameterSpec(
                    id: "bandwidth\(n)", name: "Bandwidth \(n)", unit: .generic, range: 0.05...5,
                    defaultValue: bandwidth, smoothingSeconds: 0.02,
                    help: "octaves; sets Q (see racks/README.md)"),
                .toggle(
                    id: "bypass\(n)", name: "Bypass \(n)", defaultOn: bypassed,
                    help: "on = band \(n) does nothing (off: active)"),
            ]
        }
        return specs
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.any], outputs: [.sameAsInput(0)])
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        EQUnit(bands: Self.bandCount(settings))
    }
}

/// The equalizer: bands in series, each a state-variable filter (`SVFCoefficients`) with
/// exactly the transfer function of its cookbook design (`EQBandDesign`).
///
/// Control: coefficients are computed in Double from the smoothed parameters at fixed
/// absolute times, every 16 samples of `sampleTime` (3 kHz at 48 kHz), and only for bands
/// whose parameters changed; each of the six coefficients then moves linearly, sample by
/// sample, to its new value over the next 16 samples (so the filter lags the knob by
/// 16 samples). The state-variable structure stays stable and its state continuous while
/// coefficients change (a direct-form biquad's would not), so with the engine's 20 ms
/// parameter ramps a knob swept at full speed gives no clicks, zipper or instability
/// (measured in EQTests). A `typeN` change ramps the same way. Bands at 0 dB (peak
/// or shelf) and bypassed bands are skipped and their state cleared. The output does not
/// depend on block size. States below 1e-15 are flushed on the grid (no denormals).
///
/// Thread: render for `render`/`reset`; control for `init`/`prepare`.
public final class EQUnit: RackUnit {
    typealias Param = EQUnitType.Param
    /// Control interval (samples of absolute time).
    static let grid = 16

    let bands: Int
    var sampleRate = 48000.0
    var channels = 1
    /// Per band: the coefficients in use (at the last sample rendered).
    let coefficients: UnsafeMutablePointer<SVFCoefficients>
    /// Per band: where the coefficients are heading, the per-sample step, samples left.
    let targets: UnsafeMutablePointer<SVFCoefficients>
    let steps: UnsafeMutablePointer<SVFCoefficients>
    let rampLeft: UnsafeMutablePointer<Int>
    /// Per band: type, frequency, gain, bandwidth the coefficients were made from (NaN: none yet).
    let cache: UnsafeMutablePointer<Float>
    /// Per band: whether the state is all zeros (skipped bands are cleared once).
    let cleared: UnsafeMutablePointer<Bool>
    /// Per band: seconds for the band's slowest pole to decay 120 dB.
    let bandTails: UnsafeMutablePointer<Double>
    /// Per channel, per band: (s1, s2).
    var state: UnsafeMutablePointer<Float>? = nil
    let tail = Atomic<Double>(0.1)

    public init(bands: Int) {
        self.bands = bands
        coefficients = .allocate(capacity: bands)
        coefficients.initialize(repeating: SVFCoefficients(), count: bands)
        targets = .allocate(capacity: bands)
        targets.initialize(repeating: SVFCoefficients(), count: bands)
        steps = .allocate(capacity: bands)
        steps.initialize(repeating: SVFCoefficients(), count: bands)
        rampLeft = .allocate(capacity: bands)
        rampLeft.initialize(repeating: 0, count: bands)
        cache = .allocate(capacity: 4 * bands)
        cache.initialize(repeating: .nan, count: 4 * bands)
        cleared = .allocate(capacity: bands)
        cleared.initialize(repeating: true, count: bands)
        bandTails = .allocate(capacity: bands)
        bandTails.initialize(repeating: 0, count: bands)
    }

    deinit {
        coefficients.deallocate()
        targets.deallocate()
        steps.deallocate()
        rampLeft.deallocate()
        cache.deallocate()
        cleared.deallocate()
        bandTails.deallocate()
        state?.deallocate()
    }

    /// Allocates the filter states. Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        guard spec.sampleRate >= 1000, spec.sampleRate <= 1_000_000 else {
            throw UnitError("eq: sample rate \(spec.sampleRate) is outside 1 kHz…1 MHz")
        }
        sampleRate = spec.sampleRate
        channels = max(1, spec.outputChannels.first ?? spec.inputChannels.first ?? 1)
        state?.deallocate()
        state = .allocate(capacity: 2 * bands * channels)
        state!.initialize(repeating: 0, count: 2 * bands * channels)
        reset()
    }

    /// Clears the filters; coefficients are recomputed at the next frame rendered.
    /// Thread: render, or control while not rendering.
    public func reset() {
        state?.update(repeating: 0, count: 2 * bands * channels)
        cache.update(repeating: .nan, count: 4 * bands)
        cleared.update(repeating: true, count: bands)
        rampLeft.update(repeating: 0, count: bands)
    }

    /// The longest ring of the bands (to −120 dB), from the last rendered block.
    /// Thread: any.
    public var tailSeconds: Double { tail.load(ordering: .relaxed) }

    public func render(_ context: RenderContext) {
        guard let state, let buses = StripBuses(context, preparedChannels: channels) else { return }
        let n = buses.frames, input = buses.input, output = buses.output, chans = buses.channels
        for c in 0..<chans { output[c].update(from: input[min(c, input.channelCount - 1)], count: n) }
        buses.clearUnusedOutputs()

        let params = context.parameters
        let start = context.sampleTime
        // Nothing to recompute in this block when every band parameter holds the value
        // its coefficients were made from (the updates on the grid would all be no-ops).
        let settled = !cache[0].isNaN && bandParametersSettled(params)
        if settled && renderSettled(params, output: output, frames: n, channels: chans, start: start, state: state) {
            applyGlobalGain(params, output: output, channels: chans, frames: n)
            return
        }
        var i = 0
        var tailChanged = false
        while i < n {
            let t = start + Int64(i)
            let phase = Int(t % Int64(Self.grid))
            if !settled && (phase == 0 || cache[0].isNaN) {
                let snap = cache[0].isNaN
                for band in 0..<bands where updateBand(band, params, frame: i, snap: snap) { tailChanged = true }
            }
            // Segments stop at every grid point (even when nothing moves): the states are
            // flushed there, often enough that no decay reaches the denormal range.
            let end = min(n, i + Self.grid - phase)
            for band in 0..<bands { runBand(band, params, output: output, from: i, to: end, channels: chans, state: state) }
            if (start + Int64(end)) % Int64(Self.grid) == 0 { flushStates(state, channels: chans) }
            i = end
        }
        applyGlobalGain(params, output: output, channels: chans, frames: n)
        if tailChanged { publishTail() }
    }

    /// The usual block: nothing moves, no ramp is under way, no bypass is fading. Each band
    /// then runs over the whole block in one loop (band after band), flushing its state on
    /// the same grid points as the general path, so the result is the same. Returns false
    /// (having done nothing) when the block is not of that kind.
    @inline(__always)
    func renderSettled(
        _ params: ParameterValues, output: AudioBus, frames n: Int, channels chans: Int, start: Int64,
        state: UnsafeMutablePointer<Float>
    ) -> Bool {
        for band in 0..<bands {
            if rampLeft[band] > 0 || !params.isSteady(Param.bypass(band)) { return false }
            let b = params.value(Param.bypass(band))
            if b != 0 && b != 1 { return false }
        }
        let grid = Self.grid
        let firstFlush = (grid - Int(start % Int64(grid))) % grid
        for band in 0..<bands {
            let coef = coefficients[band]
            if params.value(Param.bypass(band)) == 1 || coef.isIdentity {
                if !cleared[band] {
                    for c in 0..<chans { (state + 2 * (c * bands + band)).update(repeating: 0, count: 2) }
                    cleared[band] = true
                }
                continue
            }
            cleared[band] = false
            for c in 0..<chans {
                let buffer = output[c]
                let s = state + 2 * (c * bands + band)
                // Segments end where absolute time crosses the grid; the state is flushed there.
                var i = 0
                var end = firstFlush == 0 ? min(grid, n) : min(firstFlush, n)
                while i < n {
                    coef.run(buffer + i, frames: end - i, state: s)
                    if (start + Int64(end)) % Int64(grid) == 0 {
                        flushTiny(&s[0], below: 1e-15)
                        flushTiny(&s[1], below: 1e-15)
                    }
                    i = end
                    end = min(end + grid, n)
                }
            }
        }
        return true
    }

    /// Recomputes band `band`'s coefficients if its parameters at `frame` differ from the
    /// cached ones; returns whether they did.
    ///
    /// New coefficients are reached by a linear ramp of every coefficient over the next
    /// `grid` samples (from where the last ramp ended), or at once when `snap`.
    @inline(__always)
    func updateBand(_ band: Int, _ params: ParameterValues, frame: Int, snap: Bool) -> Bool {
        let type = params[Param.type(band)][frame]
        let frequency = params[Param.frequency(band)][frame]
        let gain = params[Param.gain(band)][frame]
        let bandwidth = params[Param.bandwidth(band)][frame]
        let c = cache + 4 * band
        if c[0] == type && c[1] == frequency && c[2] == gain && c[3] == bandwidth { return false }
        c[0] = type
        c[1] = frequency
        c[2] = gain
        c[3] = bandwidth
        let kind = EQFilterType(rawValue: min(max(Int(type + 0.5), 0), EQFilterType.allCases.count - 1)) ?? .parametric
        let design = EQBandDesign(
            type: kind, frequency: Double(frequency), gain: Double(gain), bandwidth: Double(bandwidth)
        ).stateVariable(sampleRate: sampleRate)
        let target = SVFCoefficients(design)
        if snap {
            coefficients[band] = target
            rampLeft[band] = 0
        } else {
            coefficients[band] = targets[band]
            steps[band] = targets[band].step(to: target, steps: Self.grid)
            rampLeft[band] = Self.grid
        }
        targets[band] = target
        bandTails[band] = Self.ringSeconds(design, sampleRate: sampleRate)
        return true
    }

    /// True when every band's type, frequency, gain and bandwidth are steady over the block
    /// and equal to the values its coefficients were made from.
    @inline(__always)
    func bandParametersSettled(_ params: ParameterValues) -> Bool {
        for band in 0..<bands {
            let c = cache + 4 * band
            let ids = (Param.type(band), Param.frequency(band), Param.gain(band), Param.bandwidth(band))
            if !params.isSteady(ids.0) || !params.isSteady(ids.1) || !params.isSteady(ids.2) || !params.isSteady(ids.3) {
                return false
            }
            if c[0] != params.value(ids.0) || c[1] != params.value(ids.1) || c[2] != params.value(ids.2)
                || c[3] != params.value(ids.3)
            {
                return false
            }
        }
        return true
    }

    /// Time for the slowest pole of `design` to fall 120 dB (13.8 time constants).
    static func ringSeconds(_ design: SVFDesign, sampleRate: Double) -> Double {
        let cutoff = atan(design.g) * sampleRate / Double.pi
        let k = design.k
        let slowest = k / 2 - max(k * k / 4 - 1, 0).squareRoot()
        let sigma = max(slowest, 1e-9) * 2 * Double.pi * cutoff
        return min(13.8 / sigma, 30)
    }

    /// Runs band `band` over frames `from..<to` of every channel (in place on the output).
    @inline(__always)
    func runBand(
        _ band: Int, _ params: ParameterValues, output: AudioBus, from: Int, to: Int, channels chans: Int,
        state: UnsafeMutablePointer<Float>
    ) {
        let bypass = params[Param.bypass(band)] + from
        let count = to - from
        var allOn = true
        var allOff = true
        if params.isSteady(Param.bypass(band)) {
            allOn = bypass[0] == 1
            allOff = bypass[0] == 0
        } else {
            for j in 0..<count {
                if bypass[j] != 1 { allOn = false }
                if bypass[j] != 0 { allOff = false }
            }
        }
        let coef = coefficients[band]
        if rampLeft[band] > 0 {
            // A ramp lies on the grid: this segment is part of it (never past its end).
            cleared[band] = false
            var end = coef
            for c in 0..<chans {
                end = coef.runRamp(
                    output[c] + from, frames: count, state: state + 2 * (c * bands + band), step: steps[band],
                    bypass: allOff ? nil : bypass)
            }
            rampLeft[band] -= count
            coefficients[band] = rampLeft[band] == 0 ? targets[band] : end
            return
        }
        if allOn || (allOff && coef.isIdentity) {
            if !cleared[band] {
                for c in 0..<chans { (state + 2 * (c * bands + band)).update(repeating: 0, count: 2) }
                cleared[band] = true
            }
            return
        }
        cleared[band] = false
        for c in 0..<chans {
            let buffer = output[c] + from
            let s = state + 2 * (c * bands + band)
            if allOff { coef.run(buffer, frames: count, state: s) } else { coef.run(buffer, frames: count, state: s, bypass: bypass) }
        }
    }

    /// Flushes filter states below 1e-15 (−300 dB) to zero: the fastest decay the designs
    /// allow cannot take a state from there into the denormal range within 16 samples.
    @inline(__always)
    func flushStates(_ state: UnsafeMutablePointer<Float>, channels chans: Int) {
        for j in 0..<(2 * bands * chans) { flushTiny(&state[j], below: 1e-15) }
    }

    /// Multiplies by `globalGain` (skipped at a steady 0 dB).
    @inline(__always)
    func applyGlobalGain(_ params: ParameterValues, output: AudioBus, channels chans: Int, frames n: Int) {
        if params.isSteady(Param.globalGain) {
            let db = params.value(Param.globalGain)
            if db == 0 { return }
            let g = faderGain(db)
            for c in 0..<chans {
                let b = output[c]
                for i in 0..<n { b[i] *= g }
            }
        } else {
            let db = params[Param.globalGain]
            for c in 0..<chans {
                let b = output[c]
                for i in 0..<n { b[i] *= faderGain(db[i]) }
            }
        }
    }

    /// Stores the longest ring of the bands.
    func publishTail() {
        var t = 0.0
        for band in 0..<bands { t = max(t, bandTails[band]) }
        tail.store(t, ordering: .relaxed)
    }
}
