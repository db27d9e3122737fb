/// Talk: one switch between songs that takes the effects that colour the voice off it
/// (pitch, harmony, tune, delay, reverb) and keeps the strip (EQ, compressor, de-esser,
/// gate), as VoiceLive's Talk does. A rack names the units it takes with a top-level
/// `"talk": ["pitch", "verb"]`; without it, every unit of the types in `defaultTypes`.
///
/// A unit with a `feed` parameter (delay, reverb) gets `feed` 0: nothing new enters it and
/// its echoes or its hall ring out; any other unit is bypassed (the engine's 10 ms
/// crossfade to its input). Talk off puts back the values they had when Talk came on (a
/// delay's `feed` at 40 goes back to 40). The MIDI toggle, the page, OSC and a section's
/// `talk on|off` send `.talk` events to the engine's one Talk state (`TalkSwitch`), which
/// turns the targets with ordinary parameter events, so they reach the units like a
/// knob's; `off` here is the value used when nothing was saved. Thread: any (values).
public struct TalkTarget: Sendable, Equatable {
    public var address: ParameterAddress
    /// The value with Talk on, and with it off.
    public var on: Float
    public var off: Float
    /// `on` is added to the value Talk finds (a player's `gain` dipped by `talkDuck` dB).
    public var relative = false
    /// Frames the change ramps over (0: the parameter's own smoothing).
    public var rampFrames = 0

    public init(address: ParameterAddress, on: Float, off: Float, relative: Bool = false, rampFrames: Int = 0) {
        self.address = address
        self.on = on
        self.off = off
        self.relative = relative
        self.rampFrames = rampFrames
    }

    /// The value for Talk `on`.
    public func value(_ on: Bool) -> Float { on ? self.on : off }
}

public enum Talk {
    /// The unit types Talk takes when a rack does not say (`"talk"`).
    public static let defaultTypes: Set<String> = ["pitch", "harmony", "tune", "delay", "reverb"]
    /// How long the backing track's dip (`talkDuck`) takes, down and back up.
    public static let duckSeconds = 0.3

    /// What Talk changes in `plan`: its rack's `talk` units, else those of `defaultTypes`.
    /// Thread: control (allocates).
    public static func targets(in plan: RenderPlan) -> [TalkTarget] {
        let named = plan.rack.talk
        var out: [TalkTarget] = []
        for u in plan.unitIDs.indices {
            let chosen = named.map { $0.contains(plan.unitIDs[u]) } ?? defaultTypes.contains(plan.unitTypes[u])
            guard chosen else { continue }
            if let feed = plan.parameters[u].specs.firstIndex(where: { $0.id == "feed" }) {
                out.append(TalkTarget(address: ParameterAddress(unit: u, parameter: feed), on: 0, off: 100))
            } else {
                out.append(TalkTarget(address: ParameterAddress(unit: u, parameter: ParameterAddress.bypassIndex), on: 1, off: 0))
            }
        }
        // The backing track's dip: every player's gain, ramped.
        if let duck = plan.rack.talkDuck {
            let ramp = Int(duckSeconds * plan.sampleRate)
            for u in plan.unitIDs.indices where plan.unitTypes[u] == "player" && named?.contains(plan.unitIDs[u]) != true {
                guard let gain = plan.parameters[u].specs.firstIndex(where: { $0.id == "gain" }) else { continue }
                out.append(TalkTarget(
                    address: ParameterAddress(unit: u, parameter: gain), on: Float(duck), off: 0, relative: true, rampFrames: ramp))
            }
        }
        return out
    }
}
