import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// `click`: the song's click in the ears: a short tone on every beat of the song's bar
/// clock (`SongClock`: the tempo precedence, the time signature, the count-in, the section
/// jumps), the downbeat higher and louder. It plays wherever the rack connects it (a
/// monitor output or a monitor mix), never anywhere else: a rack without one has no click.
/// It also speaks the song's cues (`ClickCues`) where the song clock lists them (one bar
/// before their sections, or when a jump to one is armed: `SongClock+Cues`), decoded at
/// load by `decodeCue` (the player's libsndfile reader, given by the program; without one,
/// the shipped cues are left out and a named cue file is an error).
public struct ClickUnitType: UnitType {
    /// Decodes a sound file to mono samples at a rate (control thread); throws naming the file.
    public typealias CueDecoder = @Sendable (_ path: String, _ sampleRate: Double) throws -> [Float]
    let decodeCue: CueDecoder?
    public init(decodeCue: CueDecoder? = nil) { self.decodeCue = decodeCue }
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
    public var settings: [SettingSpec] {
        [
            SettingSpec(
                key: RackDescription.songCuesKey, kind: .custom("set by the setlist song"),
                help: "the song's spoken cues (set from the setlist's sections; see \"Spoken cues\")")
        ]
    }
    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [], outputs: [.channels(1)])
    }
    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        let unit = ClickUnit()
        unit.cues = try ClickCues(settings, sampleRate: context.sampleRate, decode: decodeCue)
        return unit
    }
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
    /// The song's spoken cues, and the one sounding (its index, samples played).
    var cues = ClickCues()
    var cue = -1
    var cuePosition = 0

    public init() {}

    public func prepare(_ spec: PrepareSpec) throws {
        length = Int(0.04 * spec.sampleRate)
        decay = powf(0.001, 1 / Float(length))  // −60 dB over the click
    }

    public func reset() {
        age = Int.max
        cue = -1
    }

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
        if cues.count > 0 { speak(into: out, context, level: level) }
    }

    /// Adds the song's cues to `out`: a cue starts on the frame the song clock lists it on
    /// (`RenderContext.songCues`: one bar before its section, or when a jump to it is armed)
    /// and plays to its end at the click's level; a cue that starts cuts the one sounding.
    /// Thread: render.
    func speak(into out: UnsafeMutablePointer<Float>, _ context: RenderContext, level: Float) {
        var i = 0
        for start in context.songCues {
            let at = Int(start.frame - context.sampleTime)
            guard at >= 0, at < context.frameCount, let c = cues.index(ofSection: start.section) else { continue }
            mixCue(into: out, from: i, to: at, level: level)
            i = at
            cue = c
            cuePosition = 0
        }
        mixCue(into: out, from: i, to: context.frameCount, level: level)
    }

    @inline(__always)
    func mixCue(into out: UnsafeMutablePointer<Float>, from: Int, to: Int, level: Float) {
        guard cue >= 0 else { return }
        let samples = cues.samples(cue)
        let count = min(to - from, samples.count - cuePosition)
        for k in 0..<max(count, 0) { out[from + k] += level * samples[cuePosition + k] }
        cuePosition += max(count, 0)
        if cuePosition >= samples.count { cue = -1 }
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
