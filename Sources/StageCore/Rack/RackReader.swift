/// Reads a rack file into a `RackDescription`, reporting every problem at once with its
/// line and column. Graph-level problems (cycles, missing buses) are the compiler's.
/// Thread: control.
public struct RackReader {
    public let registry: UnitRegistry

    static let topLevelKeys = ["format", "name", "description", "tempo", "units", "connections", "midi", "io", "snapshots", "performance", "talk", "talkDuck"]
    static let unitKeys = ["type", "params", "comment"]
    static let ioKeys = ["playback", "capture", "sampleRate", "period", "periods"]

    public init(registry: UnitRegistry) {
        self.registry = registry
    }

    /// Reads rack text. `file` is used in messages and to find files the rack names.
    public func read(text: String, file: String = "") throws(RackError) -> RackDescription {
        var ctx = Context(file: file)
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw RackError([RackDiagnostic(file: file, location: error.location, path: "", message: error.message)])
        }
        var rack = RackDescription()
        rack.file = file
        readRoot(root, into: &rack, &ctx)
        if !ctx.diagnostics.isEmpty { throw RackError(RackDiagnostic.sortedByPlace(ctx.diagnostics)) }
        rack.notes += formatNotes(rack, root)
        return rack
    }

    struct Context {
        var file: String
        var diagnostics: [RackDiagnostic] = []
        /// The file's format (settings and programs are read by its rules).
        var format = RackFormat.current
        /// Units whose type is unknown or whose settings are wrong: already reported, so a
        /// mapping or snapshot that names them says nothing more (one root cause, one error).
        var brokenUnits: Set<String> = []
        /// Index of each unit in `rack.units` by name (mappings of huge racks stay linear).
        var unitIndex: [String: Int] = [:]
        mutating func report(_ location: SourceLocation?, _ path: String, _ message: String) {
            diagnostics.append(RackDiagnostic(file: file, location: location, path: path, message: message))
        }
        var rackDirectory: String {
            guard let slash = file.lastIndex(of: "/") else { return "." }
            return slash == file.startIndex ? "/" : String(file[..<slash])
        }
    }

    func checkKeys(
        _ members: [JSONMember], allowed: [String], path: String, what: String, _ ctx: inout Context
    ) {
        for m in members where !allowed.contains(m.key) {
            ctx.report(
                m.keyLocation, join(path, m.key),
                "unknown key in \(what)\(Suggest.hint(for: m.key, in: allowed))")
        }
    }

    private func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func readRoot(_ root: JSONNode, into rack: inout RackDescription, _ ctx: inout Context) {
        guard let members = root.members else {
            ctx.report(root.location, "", "a rack file must be an object { ... }, found \(root.value.kindName)")
            return
        }
        checkKeys(members, allowed: Self.topLevelKeys, path: "", what: "a rack", &ctx)
        if let f = root["format"] {
            if let n = f.value.number, let v = Int(exactly: n), RackFormat.supported.contains(v) {
                ctx.format = v
            } else {
                ctx.report(
                    f.value.location, "format",
                    "this program reads rack formats 1 and 2, the file says \(describe(f.value))")
            }
        } else {
            ctx.report(root.location, "format", "missing; add \"format\": \(RackFormat.current)")
        }
        rack.format = ctx.format
        if let n = root["name"] {
            if let s = n.value.string { rack.name = s } else {
                ctx.report(n.value.location, "name", "must be a string, found \(n.value.value.kindName)")
            }
        }
        if let t = root["tempo"] {
            if let v = number(t.value, "tempo", range: 20...400, &ctx) {
                rack.tempo = v
                rack.songTempo = v
            }
        }
        if let u = root["units"] {
            rack.unitsLocation = u.keyLocation
            readUnits(u.value, into: &rack, &ctx)
            for (i, unit) in rack.units.enumerated() where ctx.unitIndex[unit.id] == nil { ctx.unitIndex[unit.id] = i }
        } else {
            ctx.report(root.location, "units", "missing; a rack needs at least an output unit")
        }
        if let c = root["connections"] { readConnections(c.value, into: &rack, &ctx) }
        if let m = root["midi"] { readMIDI(m.value, into: &rack, &ctx) }
        if let io = root["io"] { readIO(io.value, into: &rack, &ctx) }
        if let s = root["snapshots"] { readSnapshots(s.value, into: &rack, &ctx) }
        if let p = root["performance"] { readPerformance(p.value, into: &rack, &ctx) }
        if let t = root["talk"] { readTalk(t.value, into: &rack, &ctx) }
        if let d = root["talkDuck"] { rack.talkDuck = number(d.value, "talkDuck", range: -60...0, &ctx) }
    }

    /// `"talk": ["pitch", "verb"]`: units of this rack (Talk). Thread: control.
    private func readTalk(_ node: JSONNode, into rack: inout RackDescription, _ ctx: inout Context) {
        guard let elements = node.elements else {
            ctx.report(node.location, "talk", "must be a list of unit names, such as [\"pitch\", \"verb\"]")
            return
        }
        var ids: [String] = []
        for (i, e) in elements.enumerated() {
            guard let id = e.string else {
                ctx.report(e.location, "talk[\(i)]", "must be a unit name, found \(e.value.kindName)")
                continue
            }
            guard rack.units.contains(where: { $0.id == id }) else {
                ctx.report(e.location, "talk[\(i)]", "no unit named \"\(id)\"\(Suggest.hint(for: id, in: rack.units.map(\.id)))")
                continue
            }
            ids.append(id)
        }
        rack.talk = ids
    }

    func describe(_ node: JSONNode) -> String {
        switch node.value {
        case .number(let n): return formatNumber(n)
        case .string(let s): return "\"\(s)\""
        default: return node.value.kindName
        }
    }

    func number(
        _ node: JSONNode, _ path: String, range: ClosedRange<Double>, integer: Bool = false, _ ctx: inout Context
    ) -> Double? {
        guard let v = node.number else {
            ctx.report(node.location, path, "must be a number, found \(node.value.kindName)")
            return nil
        }
        if integer && v != v.rounded() {
            ctx.report(node.location, path, "must be a whole number, found \(formatNumber(v))")
            return nil
        }
        if !range.contains(v) {
            ctx.report(
                node.location, path,
                "\(formatNumber(v)) is outside \(formatNumber(range.lowerBound))…\(formatNumber(range.upperBound))")
            return nil
        }
        return v
    }

    static func isValidUnitID(_ id: String) -> Bool {
        guard let first = id.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else { return false }
        return id.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }

    // MARK: units

    private func readUnits(_ node: JSONNode, into rack: inout RackDescription, _ ctx: inout Context) {
        guard let members = node.members else {
            ctx.report(node.location, "units", "must be an object of named units, found \(node.value.kindName)")
            return
        }
        for m in members {
            let path = "units.\(m.key)"
            if !Self.isValidUnitID(m.key) {
                ctx.report(m.keyLocation, path, "unit names are letters, digits and _ (starting with a letter)")
                continue
            }
            guard let fields = m.value.members else {
                ctx.report(m.value.location, path, "a unit must be an object with a \"type\", found \(m.value.value.kindName)")
                continue
            }
            guard let typeMember = m.value["type"] else {
                ctx.report(m.value.location, path, "missing \"type\" (one of: \(registry.names.joined(separator: ", ")))")
                ctx.brokenUnits.insert(m.key)
                continue
            }
            guard let typeName = typeMember.value.string else {
                ctx.report(typeMember.value.location, "\(path).type", "must be a string")
                ctx.brokenUnits.insert(m.key)
                continue
            }
            guard let type = registry.type(named: typeName) else {
                ctx.report(
                    typeMember.value.location, "\(path).type",
                    "unknown unit type \"\(typeName)\"\(Suggest.hint(for: typeName, in: registry.names))")
                ctx.brokenUnits.insert(m.key)
                continue
            }
            let settingKeys = type.settings.map(\.key)
            let settingsMembers = fields.filter { !Self.unitKeys.contains($0.key) }
            var settingsOK = true
            for s in settingsMembers {
                guard let spec = type.settings.first(where: { $0.key == s.key }) else {
                    ctx.report(
                        s.keyLocation, "\(path).\(s.key)",
                        "unknown key for a \(typeName) unit\(Suggest.hint(for: s.key, in: settingKeys + Self.unitKeys))")
                    settingsOK = false
                    continue
                }
                if !checkSetting(s.value, spec, "\(path).\(s.key)", &ctx) { settingsOK = false }
            }
            for spec in type.settings where spec.required && !fields.contains(where: { $0.key == spec.key }) {
                ctx.report(m.value.location, "\(path).\(spec.key)", "missing (\(spec.help))")
                settingsOK = false
            }
            let settings = UnitSettings(
                members: settingsMembers, rackDirectory: ctx.rackDirectory, rackFormat: ctx.format)
            if settingsOK {
                for problem in type.check(settings) {
                    let loc = settings.members.first { $0.key == problem.key }?.value.location ?? m.value.location
                    ctx.report(loc, "\(path).\(problem.key)", problem.message)
                    settingsOK = false
                }
            }
            if !settingsOK { ctx.brokenUnits.insert(m.key) }
            var values: [ParameterValueDescription] = []
            if let p = m.value["params"], settingsOK {
                values = readParams(p.value, type.parameters(settings), path: "\(path).params", &ctx)
                checkExclusive(p.value, type.exclusiveParameters, path: "\(path).params", &ctx)
            } else if let p = m.value["params"], p.value.members == nil {
                ctx.report(p.value.location, "\(path).params", "must be an object of parameter values")
            }
            var unit = UnitDescription(id: m.key, type: typeName, location: m.keyLocation, settings: settings, parameterValues: values)
            if settingsOK { unit.commands = type.commands(settings) }
            rack.units.append(unit)
        }
    }

    private func checkSetting(_ node: JSONNode, _ spec: SettingSpec, _ path: String, _ ctx: inout Context) -> Bool {
        switch spec.kind {
        case .integer(let r):
            return number(node, path, range: Double(r.lowerBound)...Double(r.upperBound), integer: true, &ctx) != nil
        case .number(let r):
            return number(node, path, range: r, &ctx) != nil
        case .string:
            if node.string == nil {
                ctx.report(node.location, path, "must be a string, found \(node.value.kindName)")
                return false
            }
            return true
        case .choice(let choices):
            guard let s = node.string else {
                ctx.report(node.location, path, "must be one of \(spec.kind.summary)")
                return false
            }
            if !choices.contains(s) {
                ctx.report(node.location, path, "\"\(s)\" is not one of \(spec.kind.summary)\(Suggest.hint(for: s, in: choices))")
                return false
            }
            return true
        case .custom:
            return true
        }
    }

    /// At most one parameter of each exclusive group set; the second one named is the error.
    private func checkExclusive(_ node: JSONNode, _ groups: [[String]], path: String, _ ctx: inout Context) {
        guard let members = node.members else { return }
        for group in groups {
            let set = members.filter { group.contains($0.key) }
            guard set.count > 1 else { continue }
            let names = set.map { "\"\($0.key)\"" }.joined(separator: " and ")
            ctx.report(set[1].keyLocation, "\(path).\(set[1].key)", "\(names) say the same thing: set one of them")
        }
    }

    private func readParams(
        _ node: JSONNode, _ specs: [ParameterSpec], path: String, _ ctx: inout Context
    ) -> [ParameterValueDescription] {
        guard let members = node.members else {
            ctx.report(node.location, path, "must be an object of parameter values, found \(node.value.kindName)")
            return []
        }
        var values: [ParameterValueDescription] = []
        for m in members {
            let p = "\(path).\(m.key)"
            guard let spec = specs.first(where: { $0.id == m.key }) else {
                ctx.report(m.keyLocation, p, "unknown parameter\(Suggest.hint(for: m.key, in: specs.map(\.id)))")
                continue
            }
            if let v = parameterValue(m.value, spec, p, &ctx) {
                values.append(ParameterValueDescription(id: spec.id, value: v, location: m.value.location))
            }
        }
        return values
    }

    /// A parameter value as written: a number, `true`/`false` for switches, a name for choices.
    func parameterValue(_ node: JSONNode, _ spec: ParameterSpec, _ path: String, _ ctx: inout Context) -> Float? {
        switch node.value {
        case .bool(let b) where spec.unit == .boolean:
            return b ? 1 : 0
        case .string(let s) where spec.unit == .choice:
            if let i = spec.choices.firstIndex(of: s) { return Float(i) }
            ctx.report(
                node.location, path,
                "\"\(s)\" is not one of \(spec.choices.map { "\"\($0)\"" }.joined(separator: " | "))\(Suggest.hint(for: s, in: spec.choices))"
            )
            return nil
        case .number(let n):
            let r = spec.range
            // Compared as floats, as the value is kept (0.001 is in 0.001…20 although
            // Float(0.001) is a little above 0.001); Float(±1e308) is ±infinity, outside.
            if Float(n) < r.lowerBound || Float(n) > r.upperBound {
                ctx.report(
                    node.location, path,
                    "\(formatNumber(n)) is outside \(formatNumber(r.lowerBound))…\(formatNumber(r.upperBound))"
                        + (spec.unit == .generic || spec.unit == .choice ? "" : " \(spec.unit.rawValue)"))
                return nil
            }
            if (spec.unit == .choice || spec.unit == .boolean || spec.wholeNumbers) && n != n.rounded() {
                ctx.report(node.location, path, "must be a whole number, found \(formatNumber(n))")
                return nil
            }
            return Float(n)
        default:
            let expected: String
            switch spec.unit {
            case .boolean: expected = "true or false"
            case .choice: expected = "one of " + spec.choices.map { "\"\($0)\"" }.joined(separator: " | ")
            default: expected = "a number"
            }
            ctx.report(node.location, path, "must be \(expected), found \(node.value.kindName)")
            return nil
        }
    }

    // MARK: connections

    private func readConnections(_ node: JSONNode, into rack: inout RackDescription, _ ctx: inout Context) {
        guard let elements = node.elements else {
            ctx.report(node.location, "connections", "must be a list of chains like \"mic -> reverb -> out\"")
            return
        }
        for (i, e) in elements.enumerated() {
            let path = "connections[\(i)]"
            guard let text = e.string else {
                ctx.report(e.location, path, "must be a string like \"mic -> reverb -> out\", found \(e.value.kindName)")
                continue
            }
            switch ConnectionSyntax.parse(text, at: e.location) {
            case .success(let chain): rack.connections += chain
            case .failure(let problem): ctx.report(problem.location, path, problem.message)
            }
        }
    }

    // MARK: io

    private func readIO(_ node: JSONNode, into rack: inout RackDescription, _ ctx: inout Context) {
        guard let members = node.members else {
            ctx.report(node.location, "io", "must be an object")
            return
        }
        checkKeys(members, allowed: Self.ioKeys, path: "io", what: "the io section", &ctx)
        for m in members {
            let p = "io.\(m.key)"
            switch m.key {
            case "playback", "capture":
                guard let s = m.value.string else {
                    ctx.report(m.value.location, p, "must be an ALSA device name such as \"hw:1,0\"")
                    continue
                }
                if m.key == "playback" { rack.io.playback = s } else { rack.io.capture = s }
            case "sampleRate":
                rack.io.sampleRate = number(m.value, p, range: 8000...384_000, integer: true, &ctx)
            case "period":
                rack.io.period = number(m.value, p, range: 16...8192, integer: true, &ctx).map { Int($0) }
            case "periods":
                rack.io.periods = number(m.value, p, range: 2...16, integer: true, &ctx).map { Int($0) }
            default:
                break
            }
        }
    }
}
