/// Turns incoming MIDI into engine events for one compiled plan: mapped controllers move
/// parameters; notes and unmapped channel messages go to the units that take MIDI.
///
/// The full mapping engine (takeover, encoders, 14-bit, buttons) grows here. Thread: the
/// one thread that feeds the engine's `events` queue (MIDI thread, or the offline driver).
public final class MIDIMapper {
    /// A mapping resolved against a plan.
    public struct Mapping: Sendable {
        public var cc: Int
        /// 0-based channel, or nil for any.
        public var channel: Int?
        public var target: String
        public var address: ParameterAddress
        public var spec: ParameterSpec
        public var lower: Float
        public var upper: Float
        public var curve: ParameterCurve

        /// The parameter value for a 7-bit controller value.
        public func value(forController v: Int) -> Float {
            let x = Float(min(max(v, 0), 127)) / 127
            let lo = min(lower, upper)
            let hi = max(lower, upper)
            // Inversion (min > max) runs the curve backwards so its shape stays the same.
            let t = lower <= upper ? x : 1 - x
            return spec.clamped(Curves.denormalize(t, lower: lo, upper: hi, curve: curve))
        }
    }

    /// What one message did, for monitors and logs.
    public enum Action: Sendable, Equatable {
        case parameter(target: String, value: Float, text: String)
        case toUnits([Int])
        case ignored
    }

    public let mappings: [Mapping]
    public let receivers: [Int]

    /// Resolves the rack's `midi.map` against `plan`. Mappings whose target is not in the
    /// plan (a unit nobody hears) are dropped.
    public init(plan: RenderPlan) {
        receivers = plan.midiReceivers
        var list: [Mapping] = []
        for m in plan.rack.midi.map {
            guard let address = plan.address(of: m.target) else { continue }
            let spec = plan.spec(address)
            list.append(
                Mapping(
                    cc: m.cc, channel: m.channel.map { $0 - 1 }, target: m.target, address: address, spec: spec,
                    lower: m.min ?? spec.range.lowerBound, upper: m.max ?? spec.range.upperBound,
                    curve: m.curve ?? spec.naturalCurve))
        }
        mappings = list
    }

    /// Maps `message` arriving at engine time `sampleTime`, handing each resulting event
    /// to `emit`. Returns what it did.
    @discardableResult
    public func handle(_ message: MIDIMessage, at sampleTime: Int64, emit: (EngineEvent) -> Void) -> Action {
        if message.kind == .controlChange {
            var action: Action = .ignored
            for m in mappings where m.cc == message.controller && (m.channel == nil || m.channel == message.channel) {
                let v = m.value(forController: message.value)
                emit(.setParameter(m.address, v, at: sampleTime))
                action = .parameter(target: m.target, value: v, text: m.spec.format(v))
            }
            if action != .ignored { return action }
        }
        guard message.kind != .system, !receivers.isEmpty else { return .ignored }
        for r in receivers { emit(.midi(message, toUnit: r, at: sampleTime)) }
        return .toUnits(receivers)
    }
}
