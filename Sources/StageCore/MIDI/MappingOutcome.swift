/// What the mapper did with one message, for monitors and tests. Plain value, so the MIDI
/// thread can queue it for a printing thread. Thread: any (a value).
@frozen
public struct MappingOutcome: Sendable, Equatable, BitwiseCopyable {
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// Nothing maps it and no unit takes it.
        case ignored
        /// Passed to the units that play MIDI (`count` of them; 0 when the rack has none).
        case toUnits
        /// Mapping `mapping` set its parameter to `value`.
        case parameter
        /// Mapping `mapping` is waiting for soft takeover: the parameter stays at `value`.
        case waiting
        /// Mapping `mapping` moved, but its parameter already had `value`.
        case unchanged
        /// Half of a 14-bit value, waiting for its partner.
        case pendingHalf
        /// The NRPN/RPN parameter number was selected (`count`).
        case selected
        /// An action for the control side (`action`).
        case action
        /// The rack's tempo was set to `value` BPM.
        case tempo
        /// Taken for bookkeeping (bank select, clock tick, a button release).
        case consumed
    }

    public var kind: Kind
    public var mapping: Int32
    public var value: Float
    public var count: Int32
    public var action: ControlAction

    @inlinable
    public init(
        _ kind: Kind, mapping: Int = -1, value: Float = 0, count: Int = 0,
        action: ControlAction = ControlAction(kind: .nextPreset)
    ) {
        self.kind = kind
        self.mapping = Int32(mapping)
        self.value = value
        self.count = Int32(count)
        self.action = action
    }

    public static let ignored = MappingOutcome(.ignored)
}

extension MIDIMapper {
    /// Words for an outcome, e.g. `mix.gain2 = -17.0 dB`. Thread: any (reads only what
    /// never changes after init).
    public func describe(_ o: MappingOutcome) -> String {
        let m = o.mapping >= 0 && Int(o.mapping) < mappings.count ? mappings[Int(o.mapping)] : nil
        switch o.kind {
        case .ignored: return "(not mapped)"
        case .toUnits: return receiverNames.isEmpty ? "(not mapped; no unit plays MIDI)" : receiverNames.joined(separator: ", ")
        case .parameter, .unchanged:
            guard let m else { return "?" }
            return "\(m.targetName) = \(m.spec.format(o.value))" + (o.kind == .unchanged ? " (unchanged)" : "")
        case .waiting:
            guard let m else { return "?" }
            let rule = m.takeover ?? .pickup
            return "\(m.targetName) stays \(m.spec.format(o.value)) (\(rule.rawValue): move the knob to it)"
        case .pendingHalf: return "(half of a 14-bit value)"
        case .selected: return "(parameter \(o.count) selected)"
        case .action: return o.action.description
        case .tempo: return o.value == 0 ? "clock stopped: the next tempo source leads" : "tempo \(formatNumber((Double(o.value) * 100).rounded() / 100)) BPM"
        case .consumed: return "(taken)"
        }
    }
}
