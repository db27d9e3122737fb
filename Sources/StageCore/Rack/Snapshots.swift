/// A named set of parameter values inside a rack, recalled by program change or button;
/// a recall morphs the parameters over `morphSeconds` without rebuilding the graph.
public struct SnapshotDescription: Sendable, Equatable {
    public var name: String
    /// 1…128 as controllers display programs; nil when only a button recalls it.
    public var program: Int?
    public var morphSeconds: Double
    public var values: [(target: String, value: Float)]
    public var location: SourceLocation?

    public static func == (a: SnapshotDescription, b: SnapshotDescription) -> Bool {
        a.name == b.name && a.program == b.program && a.morphSeconds == b.morphSeconds
            && a.values.map(\.target) == b.values.map(\.target) && a.values.map(\.value) == b.values.map(\.value)
    }
}

extension RackReader {
    static let snapshotKeys = ["program", "morph", "params", "comment"]

    /// Reads `"snapshots": { "verse": { "program": 10, "morph": 0.05, "params": { "unit.param": value } } }`.
    func readSnapshots(_ node: JSONNode, into rack: inout RackDescription, _ ctx: inout Context) {
        guard let members = node.members else {
            ctx.report(node.location, "snapshots", "must be an object of named snapshots")
            return
        }
        var programs: [Int: String] = [:]
        for m in members {
            let path = "snapshots.\(m.key)"
            guard let fields = m.value.members else {
                ctx.report(m.value.location, path, "a snapshot must be an object with \"params\"")
                continue
            }
            checkKeys(fields, allowed: Self.snapshotKeys, path: path, what: "a snapshot", &ctx)
            var snapshot = SnapshotDescription(name: m.key, program: nil, morphSeconds: 0.05, values: [], location: m.keyLocation)
            if let p = m.value["program"] {
                if let v = number(p.value, "\(path).program", range: 1...128, integer: true, &ctx) {
                    snapshot.program = Int(v)
                    if let other = programs[Int(v)] {
                        ctx.report(p.value.location, "\(path).program", "program \(Int(v)) already recalls snapshot \"\(other)\"")
                    }
                    programs[Int(v)] = m.key
                }
            }
            if let t = m.value["morph"], let v = number(t.value, "\(path).morph", range: 0...60, &ctx) {
                snapshot.morphSeconds = v
            }
            guard let params = m.value["params"] else {
                ctx.report(m.value.location, "\(path).params", "missing (the values to recall, as \"unit.param\": value)")
                continue
            }
            guard let list = params.value.members else {
                ctx.report(params.value.location, "\(path).params", "must be an object of \"unit.param\": value")
                continue
            }
            for entry in list {
                let p = "\(path).params.\(entry.key)"
                guard let spec = resolveTarget(entry.key, at: entry.keyLocation, path: p, rack: rack, &ctx) else { continue }
                if let v = parameterValue(entry.value, spec, p, &ctx) { snapshot.values.append((entry.key, v)) }
            }
            rack.snapshots.append(snapshot)
        }
    }
}
