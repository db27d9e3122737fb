import StageCore

/// What "save" from the page writes: the values that differ from what the rack file says
/// (and the mappings learned from the page) into the file, or a new snapshot of the values.
/// Thread: any (a value).
public struct RackSaveRequest: Sendable {
    /// The rack file playing (`RackDescription.file`).
    public var rackFile: String
    /// `unit.param` and its value as rack-file text (`-6`, `0.3`, `true`, `"chord"`), in
    /// plan order.
    public var values: [(target: String, value: String)]
    /// `midi.map` entries to add (rack-file text).
    public var mappings: [String]
    /// nil: into the rack's `params`; else a new snapshot of this name.
    public var snapshot: String?
    /// Each unit's `"state"` now as JSON text (LV2 plugins with `state:interface`), written
    /// into the rack file with the values; empty for a snapshot.
    public var unitStates: [(unit: String, json: String)] = []
}

extension RemoteHub {
    /// Longest snapshot name the page may give.
    public static let maxSnapshotName = 64
    /// Snapshots a rack may have for the page to add one more (a save never grows a file
    /// without bound), and the shortest time between two saves.
    public static let maxSnapshots = 128
    public static let secondsBetweenSaves = 1.0

    /// Asks the control thread to save (`snapshot` nil: into the rack file). False when the
    /// queue is full or a save is already waiting. Thread: the web server's.
    public func requestSave(snapshot: String?) -> Bool {
        guard saveNames.withLock({ names in
            guard names == nil else { return false }
            names = .some(snapshot)
            return true
        }) else { return false }
        guard fromWeb.push(RemoteCommand(kind: .save)) else {
            saveNames.withLock { $0 = nil }
            return false
        }
        wakeControl()
        return true
    }

    /// Carries out a save (`saveRack`, set by `play`, writes the file) and says how it went
    /// on every page. Thread: control.
    func applySave(_ c: RemoteCommand) {
        guard let request = saveNames.withLock({ n -> String?? in
            let v = n
            n = nil
            return v
        }) else { return }
        let snapshot = request
        guard let saveRack else {
            current.notice = "saving is not available here"
            return
        }
        let learned = learn.bySong[current.song] ?? []
        var values: [(target: String, value: String)] = []
        let inSnapshots = Set(plan.rack.snapshots.flatMap { $0.values.map(\.target) })
        for (u, unit) in current.state.units.enumerated() {
            for (p, parameter) in unit.parameters.enumerated() {
                let name = "\(unit.id).\(parameter.spec.id)"
                let before = savedBaseline.units[u].parameters[p].value
                if parameter.value != before || (snapshot != nil && inSnapshots.contains(name)) {
                    values.append((name, Self.rackText(parameter.value, parameter.spec)))
                }
            }
        }
        if let snapshot, current.snapshots.contains(snapshot) || addedSnapshots.contains(snapshot) {
            current.notice = "not saved: the rack has a snapshot \"\(snapshot)\" already"
            return
        }
        if snapshot != nil, current.snapshots.count + addedSnapshots.count >= Self.maxSnapshots {
            current.notice = "not saved: the rack has \(Self.maxSnapshots) snapshots already"
            return
        }
        let now = monotonicSeconds()
        guard now - lastSave >= Self.secondsBetweenSaves else {
            current.notice = "not saved: one save a second at most"
            return
        }
        lastSave = now
        var r = RackSaveRequest(rackFile: plan.rack.file, values: values, mappings: snapshot == nil ? learned.map(\.jsonText) : [], snapshot: snapshot)
        if snapshot == nil {
            do {
                r.unitStates = try plan.savedUnitStates()
            } catch {
                current.notice = "not saved: \(error)"
                return
            }
        }
        switch saveRack(r) {
        case .success(let path):
            if let snapshot {
                addedSnapshots.append(snapshot)
                current.notice = "saved snapshot \"\(snapshot)\" (\(Self.count(values.count, "value"))\(Self.names(values))) in \(path)"
            } else {
                savedBaseline = current.state
                learn.saved += learned
                learn.bySong[current.song] = nil
                refreshMappings()
                current.notice = "saved \(Self.count(values.count, "value"))\(Self.names(values))\(learned.isEmpty ? "" : " and \(Self.count(learned.count, "mapping"))")\(r.unitStates.isEmpty ? "" : " and the state of \(r.unitStates.map(\.unit).joined(separator: ", "))") in \(path)"
            }
        case .failure(let e):
            current.notice = "not saved: \(e.message)"
        }
    }
}

extension RemoteHub {
    /// A value as a rack file writes it: `true`/`false` for switches, a choice by name,
    /// whole numbers without a fraction, others in the shortest form that reads back the same.
    static func count(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    /// `: a, b, c, …` (the first three targets), or nothing.
    static func names(_ values: [(target: String, value: String)]) -> String {
        values.isEmpty ? "" : ": " + values.prefix(3).map(\.target).joined(separator: ", ") + (values.count > 3 ? ", …" : "")
    }

    static func rackText(_ v: Float, _ spec: ParameterSpec) -> String {
        if spec.unit == .boolean { return v >= 0.5 ? "true" : "false" }
        if spec.unit == .choice, spec.choices.indices.contains(Int(v.rounded())) { return WebProtocol.quote(spec.choices[Int(v.rounded())]) }
        if v == v.rounded(), abs(v) < 1e9 { return String(Int(v)) }
        return "\(v)"
    }
}
