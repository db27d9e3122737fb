import StageCore

/// The value of every parameter and bypass of the rack playing, as the control side knows
/// it: the one state that MIDI knobs, OSC and the web page all change and all observe.
/// Built from a compiled plan (the rack's values, else each parameter's default), then
/// changed value by value; `version` counts the changes.
///
/// Thread: the copy in `RemoteHub` belongs to the control thread; the servers read copies
/// (`RemoteView`). A value.
public struct ParameterState: Sendable, Equatable {
    public struct Parameter: Sendable, Equatable {
        public let spec: ParameterSpec
        public var value: Float
    }

    public struct Unit: Sendable, Equatable {
        public let id: String
        public let type: String
        /// Whether the engine's bypass applies (processors and generators, not the I/O units).
        public let canBypass: Bool
        /// 0 in use … 1 bypassed (the engine's bypass, `unit.bypass`).
        public var bypass: Float
        public var parameters: [Parameter]
    }

    /// The `RenderPlan.generation` the unit and parameter indices refer to.
    public let generation: UInt32
    /// In plan order: index `u` is `ParameterAddress.unit`.
    public private(set) var units: [Unit]
    /// Changes since the state was built.
    public private(set) var version = 0

    /// `canBypass`: whether units of a type may be bypassed (by type name).
    public init(plan: RenderPlan, canBypass: (String) -> Bool = { _ in true }) {
        generation = plan.generation
        units = plan.unitIDs.indices.map { u in
            let rackUnit = plan.rack.unit(plan.unitIDs[u])
            let parameters = plan.parameters[u].specs.map { spec in
                Parameter(spec: spec, value: rackUnit?.parameterValues.first { $0.id == spec.id }?.value ?? spec.defaultValue)
            }
            return Unit(id: plan.unitIDs[u], type: plan.unitTypes[u], canBypass: canBypass(plan.unitTypes[u]), bypass: 0, parameters: parameters)
        }
    }

    /// The address of `unit.param` (`param` "bypass": the unit's bypass), or nil.
    public func address(unit: String, parameter: String) -> ParameterAddress? {
        guard let u = units.firstIndex(where: { $0.id == unit }) else { return nil }
        if parameter == ParameterSpec.bypass.id {
            return units[u].canBypass ? ParameterAddress(unit: u, parameter: ParameterAddress.bypassIndex) : nil
        }
        guard let p = units[u].parameters.firstIndex(where: { $0.spec.id == parameter }) else { return nil }
        return ParameterAddress(unit: u, parameter: p)
    }

    /// The spec of the parameter at `address` (the bypass's for `bypassIndex`), or nil.
    public func spec(_ address: ParameterAddress) -> ParameterSpec? {
        guard units.indices.contains(address.unit) else { return nil }
        if address.parameter == ParameterAddress.bypassIndex { return units[address.unit].canBypass ? ParameterSpec.bypass : nil }
        guard units[address.unit].parameters.indices.contains(address.parameter) else { return nil }
        return units[address.unit].parameters[address.parameter].spec
    }

    /// The value at `address`, or nil when there is no such parameter.
    public func value(_ address: ParameterAddress) -> Float? {
        guard spec(address) != nil else { return nil }
        if address.parameter == ParameterAddress.bypassIndex { return units[address.unit].bypass }
        return units[address.unit].parameters[address.parameter].value
    }

    /// Sets the value at `address`, clamped to its range (choices and switches rounded).
    /// Returns the value set, or nil when there is no such parameter or `value` is not a
    /// number.
    @discardableResult
    public mutating func set(_ address: ParameterAddress, _ value: Float) -> Float? {
        guard let spec = spec(address), value.isFinite else { return nil }
        var v = min(max(value, spec.range.lowerBound), spec.range.upperBound)
        if spec.unit == .choice || spec.unit == .boolean { v = v.rounded() }
        if address.parameter == ParameterAddress.bypassIndex {
            units[address.unit].bypass = v
        } else {
            units[address.unit].parameters[address.parameter].value = v
        }
        version += 1
        return v
    }

    /// `unit.param` for `address`, for messages.
    public func name(_ address: ParameterAddress) -> String {
        guard let spec = spec(address) else { return "?" }
        return "\(units[address.unit].id).\(spec.id)"
    }
}
