/// Refuses replayed messages: from one sender's session, only a sequence number above the
/// last one taken; a new session (the sender restarted) replaces the current one, and a
/// session replaced once is never taken again (an old run's messages replayed later).
/// (A box that restarts forgets the sessions it saw: a replay of an earlier run of the
/// leader is then taken once, until the leader's next message retires it.)
/// Thread: the sync thread (a value).
public struct SyncReplayWindow: Sendable {
    /// Sessions replaced, remembered at most (the oldest forgotten first).
    public static let retiredLimit = 64
    public private(set) var session: String?
    public private(set) var lastSequence: UInt64 = 0
    var retired: [String] = []

    public init() {}

    public enum Verdict: Sendable, Equatable {
        case accepted
        /// A new session: the sender restarted (`previous` nil: the first one heard).
        case newSession(previous: String?)
        case replayed(last: UInt64)
        case retiredSession
    }

    /// Whether (`session`, `sequence`) is new; taking it moves the window.
    public mutating func take(session: String, sequence: UInt64) -> Verdict {
        if session == self.session {
            guard sequence > lastSequence else { return .replayed(last: lastSequence) }
            lastSequence = sequence
            return .accepted
        }
        if retired.contains(session) { return .retiredSession }
        let previous = self.session
        if let previous {
            retired.append(previous)
            if retired.count > Self.retiredLimit { retired.removeFirst() }
        }
        self.session = session
        lastSequence = sequence
        return .newSession(previous: previous)
    }
}
