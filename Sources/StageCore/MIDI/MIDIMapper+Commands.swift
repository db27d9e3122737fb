/// Mappings that fire a unit's command (`UnitCommand`): a press and a release, each an
/// engine event for that unit at the frame of the MIDI message.
extension MIDIMapper {
    /// The mapping for `d` (whose `command` is `unit.command`), or nil when the unit is not
    /// in the plan (a unit nobody hears). Thread: control.
    static func commandMapping(_ d: MIDIMappingDescription, in plan: RenderPlan) -> MIDIMapping? {
        guard let name = d.command, let dot = name.firstIndex(of: "."), d.commandIndex >= 0,
            let u = plan.unitIndex(String(name[..<dot]))
        else { return nil }
        var m = MIDIMapping(description: d, address: nil, spec: ParameterSpec.toggle(id: name, name: name, defaultOn: false))
        m.commandUnit = u
        m.commandIndex = d.commandIndex
        return m
    }

    /// Mapping `i`'s button was pressed or released. Thread: the mapper's. Never allocates.
    func sendCommand(_ i: Int, isPressed: Bool, at t: Int64, emit: (EngineEvent) -> Void) {
        let m = mappings[i]
        emit(.midi(UnitCommand.message(m.commandIndex, pressed: isPressed), toUnit: m.commandUnit, at: t))
        record(isPressed ? .parameter : .consumed, mapping: i, value: isPressed ? 1 : 0)
    }
}
