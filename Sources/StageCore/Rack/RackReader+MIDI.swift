/// The `midi` section of a rack file: controller connections and mappings.
extension RackReader {
    static let midiKeys = ["connect", "map"]
    static let mappingKeys = ["cc", "channel", "to", "min", "max", "curve", "comment"]

    func readMIDI(_ node: JSONNode, into rack: inout RackDescription, _ ctx: inout Context) {
        guard let members = node.members else {
            ctx.report(node.location, "midi", "must be an object with \"connect\" and/or \"map\"")
            return
        }
        checkKeys(members, allowed: Self.midiKeys, path: "midi", what: "the midi section", &ctx)
        if let c = node["connect"] {
            if let list = c.value.elements {
                for (i, e) in list.enumerated() {
                    if let s = e.string { rack.midi.connect.append(s) } else {
                        ctx.report(e.location, "midi.connect[\(i)]", "must be a string (a port name pattern)")
                    }
                }
            } else {
                ctx.report(c.value.location, "midi.connect", "must be a list of port name patterns")
            }
        }
        if let m = node["map"] {
            guard let list = m.value.elements else {
                ctx.report(m.value.location, "midi.map", "must be a list of mappings")
                return
            }
            for (i, e) in list.enumerated() {
                if let mapping = readMapping(e, path: "midi.map[\(i)]", rack: rack, &ctx) { rack.midi.map.append(mapping) }
            }
        }
    }

    func readMapping(
        _ node: JSONNode, path: String, rack: RackDescription, _ ctx: inout Context
    ) -> MIDIMappingDescription? {
        guard let members = node.members else {
            ctx.report(node.location, path, "a mapping must be an object like { \"cc\": 7, \"to\": \"mix.gain1\" }")
            return nil
        }
        checkKeys(members, allowed: Self.mappingKeys, path: path, what: "a mapping", &ctx)
        var ok = true
        var cc = 0
        if let c = node["cc"] {
            if let v = number(c.value, "\(path).cc", range: 0...127, integer: true, &ctx) { cc = Int(v) } else { ok = false }
        } else {
            ctx.report(node.location, "\(path).cc", "missing (the controller number 0…127)")
            ok = false
        }
        var channel: Int?
        if let c = node["channel"] {
            if let v = number(c.value, "\(path).channel", range: 1...16, integer: true, &ctx) { channel = Int(v) } else {
                ok = false
            }
        }
        var curve: ParameterCurve?
        if let c = node["curve"] {
            let names = ParameterCurve.allCases.map(\.rawValue)
            if let s = c.value.string, let parsed = ParameterCurve(rawValue: s) { curve = parsed } else {
                ctx.report(
                    c.value.location, "\(path).curve",
                    "must be one of \(names.joined(separator: ", "))\(Suggest.hint(for: c.value.string ?? "", in: names))")
                ok = false
            }
        }
        guard let to = node["to"] else {
            ctx.report(node.location, "\(path).to", "missing (the parameter to move, as \"unit.param\")")
            return nil
        }
        guard let target = to.value.string else {
            ctx.report(to.value.location, "\(path).to", "must be a string \"unit.param\"")
            return nil
        }
        guard let spec = resolveTarget(target, at: to.value.location, path: "\(path).to", rack: rack, &ctx) else {
            return nil
        }
        var lower: Float?
        var upper: Float?
        for (key, slot) in [("min", 0), ("max", 1)] {
            guard let n = node[key] else { continue }
            if let v = parameterValue(n.value, spec, "\(path).\(key)", &ctx) {
                if slot == 0 { lower = v } else { upper = v }
            } else {
                ok = false
            }
        }
        if curve == .log, spec.range.lowerBound <= 0, (lower ?? spec.range.lowerBound) <= 0 || (upper ?? spec.range.upperBound) <= 0 {
            ctx.report(node["curve"]?.value.location, "\(path).curve", "a log curve needs min and max above 0")
            ok = false
        }
        guard ok else { return nil }
        return MIDIMappingDescription(
            cc: cc, channel: channel, target: target, min: lower, max: upper, curve: curve, location: node.location,
            targetLocation: to.value.location)
    }

    /// Finds the parameter a `unit.param` address names, reporting what is wrong if none.
    func resolveTarget(
        _ target: String, at location: SourceLocation, path: String, rack: RackDescription, _ ctx: inout Context
    ) -> ParameterSpec? {
        let parts = target.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            ctx.report(location, path, "\"\(target)\" is not an address like \"unit.param\"")
            return nil
        }
        let unitID = String(parts[0])
        let paramID = String(parts[1])
        guard let unit = rack.unit(unitID) else {
            ctx.report(location, path, "no unit named \"\(unitID)\"\(Suggest.hint(for: unitID, in: rack.units.map(\.id)))")
            return nil
        }
        guard let type = registry.type(named: unit.type) else { return nil }
        let specs = type.parameters(unit.settings)
        guard let spec = specs.first(where: { $0.id == paramID }) else {
            ctx.report(
                location, path,
                "a \(unit.type) unit has no parameter \"\(paramID)\"\(Suggest.hint(for: paramID, in: specs.map(\.id)))")
            return nil
        }
        return spec
    }

}
