/// A unit whose state lives beyond its parameters and is kept in the rack file under the
/// unit's `"state"` key: an LV2 plugin with `state:interface` (racks/README.md § LV2 state).
/// "Save" from the remote page writes it back (`RenderPlan.savedUnitStates`).
public protocol UnitSavedState: AnyObject {
    /// The unit's `"state"` object as JSON text (its first line unindented, the others as if
    /// the key were at column 0), or nil when it has none to keep. May run while the unit
    /// renders. Thread: control (allocates).
    func savedStateJSON() throws -> String?
}

extension RenderPlan {
    /// Each unit's `"state"` now (units that keep one), in plan order. Thread: control.
    public func savedUnitStates() throws -> [(unit: String, json: String)] {
        var out: [(unit: String, json: String)] = []
        for (i, u) in units.enumerated() {
            if let s = u as? UnitSavedState, let json = try s.savedStateJSON() { out.append((unitIDs[i], json)) }
        }
        return out
    }
}
