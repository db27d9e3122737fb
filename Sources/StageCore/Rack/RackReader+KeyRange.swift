/// `midi.map` entries with a `keys` range: notes in the range set a key parameter (the
/// `key` of a `harmony` or `tune` unit) to the played note's pitch class, on the note's
/// frame: `{ "keys": "C1..B1", "channel": 16, "to": "harm.key" }`. Their notes are taken
/// (the synth does not play them). The reference is racks/README.md, section "MIDI".
extension RackReader {
    /// The range of a `keys` source: `"C1..B1"`, `"24..35"` (as a unit's `keys` setting).
    func readKeyRange(_ member: JSONMember, path: String, _ ok: inout Bool, _ ctx: inout Context) -> MIDIControlSource? {
        if let text = member.value.string, let r = KeyRange.parse(text) { return .keys(r) }
        ctx.report(
            member.value.location, path,
            "must be a key range such as \"C1..B1\" (note names with # or b and an octave, C4 = 60) or \"24..35\"")
        ok = false
        return .cc(-1)  // counts as given
    }

    /// The rest of a `keys` mapping: a `to` naming a key parameter and nothing a knob has.
    func readKeyMapping(
        _ node: JSONNode, source: MIDIControlSource?, channel: Int?, ok: Bool, path: String, rack: RackDescription,
        _ ctx: inout Context
    ) -> MIDIMappingDescription? {
        var ok = ok
        for key in ["hires", "action", "min", "max", "curve", "mode", "sensitivity", "takeover", "button", "feedback"] {
            if let m = node[key] {
                ctx.report(m.keyLocation, "\(path).\(key)", "does not apply to a key range (a note there sets a key to its pitch class)")
                ok = false
            }
        }
        guard let to = node["to"] else {
            ctx.report(node.location, "\(path).to", "missing: the key to set, as \"unit.key\" (a harmony or tune unit)")
            return nil
        }
        guard let target = to.value.string else {
            ctx.report(to.value.location, "\(path).to", "must be a string \"unit.key\"")
            return nil
        }
        guard let spec = resolveTarget(target, at: to.value.location, path: "\(path).to", rack: rack, &ctx) else { return nil }
        guard spec.isMusicalKey else {
            ctx.report(
                to.value.location, "\(path).to",
                "a key range sets a key (the note's pitch class): \"\(target)\" is not a key parameter (a harmony or tune unit's \"key\")")
            return nil
        }
        guard ok, let source else { return nil }
        return MIDIMappingDescription(
            source: source, channel: channel, target: target, location: node.location, targetLocation: to.value.location)
    }
}
