/// The rack's `performance` section: the few controls the page's performer view shows.
///
///     "performance": [
///       { "label": "Voice",   "to": "mix.gain1", "min": -40, "max": 6 },
///       { "label": "Harmony", "to": ["mix.gain3", "mix.gain4"], "min": -60, "max": 0 },
///       { "label": "Echo",    "to": "delay.bypass" },
///     ]
///
/// Targets are the addresses MIDI mappings use; a list moves them together. Every problem
/// is reported with its line and column like the rest of the file. Thread: control.
extension RackReader {
    static let performanceKeys = ["label", "to", "min", "max", "comment"]

    func readPerformance(_ node: JSONNode, into rack: inout RackDescription, _ ctx: inout Context) {
        guard let list = node.elements else {
            ctx.report(node.location, "performance", "must be a list of controls like { \"label\": \"Voice\", \"to\": \"mix.gain1\" }, found \(node.value.kindName)")
            return
        }
        let limit = PerformanceControlDescription.maxControls
        if list.count > limit {
            ctx.report(list[limit].location, "performance[\(limit + 1)]", "at most \(limit) controls (a phone shows no more at a glance); found \(list.count)")
        }
        var controls: [PerformanceControlDescription] = []
        var labels: Set<String> = []
        for (i, item) in list.prefix(limit).enumerated() {
            let path = "performance[\(i + 1)]"
            guard let fields = item.members else {
                ctx.report(item.location, path, "a control must be an object with a \"label\" and \"to\", found \(item.value.kindName)")
                continue
            }
            checkKeys(fields, allowed: Self.performanceKeys, path: path, what: "a performance control", &ctx)
            guard let control = readPerformanceControl(item, path: path, rack: rack, &ctx) else { continue }
            if labels.contains(control.label) {
                ctx.report(item["label"]?.value.location ?? item.location, "\(path).label", "\"\(control.label)\" already labels another control")
                continue
            }
            labels.insert(control.label)
            controls.append(control)
        }
        rack.performance = controls
    }

    private func readPerformanceControl(
        _ item: JSONNode, path: String, rack: RackDescription, _ ctx: inout Context
    ) -> PerformanceControlDescription? {
        var ok = true
        var label = ""
        if let l = item["label"] {
            if let s = l.value.string, !s.trimmingSpaces.isEmpty, s.count <= PerformanceControlDescription.maxLabel,
                !s.unicodeScalars.contains(where: { $0.value < 0x20 })
            {
                label = s.trimmingSpaces
            } else {
                ctx.report(l.value.location, "\(path).label", "must be a name of 1…\(PerformanceControlDescription.maxLabel) characters")
                ok = false
            }
        } else {
            ctx.report(item.location, "\(path).label", "missing (the name the performer reads, e.g. \"Harmony\")")
            ok = false
        }
        guard let to = item["to"] else {
            ctx.report(item.location, "\(path).to", "missing (a \"unit.param\" address, or a list of them moved together)")
            return nil
        }
        var targets: [(String, SourceLocation)] = []
        if let s = to.value.string {
            targets = [(s, to.value.location)]
        } else if let list = to.value.elements {
            if list.isEmpty || list.count > PerformanceControlDescription.maxTargets {
                ctx.report(to.value.location, "\(path).to", "a group moves 1…\(PerformanceControlDescription.maxTargets) parameters, found \(list.count)")
                return nil
            }
            for e in list {
                guard let s = e.string else {
                    ctx.report(e.location, "\(path).to", "must be \"unit.param\" addresses, found \(e.value.kindName)")
                    return nil
                }
                targets.append((s, e.location))
            }
        } else {
            ctx.report(to.value.location, "\(path).to", "must be a \"unit.param\" address or a list of them, found \(to.value.value.kindName)")
            return nil
        }
        var specs: [ParameterSpec] = []
        var seen: Set<String> = []
        for (target, location) in targets {
            if seen.contains(target) {
                ctx.report(location, "\(path).to", "\"\(target)\" is named twice")
                ok = false
                continue
            }
            seen.insert(target)
            guard let spec = resolveTarget(target, at: location, path: "\(path).to", rack: rack, &ctx) else {
                ok = false
                continue
            }
            specs.append(spec)
        }
        guard ok, let first = specs.first else { return nil }
        let kind = Self.performanceKind(first)
        for (spec, (target, location)) in zip(specs, targets).dropFirst() where Self.performanceKind(spec) != kind {
            ctx.report(location, "\(path).to", "\"\(target)\" is a \(Self.performanceKind(spec).rawValue), the group's first is a \(kind.rawValue): one control moves one kind")
            return nil
        }
        var lower: Float?
        var upper: Float?
        for key in ["min", "max"] {
            guard let m = item[key] else { continue }
            guard kind == .fader else {
                ctx.report(m.keyLocation, "\(path).\(key)", "only a fader has \"min\" and \"max\" (this control is a \(kind.rawValue))")
                return nil
            }
            let r = first.range
            guard let v = number(m.value, "\(path).\(key)", range: Double(r.lowerBound)...Double(r.upperBound), &ctx) else { return nil }
            if key == "min" { lower = Float(v) } else { upper = Float(v) }
        }
        if let lower, let upper, lower == upper {
            ctx.report(item["max"]?.value.location, "\(path).max", "min and max are the same: the fader would do nothing")
            return nil
        }
        return PerformanceControlDescription(label: label, targets: targets.map(\.0), kind: kind, min: lower, max: upper, location: item.location)
    }

    /// A switch or bypass is a toggle, an enumeration a choice, anything else a fader.
    static func performanceKind(_ spec: ParameterSpec) -> PerformanceControlDescription.Kind {
        switch spec.unit {
        case .boolean: return .toggle
        case .choice: return .choice
        default: return spec.id == ParameterSpec.bypass.id ? .toggle : .fader
        }
    }
}

extension String {
    fileprivate var trimmingSpaces: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}
