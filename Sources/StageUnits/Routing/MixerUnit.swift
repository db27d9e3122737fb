import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// `mixer`: N stereo inputs to one stereo output, like Apple's MultiChannelMixer.
///
/// Per input: `gainN` (dB), `panN` (−1 left … +1 right), `muteN`; and a master `gain`.
/// Pan law: constant power, normalised to 0 dB at centre: left = √2·cos θ, right = √2·sin θ
/// with θ = (pan+1)·π/4, so a centred input passes at unity and a hard-panned one is +3 dB
/// on its side. A mono source is copied to both sides before the pan.
public struct MixerUnitType: UnitType {
    public init() {}
    public var name: String { "mixer" }
    public var summary: String { "N stereo inputs to stereo, with gain, pan and mute per input" }
    public var settings: [SettingSpec] {
        [SettingSpec(key: "inputs", kind: .integer(Self.inputRange), help: "number of input buses (default 2)")]
    }

    static let inputRange = 1...32

    /// The `inputs` setting, kept inside 1…32 even when called with settings the reader
    /// rejected (a MIDI target or `units` listing must not trap on `"inputs": 0`).
    static func inputCount(_ settings: UnitSettings) -> Int {
        min(max(settings.int("inputs") ?? 2, inputRange.lowerBound), inputRange.upperBound)
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        var specs = [
            ParameterSpec(
                id: "gain", name: "Master gain", unit: .decibels, range: -96...24, defaultValue: 0,
                help: "level of the mix; −96 dB is silence")
        ]
        for n in 1...Self.inputCount(settings) {
            specs.append(
                ParameterSpec(
                    id: "gain\(n)", name: "Input \(n) gain", unit: .decibels, range: -96...24, defaultValue: 0,
                    help: "level of input \(n); −96 dB is silence"))
            specs.append(
                ParameterSpec(
                    id: "pan\(n)", name: "Input \(n) pan", unit: .pan, range: -1...1, defaultValue: 0,
                    help: "−1 left, 0 centre, +1 right (constant power, 0 dB at centre)"))
            specs.append(.toggle(id: "mute\(n)", name: "Input \(n) mute", defaultOn: false, help: "silences input \(n) (10 ms fade)"))
        }
        return specs
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: Array(repeating: .channels(2), count: Self.inputCount(settings)), outputs: [.channels(2)])
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        MixerUnit(inputs: Self.inputCount(settings))
    }
}

/// Sums its inputs with per-input gain, pan and mute. Thread: render (after prepare).
public final class MixerUnit: RackUnit {
    public let inputCount: Int
    public init(inputs: Int) { inputCount = inputs }
    public func prepare(_ spec: PrepareSpec) throws {}
    public func reset() {}

    @inline(__always)
    static func panGains(_ pan: Float) -> (Float, Float) {
        let theta = (min(max(pan, -1), 1) + 1) * (Float.pi / 4)
        return (Float(2).squareRoot() * cosf(theta), Float(2).squareRoot() * sinf(theta))
    }

    public func render(_ context: RenderContext) {
        let n = context.frameCount
        let out = context.outputs[0]
        let outL = out[0]
        let outR = out[1]
        outL.update(repeating: 0, count: n)
        outR.update(repeating: 0, count: n)
        let p = context.parameters
        for b in 0..<inputCount {
            let gi = 1 + 3 * b
            let pi = gi + 1
            let mi = gi + 2
            let input = context.inputs[b]
            let inL = input[0]
            let inR = input[input.channelCount > 1 ? 1 : 0]
            if p.isSteady(gi) && p.isSteady(pi) && p.isSteady(mi) {
                let level = faderGain(p.value(gi)) * (1 - p.value(mi))
                if level == 0 { continue }
                let (pl, pr) = Self.panGains(p.value(pi))
                let gl = level * pl
                let gr = level * pr
                for i in 0..<n {
                    outL[i] += inL[i] * gl
                    outR[i] += inR[i] * gr
                }
            } else {
                let gain = p[gi]
                let pan = p[pi]
                let mute = p[mi]
                for i in 0..<n {
                    let level = faderGain(gain[i]) * (1 - mute[i])
                    let (pl, pr) = Self.panGains(pan[i])
                    outL[i] += inL[i] * level * pl
                    outR[i] += inR[i] * level * pr
                }
            }
        }
        if p.isSteady(0) {
            let g = faderGain(p.value(0))
            if g != 1 {
                for i in 0..<n {
                    outL[i] *= g
                    outR[i] *= g
                }
            }
        } else {
            let master = p[0]
            for i in 0..<n {
                let g = faderGain(master[i])
                outL[i] *= g
                outR[i] *= g
            }
        }
    }
}
