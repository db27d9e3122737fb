/// Refuses replayed messages: each sender's run (its session id, random at each start) is
/// remembered with the last sequence number taken from it, and a message is taken only with
/// a higher one. A session not heard before is taken (the sender started or restarted).
/// A box that restarts forgets what it heard: a replay of an earlier run of the leader is
/// then taken once, and the leader's next state (every second) puts this box back.
/// Thread: the sync thread (a value).
public struct SyncReplayWindow: Sendable {
    /// Sessions remembered at most (the one heard least recently forgotten first).
    public static let sessionLimit = 64
    var last: [String: UInt64] = [:]
    var order: [String] = []
    /// The session taken most recently (the leader's current run, on a follower).
    public private(set) var current: String?

    public init() {}

    public enum Verdict: Sendable, Equatable {
        case accepted
        /// A session not heard before (`first`: the first of all).
        case newSession(first: Bool)
        case replayed(last: UInt64)
    }

    /// Whether (`session`, `sequence`) is new; taking it moves the window.
    public mutating func take(session: String, sequence: UInt64) -> Verdict {
        if let previous = last[session] {
            guard sequence > previous else { return .replayed(last: previous) }
            last[session] = sequence
            current = session
            return .accepted
        }
        let first = last.isEmpty
        last[session] = sequence
        order.append(session)
        if order.count > Self.sessionLimit { last[order.removeFirst()] = nil }
        current = session
        return .newSession(first: first)
    }
}
