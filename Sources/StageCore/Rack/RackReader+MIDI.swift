/// The `midi` section of a rack file: controller connections, mappings, clock and programs.
/// The reference is racks/README.md, section "MIDI".
extension RackReader {
    static let midiKeys = ["connect", "map", "clock", "programs", "programChannel"]
    static let mappingKeys = [
        "cc", "nrpn", "rpn", "note", "hires", "channel", "to", "action", "min", "max", "curve", "mode", "sensitivity",
        "takeover", "button", "feedback", "comment", "keys",
    ]
    static let sourceKeys = ["cc", "nrpn", "rpn", "note", "keys"]

    func readMIDI(_ node: JSONNode, into rack: inout RackDescription, _ ctx: inout Context) {
        guard let members = node.members else {
            ctx.report(node.location, "midi", "must be an object with \"connect\" and/or \"map\"")
            return
        }
        checkKeys(members, allowed: Self.midiKeys, path: "midi", what: "the midi section", &ctx)
        if let c = node["connect"] {
            if let list = c.value.elements {
                for (i, e) in list.enumerated() {
                    if let s = e.string, !s.isEmpty { rack.midi.connect.append(s) } else {
                        ctx.report(e.location, "midi.connect[\(i)]", "must be a string (a port name pattern)")
                    }
                }
            } else {
                ctx.report(c.value.location, "midi.connect", "must be a list of port name patterns")
            }
        }
        if let c = node["clock"] {
            if let b = c.value.bool { rack.midi.clock = b } else {
                ctx.report(c.value.location, "midi.clock", "must be true (follow MIDI clock) or false")
            }
        }
        if let p = node["programs"] {
            if let s = p.value.string, let r = ProgramRouting(rawValue: s) { rack.midi.programs = r } else {
                ctx.report(
                    p.value.location, "midi.programs",
                    "must be one of \(Self.quoted(ProgramRouting.allCases.map(\.rawValue)))"
                        + Suggest.hint(for: p.value.string ?? "", in: ProgramRouting.allCases.map(\.rawValue)))
            }
        }
        if let c = node["programChannel"] {
            if let v = number(c.value, "midi.programChannel", range: 1...16, integer: true, &ctx) {
                rack.midi.programChannel = Int(v)
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

    static func quoted(_ words: [String]) -> String { words.map { "\"\($0)\"" }.joined(separator: ", ") }

    /// Reads a string naming one case of `E` (its raw value), reporting a bad one.
    func word<E: RawRepresentable & CaseIterable>(
        _ node: JSONNode?, _ path: String, _ type: E.Type, _ ok: inout Bool, _ ctx: inout Context
    ) -> E? where E.RawValue == String {
        guard let node else { return nil }
        let names = E.allCases.map(\.rawValue)
        if let s = node.string, let v = E(rawValue: s) { return v }
        ctx.report(
            node.location, path, "must be one of \(Self.quoted(names))\(Suggest.hint(for: node.string ?? "", in: names))")
        ok = false
        return nil
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

        // The source: exactly one of cc, nrpn, rpn, note.
        var source: MIDIControlSource?
        for m in members where Self.sourceKeys.contains(m.key) {
            if let first = source {
                ctx.report(m.keyLocation, "\(path).\(m.key)", "a mapping has one source; this one already has \"\(first.key)\"")
                ok = false
                continue
            }
            if m.key == "keys" {
                // A key range (RackReader+KeyRange.swift).
                source = readKeyRange(m, path: "\(path).keys", &ok, &ctx)
                continue
            }
            let range = m.key == "cc" || m.key == "note" ? 0.0...127 : 0.0...16383
            guard let v = number(m.value, "\(path).\(m.key)", range: range, integer: true, &ctx) else {
                ok = false
                source = .cc(-1)  // counts as given
                continue
            }
            switch m.key {
            case "cc": source = .cc(Int(v))
            case "nrpn": source = .nrpn(Int(v))
            case "rpn": source = .rpn(Int(v))
            default: source = .note(Int(v))
            }
        }
        if source == nil {
            ctx.report(node.location, path, "missing the control: one of \"cc\", \"nrpn\", \"rpn\", \"note\", \"keys\"")
            ok = false
        }

        var hires = false
        if case .nrpn = source { hires = true }
        if case .rpn = source { hires = true }
        if let h = node["hires"] {
            if let b = h.value.bool {
                hires = b
                switch source {
                case .cc(let n) where b && n > 31:
                    ctx.report(h.value.location, "\(path).hires", "14-bit controller pairs are CC 0…31 (the LSB is CC n+32)")
                    ok = false
                case .note where b:
                    ctx.report(h.value.location, "\(path).hires", "notes have no 14-bit form")
                    ok = false
                default: break
                }
            } else {
                ctx.report(h.value.location, "\(path).hires", "must be true (14-bit values) or false")
                ok = false
            }
        }

        var channel: Int?
        if let c = node["channel"] {
            if let v = number(c.value, "\(path).channel", range: 1...16, integer: true, &ctx) { channel = Int(v) } else {
                ok = false
            }
        }
        if case .keys = source { return readKeyMapping(node, source: source, channel: channel, ok: ok, path: path, rack: rack, &ctx) }
        // A unit's command ("backing.play"): RackReader+Commands.swift.
        if let a = node["action"], let name = a.value.string, name.contains(".") {
            return readUnitCommand(node, name, at: a.value.location, source: source, channel: channel, ok: ok, path: path, rack: rack, &ctx)
        }
        let mode = word(node["mode"]?.value, "\(path).mode", MIDIControlMode.self, &ok, &ctx) ?? .absolute
        let takeover = word(node["takeover"]?.value, "\(path).takeover", TakeoverRule.self, &ok, &ctx)
        var button = word(node["button"]?.value, "\(path).button", ButtonBehavior.self, &ok, &ctx)
        let action = word(node["action"]?.value, "\(path).action", MappingAction.self, &ok, &ctx)

        var sensitivity: Float = 1
        if let s = node["sensitivity"] {
            if let v = number(s.value, "\(path).sensitivity", range: 0.01...100, &ctx) { sensitivity = Float(v) } else { ok = false }
            let steppable: Bool
            switch source {
            case .nrpn?, .rpn?: steppable = true  // data increment/decrement
            default: steppable = mode.isRelative
            }
            if !steppable {
                ctx.report(s.keyLocation, "\(path).sensitivity", "applies to relative encoders (\"mode\": \"relative-…\")")
                ok = false
            }
        }
        var feedback = false
        if let f = node["feedback"] {
            if let b = f.value.bool { feedback = b } else {
                ctx.report(f.value.location, "\(path).feedback", "must be true (send values back to the controller) or false")
                ok = false
            }
        }

        // Combinations.
        if mode.isRelative, let m = node["mode"] {
            if hires {
                ctx.report(m.value.location, "\(path).mode", "relative encoders send 7-bit steps: drop \"hires\" or use \"absolute\"")
                ok = false
            } else if case .note = source {
                ctx.report(m.value.location, "\(path).mode", "notes are buttons, not encoders")
                ok = false
            } else if button != nil {
                ctx.report(m.value.location, "\(path).mode", "a button cannot be a relative encoder")
                ok = false
            }
        }
        if let t = node["takeover"], mode.isRelative || button != nil || { if case .note = source { return true } else { return false } }() {
            ctx.report(t.keyLocation, "\(path).takeover", "applies to absolute knobs and faders only")
            ok = false
        }
        if let action {
            if button == nil { button = .trigger }
            if button != .trigger, let b = node["button"] {
                ctx.report(b.value.location, "\(path).button", "an action fires on a press: use \"trigger\" (or leave \"button\" out)")
                ok = false
            }
            if let t = node["to"] {
                ctx.report(t.keyLocation, "\(path).to", "a mapping has either \"to\" or \"action\", not both")
                return nil
            }
            for key in ["min", "max", "curve", "feedback"] {
                if let m = node[key] {
                    ctx.report(m.keyLocation, "\(path).\(key)", "does not apply to an action (\(action.rawValue))")
                    ok = false
                }
            }
            guard ok, let source else { return nil }
            return MIDIMappingDescription(
                source: source, hires: hires, channel: channel, action: action, mode: mode, sensitivity: sensitivity,
                takeover: takeover, button: button, feedback: feedback, location: node.location)
        }
        if node["action"] != nil { return nil }  // an action that was not one: reported above
        if case .note = source, button == nil { button = .toggle }
        if button == .trigger, node["max"] == nil {
            ctx.report(node["button"]?.value.location ?? node.location, "\(path).button",
                       "a trigger needs an \"action\", or a \"max\" to set its parameter to")
            ok = false
        }

        guard let to = node["to"] else {
            ctx.report(node.location, "\(path).to", "missing (the parameter to move, as \"unit.param\", or an \"action\")")
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
        var curve: MappingCurve?
        if let c = node["curve"] {
            curve = readCurve(c, spec: spec, path: "\(path).curve", &ok, &ctx)
            if case .steps = curve {
                for key in ["min", "max"] {
                    if let m = node[key] {
                        ctx.report(m.keyLocation, "\(path).\(key)", "a list of steps gives the values itself: drop \"\(key)\"")
                        ok = false
                    }
                }
                if button != nil {
                    ctx.report(c.value.location, "\(path).curve", "a button sets \"min\" and \"max\", not a list of steps")
                    ok = false
                }
            }
        }
        if curve == .log, (lower ?? spec.range.lowerBound) <= 0 || (upper ?? spec.range.upperBound) <= 0 {
            ctx.report(node["curve"]?.value.location, "\(path).curve", "a log curve needs min and max above 0")
            ok = false
        } else if curve == .log {
            let lo = lower ?? spec.range.lowerBound
            let hi = upper ?? spec.range.upperBound
            if !(hi / lo).isNormal || !(lo / hi).isNormal {
                ctx.report(
                    node["curve"]?.value.location, "\(path).curve",
                    "a log curve from \(formatNumber(lo)) to \(formatNumber(hi)) spans too many decades; raise the lower end")
                ok = false
            }
        }
        guard ok, let source else { return nil }
        return MIDIMappingDescription(
            source: source, hires: hires, channel: channel, target: target, min: lower, max: upper, curve: curve,
            mode: mode, sensitivity: sensitivity, takeover: takeover, button: button, feedback: feedback,
            location: node.location, targetLocation: to.value.location)
    }

    /// `"linear"`, `"log"`, `"exp"`, or a list of steps (choice names or values in range).
    func readCurve(
        _ member: JSONMember, spec: ParameterSpec, path: String, _ ok: inout Bool, _ ctx: inout Context
    ) -> MappingCurve? {
        let node = member.value
        if let list = node.elements {
            guard list.count >= 2 else {
                ctx.report(node.location, path, "a list of steps needs at least 2 values")
                ok = false
                return nil
            }
            var steps: [Float] = []
            for (i, e) in list.enumerated() {
                if let v = parameterValue(e, spec, "\(path)[\(i)]", &ctx) { steps.append(v) } else { ok = false }
            }
            return steps.count == list.count ? .steps(steps) : nil
        }
        let names = ParameterCurve.allCases.map(\.rawValue)
        if let s = node.string, let parsed = ParameterCurve(rawValue: s) { return MappingCurve(parsed) }
        if node.string != nil {
            ctx.report(node.location, path, "must be one of \(names.joined(separator: ", "))\(Suggest.hint(for: node.string ?? "", in: names))")
        } else {
            ctx.report(node.location, path, "must be one of \(names.joined(separator: ", ")) or a list of steps, found \(node.value.kindName)")
        }
        ok = false
        return nil
    }

    /// Finds the parameter a `unit.param` address names, reporting what is wrong if none.
    /// `unit.bypass` names the engine's bypass of any unit that processes or generates sound.
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
        if ctx.brokenUnits.contains(unitID) { return nil }  // its own error says what is wrong
        guard let unit = ctx.unitIndex[unitID].map({ rack.units[$0] }) else {
            ctx.report(location, path, "no unit named \"\(unitID)\"\(Suggest.hint(for: unitID, in: rack.units.map(\.id)))")
            return nil
        }
        guard let type = registry.type(named: unit.type) else { return nil }
        let specs = type.parameters(unit.settings)
        if let spec = specs.first(where: { $0.id == paramID }) { return spec }
        if paramID == ParameterSpec.bypass.id {
            guard type.role == .processor || type.role == .generator else {
                ctx.report(location, path, "an \(unit.type) unit cannot be bypassed")
                return nil
            }
            return ParameterSpec.bypass
        }
        let bypassable = type.role == .processor || type.role == .generator
        ctx.report(
            location, path,
            "a \(unit.type) unit has no parameter \"\(paramID)\"\(Suggest.hint(for: paramID, in: specs.map(\.id) + (bypassable ? ["bypass"] : [])))")
        return nil
    }
}
