#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StageCore

/// One control of the performer view, resolved against the state of the rack playing: the
/// rack's `performance` section (or its default, `RackDescription.performanceControls`)
/// with each target's address. The page speaks in positions, never in parameter values:
/// a fader's position is 0…1 between its ends (log for Hz and seconds, as the engineer's
/// sliders), a toggle's 1 is "on" (for a bypass: the unit in use), a choice's is the index.
/// Every target of a group goes to the same position; the first target's value is the one
/// shown. Thread: any (a value).
public struct RemotePerformanceControl: Sendable, Equatable {
    public struct Target: Sendable, Equatable {
        public var address: ParameterAddress
        public var spec: ParameterSpec
        public var low: Float
        public var high: Float
    }

    public var label: String
    public var kind: PerformanceControlDescription.Kind
    public var targets: [Target]

    /// The controls of `rack` whose targets are all in `state` (a target the state lacks
    /// drops it: the default guesses, a file's are checked by the reader). Thread: any.
    public static func resolve(_ rack: RackDescription, in state: ParameterState) -> [RemotePerformanceControl] {
        rack.performanceControls.compactMap { c in
            var targets: [Target] = []
            for t in c.targets {
                let parts = t.split(separator: ".", maxSplits: 1).map(String.init)
                guard parts.count == 2, let a = state.address(unit: parts[0], parameter: parts[1]), let spec = state.spec(a) else { return nil }
                let r = spec.range
                let low = min(max(c.min ?? r.lowerBound, r.lowerBound), r.upperBound)
                let high = min(max(c.max ?? r.upperBound, r.lowerBound), r.upperBound)
                targets.append(Target(address: a, spec: spec, low: low, high: high))
            }
            return targets.isEmpty ? nil : RemotePerformanceControl(label: c.label, kind: c.kind, targets: targets)
        }
    }

    static func isLog(_ t: Target) -> Bool {
        (t.spec.unit == .hertz || t.spec.unit == .seconds) && t.low > 0 && t.high > 0
    }

    /// The value of `target` at `position`. Thread: any.
    static func value(_ t: Target, kind: PerformanceControlDescription.Kind, position: Float) -> Float {
        switch kind {
        case .toggle:
            let on: Float = position >= 0.5 ? 1 : 0
            return t.spec.id == ParameterSpec.bypass.id ? 1 - on : on
        case .choice:
            return position.rounded()
        case .fader:
            let p = min(max(position, 0), 1)
            if isLog(t) { return t.low * powf(t.high / t.low, p) }
            return t.low + p * (t.high - t.low)
        }
    }

    /// The position that shows `value` of `target`. Thread: any.
    static func position(_ t: Target, kind: PerformanceControlDescription.Kind, value: Float) -> Float {
        switch kind {
        case .toggle:
            let on: Float = value >= 0.5 ? 1 : 0
            return t.spec.id == ParameterSpec.bypass.id ? 1 - on : on
        case .choice:
            return value.rounded()
        case .fader:
            guard t.high != t.low else { return 0 }
            let p = isLog(t) ? logf(value / t.low) / logf(t.high / t.low) : (value - t.low) / (t.high - t.low)
            return p.isFinite ? min(max(p, 0), 1) : 0
        }
    }

    /// Where the control stands in `state` (its first target's value), and that value as text.
    public func reading(_ state: ParameterState) -> (position: Float, text: String) {
        let t = targets[0]
        let v = state.value(t.address) ?? t.spec.defaultValue
        let text = kind == .toggle ? (Self.position(t, kind: kind, value: v) >= 0.5 ? "on" : "off") : t.spec.format(v)
        return (Self.position(t, kind: kind, value: v), text)
    }

    /// The values that put every target at `position`, as (address, value).
    public func values(at position: Float) -> [(ParameterAddress, Float)] {
        targets.map { ($0.address, Self.value($0, kind: kind, position: position)) }
    }
}
