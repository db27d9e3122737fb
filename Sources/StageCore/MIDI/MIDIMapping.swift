/// A `midi.map` entry resolved against a compiled plan: where its parameter lives and how
/// a control position turns into a value and back. Thread: any (immutable value).
public struct MIDIMapping: Sendable {
    public var source: MIDIControlSource
    public var hires: Bool
    /// 0-based channel, or nil for any.
    public var channel: Int?
    /// `unit.param`, or the action's name.
    public var targetName: String
    /// The parameter, or nil for an action.
    public var address: ParameterAddress?
    public var spec: ParameterSpec
    public var action: MappingAction?
    /// The values at position 0 and 1 (off and on for buttons).
    public var lower: Float
    public var upper: Float
    public var curve: MappingCurve
    public var mode: MIDIControlMode
    public var sensitivity: Float
    public var takeover: TakeoverRule?
    public var button: ButtonBehavior?
    public var feedback: Bool
    /// Index of its parameter in the mapper's target table; −1 for actions.
    public var target: Int = -1
    /// For a unit's command (`UnitCommand`): the unit's index in the plan and the command's
    /// number; −1 otherwise.
    public var commandUnit: Int = -1
    public var commandIndex: Int = -1

    public init(
        description d: MIDIMappingDescription, address: ParameterAddress?, spec: ParameterSpec
    ) {
        source = d.source
        hires = d.hires
        channel = d.channel.map { $0 - 1 }
        targetName = d.target ?? d.action?.rawValue ?? d.command ?? ""
        self.address = address
        self.spec = spec
        action = d.action
        lower = d.min ?? spec.range.lowerBound
        upper = d.max ?? spec.range.upperBound
        if let c = d.curve {
            curve = c
        } else if spec.unit == .choice && d.button == nil && !spec.choices.isEmpty {
            // Equal zones for every choice between min and max (in either direction).
            let a = Int(lower.rounded())
            let b = Int(upper.rounded())
            curve = .steps(stride(from: a, through: b, by: a <= b ? 1 : -1).map { Float($0) })
        } else {
            curve = MappingCurve(spec.naturalCurve)
        }
        mode = d.mode
        sensitivity = d.sensitivity
        takeover = d.takeover
        button = d.button
        feedback = d.feedback
    }

    /// The largest value of the control: 127, or 16383 for 14-bit sources.
    @inlinable public var resolution: Int { hires ? 16383 : 127 }

    /// True when the channel matches (`channel` 0-based).
    @inlinable public func listens(to channel: Int) -> Bool { self.channel == nil || self.channel == channel }

    /// Absolute control that follows soft-takeover rules (not a button, not an encoder).
    public var isAbsoluteKnob: Bool { button == nil && mode == .absolute && action == nil }

    /// How close (in position) the knob must come to the parameter to take it over: one
    /// and a half control steps, or half a zone of a step curve.
    public var takeoverTolerance: Float {
        let step = 1.5 / Float(resolution)
        if case .steps(let s) = curve { return max(step, 0.5 / Float(s.count)) }
        return step
    }

    /// The parameter value at knob position `x` (0…1).
    public func value(atPosition x: Float) -> Float {
        let x = min(max(x, 0), 1)
        switch curve {
        case .steps(let steps):
            let i = min(Int(x * Float(steps.count)), steps.count - 1)
            return spec.clamped(steps[max(i, 0)])
        case .linear, .log, .exp:
            let lo = min(lower, upper)
            let hi = max(lower, upper)
            // Inversion (min > max) runs the curve backwards so its shape stays the same.
            let t = lower <= upper ? x : 1 - x
            return spec.clamped(Curves.denormalize(t, lower: lo, upper: hi, curve: parameterCurve))
        }
    }

    /// Where the knob would sit for `value` (the inverse of `value(atPosition:)`; the middle
    /// of its zone for step curves).
    public func position(ofValue value: Float) -> Float {
        switch curve {
        case .steps(let steps):
            var best = 0
            for i in steps.indices where abs(steps[i] - value) < abs(steps[best] - value) { best = i }
            return (Float(best) + 0.5) / Float(steps.count)
        case .linear, .log, .exp:
            let lo = min(lower, upper)
            let hi = max(lower, upper)
            let t = Curves.normalize(value, lower: lo, upper: hi, curve: parameterCurve)
            return lower <= upper ? t : 1 - t
        }
    }

    /// The control value (0…resolution) that shows `value` on the controller (feedback).
    public func controlValue(ofValue value: Float) -> Int {
        if button != nil {
            return abs(value - upper) <= abs(value - lower) ? resolution : 0
        }
        let p = position(ofValue: value)
        if case .steps(let s) = curve {
            // The zone's first control value, so a knob set there reads back the same step.
            let i = min(Int(p * Float(s.count)), s.count - 1)
            return min(Int((Float(i) * Float(resolution + 1) / Float(s.count)).rounded(.up)), resolution)
        }
        return Int((p * Float(resolution)).rounded())
    }

    var parameterCurve: ParameterCurve {
        switch curve {
        case .log: return .log
        case .exp: return .exp
        default: return .linear
        }
    }
}

extension ParameterSpec {
    /// The engine's bypass of a unit, mappable as `unit.bypass`: 1 crossfades the unit's
    /// output to its input (bus 1), or to silence for a unit without inputs, over 10 ms.
    public static let bypass = ParameterSpec.toggle(
        id: "bypass", name: "Bypass", defaultOn: false, smoothingSeconds: 0.01,
        help: "1 passes the unit's input through (or silences a unit with no input)")
}
