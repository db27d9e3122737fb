/// Refusals logged without flooding the log: the first of a class at once, the next ones of
/// that class counted and logged at most once every `interval` seconds with their count (a
/// stranger's flood costs one line a minute per class). The servers give each line a level.
/// Thread: one (a value; each server has its own).
public struct RefusalLog: Sendable {
    /// Seconds between two lines of one class, at least.
    public static let interval = 60.0
    /// Classes kept at most (a fixed set in practice: the servers name them in code).
    public static let maxClasses = 64

    struct Entry: Sendable {
        var lastLogged: Double
        var unlogged = 0
        var lastText = ""
    }

    var entries: [String: Entry] = [:]

    public init() {}

    /// A refusal of class `kind` (`text` says what) at `now`: the line to log now, or nil when
    /// one of this class was logged less than `interval` ago (then it is counted).
    public mutating func note(_ kind: String, _ text: String, now: Double) -> String? {
        if var e = entries[kind] {
            guard now - e.lastLogged >= Self.interval else {
                e.unlogged += 1
                e.lastText = text
                entries[kind] = e
                return nil
            }
            let extra = e.unlogged
            entries[kind] = Entry(lastLogged: now)
            return extra > 0 ? "\(text) (and \(extra) more like it in the last \(Int(now - e.lastLogged)) s)" : text
        }
        guard entries.count < Self.maxClasses else { return nil }
        entries[kind] = Entry(lastLogged: now)
        return text
    }

    /// The counts of classes whose `interval` has passed with refusals not yet logged: one
    /// line each (the last refusal's text and the count). Call it now and then.
    public mutating func flush(now: Double) -> [String] {
        var out: [String] = []
        for (kind, e) in entries where e.unlogged > 0 && now - e.lastLogged >= Self.interval {
            out.append("\(e.unlogged) refused in the last \(Int(now - e.lastLogged)) s, the last: \(e.lastText)")
            entries[kind] = Entry(lastLogged: now)
        }
        return out.sorted()
    }
}
