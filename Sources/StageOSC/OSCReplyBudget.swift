/// How many reply bytes each source may get, so that a spoofed source address cannot turn
/// the server into an amplifier (racks/README.md § Remote control, "OSC"). A source that is
/// not allowed (`allowed: false`) earns twice the bytes it sends and never gets more: at
/// most ×2. An allowed source gets `allowedBytesPerSecond` (bursts of `allowedBurst`): the
/// whole state a few times a second, never a flood. Pure logic with the clock passed in.
/// Thread: the OSC server's (a value).
public struct OSCReplyBudget: Sendable {
    /// A source that is not allowed gets at most this many reply bytes per byte it sent.
    public static let strangerFactor = 2
    /// The most a source that is not allowed may have earned and not yet used (bytes: two of
    /// the largest datagrams taken, doubled).
    public static let strangerCredit = Double(strangerFactor * OSCServer.maxPacket * 2)
    /// Reply bytes a second (and at once) to an allowed source: the default rack's state is
    /// about 3.3 KB, so a dozen or so states a second.
    public static let allowedBytesPerSecond = 48_000.0
    public static let allowedBurst = 64_000.0
    /// Sources tracked at most (the one unused longest is forgotten; a forgotten stranger
    /// starts again from nothing, a forgotten allowed source from a full burst).
    public static let maxSources = 256

    struct Entry: Sendable {
        var credit: Double
        var last: Double
    }

    var entries: [[UInt8]: Entry] = [:]

    public init() {}

    /// A datagram of `bytes` bytes arrived from `source` at `now`.
    public mutating func received(_ bytes: Int, from source: [UInt8], allowed: Bool, now: Double) {
        var e = entry(source, allowed: allowed, now: now)
        if !allowed { e.credit = min(Self.strangerCredit, e.credit + Double(Self.strangerFactor * max(0, bytes))) }
        entries[source] = e
    }

    /// Takes `bytes` from `source`'s budget when they fit (true), else takes nothing (false).
    public mutating func take(_ bytes: Int, to source: [UInt8], allowed: Bool, now: Double) -> Bool {
        var e = entry(source, allowed: allowed, now: now)
        guard Double(bytes) <= e.credit else {
            entries[source] = e
            return false
        }
        e.credit -= Double(bytes)
        entries[source] = e
        return true
    }

    mutating func entry(_ source: [UInt8], allowed: Bool, now: Double) -> Entry {
        if var e = entries[source] {
            if allowed { e.credit = min(Self.allowedBurst, e.credit + (now - e.last) * Self.allowedBytesPerSecond) }
            e.last = now
            return e
        }
        if entries.count >= Self.maxSources, let oldest = entries.min(by: { $0.value.last < $1.value.last })?.key {
            entries[oldest] = nil
        }
        return Entry(credit: allowed ? Self.allowedBurst : 0, last: now)
    }
}
