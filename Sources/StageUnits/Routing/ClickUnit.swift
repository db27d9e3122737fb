import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// `click`: the song's click in the ears: a short tone on every beat of the song's bar
/// clock (`SongClock`: the tempo precedence, the time signature, the count-in, the section
/// jumps), the downbeat higher and louder. It plays wherever the rack connects it (a
/// monitor output or a monitor mix), never anywhere else: a rack without one has no click.
public struct ClickUnitType: UnitType {
    public init() {}
    public var name: String { "click" }
    public var summary: String { "a click on the song's beats (accented downbeat), for a monitor output" }
    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(
                id: "level", name: "Level", unit: .decibels, range: -60...0, defaultValue: -12, smoothingSeconds: 0.02,
                help: "the downbeat's peak; the other beats are 6 dB lower"),
            .choice(
                id: "mode", name: "Mode", choices: ["always", "count-in"], defaultIndex: 0,
                help: "click on every beat, or only in the song's count-in"),
        ]
    }
    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [], outputs: [.channels(1)])
    }
    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { ClickUnit() }
}

/// Plays a decaying tone from the first frame of each beat the engine's song clock lists
/// for the block (`RenderContext.songBeats`): 1,760 Hz on a downbeat, 1,320 Hz on the other
/// beats, 6 dB lower, decaying 60 dB in 40 ms; the first sample is the peak (a cosine), so the
/// onset is the beat's frame. Thread: render (after prepare).
public final class ClickUnit: RackUnit {
    enum Parameter {
        static let level = 0
        static let mode = 1
    }

    /// The sounding click: samples since its onset, its angular step and its amplitude.
    var age = Int.max
    var omega: Float = 0
    var amplitude: Float = 0
    var decay: Float = 1
    var envelope: Float = 0
    var length = 0

    public init() {}

    public func prepare(_ spec: PrepareSpec) throws {
        length = Int(0.04 * spec.sampleRate)
        decay = powf(0.001, 1 / Float(length))  // −60 dB over the click
    }

    public func reset() { age = Int.max }

    public func render(_ context: RenderContext) {
        let out = context.outputs[0][0]
        let n = context.frameCount
        let level = Curves.decibelsToGain(context.parameters.value(Parameter.level))
        let countInOnly = context.parameters.value(Parameter.mode) >= 0.5
        var i = 0
        for beat in context.songBeats {
            let at = Int(beat.frame - context.sampleTime)
            guard at >= 0, at < n else { continue }
            play(into: out, from: i, to: at)
            i = at
            if countInOnly && !beat.isCountIn { continue }
            age = 0
            envelope = 1
            omega = 2 * Float.pi * (beat.isDownbeat ? 1760 : 1320) / Float(context.sampleRate)
            amplitude = beat.isDownbeat ? level : level * 0.5
        }
        play(into: out, from: i, to: n)
    }

    /// Writes the sounding click (or silence) into `out[from..<to]`. Thread: render.
    @inline(__always)
    func play(into out: UnsafeMutablePointer<Float>, from: Int, to: Int) {
        var k = from
        while k < to {
            if age >= length {
                (out + k).update(repeating: 0, count: to - k)
                return
            }
            out[k] = amplitude * envelope * cosf(omega * Float(age))
            envelope *= decay
            age += 1
            k += 1
        }
    }
}
