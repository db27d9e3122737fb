/// `midi.map` entries whose `action` is a unit's command: `{ "note": 36, "action":
/// "backing.play" }`, `{ "cc": 80, "action": "backing.cue chorus" }`. The unit type lists
/// the commands it takes (`UnitType.commands`); the mapping sends a press and a release
/// (`UnitCommand`). The reference is racks/README.md, section "Player".
extension RackReader {
    func readUnitCommand(
        _ node: JSONNode, _ name: String, at location: SourceLocation, source: MIDIControlSource?, channel: Int?, ok: Bool,
        path: String, rack: RackDescription, _ ctx: inout Context
    ) -> MIDIMappingDescription? {
        var ok = ok
        for key in ["to", "min", "max", "curve", "feedback", "mode", "sensitivity", "takeover", "hires"] {
            if let m = node[key] {
                ctx.report(m.keyLocation, "\(path).\(key)", "does not apply to a unit's command (\(name))")
                ok = false
            }
        }
        if let b = node["button"], b.value.string != ButtonBehavior.trigger.rawValue {
            ctx.report(b.value.location, "\(path).button", "a command fires on a press: use \"trigger\" (or leave \"button\" out)")
            ok = false
        }
        let dot = name.firstIndex(of: ".")!
        let unitID = String(name[..<dot])
        let command = String(name[name.index(after: dot)...])
        if ctx.brokenUnits.contains(unitID) { return nil }  // its own error says what is wrong
        guard let unit = ctx.unitIndex[unitID].map({ rack.units[$0] }) else {
            ctx.report(location, "\(path).action", "no unit named \"\(unitID)\"\(Suggest.hint(for: unitID, in: rack.units.map(\.id)))")
            return nil
        }
        guard let type = registry.type(named: unit.type) else { return nil }
        let commands = type.commands(unit.settings)
        guard commands.contains(command) else {
            let what = commands.isEmpty ? "takes no commands" : "takes \(Self.quoted(commands))"
            ctx.report(location, "\(path).action", "a \(unit.type) unit \(what), not \"\(command)\"\(Suggest.hint(for: command, in: commands))")
            return nil
        }
        guard ok, let source else { return nil }
        if case .nrpn = source {} else if case .rpn = source {} else {
            var d = MIDIMappingDescription(
                source: source, channel: channel, button: .trigger, location: node.location, targetLocation: location)
            d.command = name
            d.commandIndex = commands.firstIndex(of: command)!
            return d
        }
        ctx.report(node.location, path, "a command needs a button: a \"note\" or a \"cc\"")
        return nil
    }
}
