/// The web page's locks: the PIN (checked in constant time, failures slowed down per source
/// address under a global ceiling), session tokens, the Origin and Host checks against
/// cross-site WebSocket hijacking and DNS rebinding, and a per-client rate limit. Pure logic
/// with the clock passed in, so each rule is tested on its own.
/// Thread: the web server's (one per value).
public struct WebSecurity: Sendable {
    public let pin: String
    /// Failed PIN attempts in a row from one source: after this many, each next attempt from
    /// that source must wait 2^(n − free) seconds, `maxLockSeconds` at most; attempts made
    /// sooner are refused unchecked. Only the source's own success resets its count.
    public static let freeFailures = 3
    /// The longest a source is locked after failures (seconds).
    public static let maxLockSeconds = 60.0
    /// The global ceiling on checked guesses, over all sources together (a token bucket):
    /// at most `guessBurst` at once, then one every `guessRefillSeconds`. One guesser that
    /// obeys its own lock takes at most 9 in its first minute and one a minute after that,
    /// so it never empties the bucket (the singer on another address still logs in); many
    /// addresses together get no faster than one source did before locks were per source.
    public static let guessBurst = 12.0
    public static let guessRefillSeconds = 60.0
    /// Sources remembered at most (the one whose last failure is oldest is forgotten first):
    /// bounds memory against a guesser with many addresses (each still pays the global bucket).
    public static let maxSources = 1024
    /// A source's failures are forgotten this long after its last one (seconds).
    public static let forgetSeconds = 900.0

    struct SourceRecord: Sendable {
        var failures = 0
        var lockedUntil = 0.0
        var lastFailure = 0.0
    }

    var sources: [String: SourceRecord] = [:]
    var guessTokens = WebSecurity.guessBurst
    var guessLast: Double?
    /// Session tokens kept: a login beyond this forgets the oldest (`webSessions`).
    public let maxTokens: Int
    var tokens: [String] = []

    public init(pin: String, maxTokens: Int = 64) {
        self.pin = pin
        self.maxTokens = max(1, maxTokens)
    }

    /// Failed attempts in a row from `source` (0 when none or forgotten).
    public func failures(from source: String) -> Int { sources[source]?.failures ?? 0 }

    /// A random PIN of six digits (for when the config sets none).
    public static func randomPIN() -> String {
        var g = SystemRandomNumberGenerator()
        return String((0..<6).map { _ in Character(String(Int.random(in: 0...9, using: &g))) })
    }

    /// 32 random hex digits.
    public static func randomToken() -> String {
        var g = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef")
        return String((0..<32).map { _ in hex[Int.random(in: 0..<16, using: &g)] })
    }

    /// Equal in time that depends only on the lengths, never on where they differ.
    public static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var diff = UInt8(x.count == y.count ? 0 : 1)
        let n = max(x.count, y.count)
        for i in 0..<n {
            diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0xFF)
        }
        return diff == 0
    }

    public enum LoginResult: Sendable, Equatable {
        case token(String)
        case wrongPIN(waitSeconds: Double)
        /// Refused unchecked: this source is locked.
        case tooSoon(waitSeconds: Double)
        /// Refused unchecked: the global ceiling on checked guesses is reached.
        case tooManyGuesses(waitSeconds: Double)
    }

    /// Checks `attempt` from `source` (an address, or a network for IPv6) at time `now`
    /// (seconds, monotonic); a session token when right. An attempt refused by a lock is
    /// never compared with the PIN.
    public mutating func login(_ attempt: String, from source: String, now: Double) -> LoginResult {
        forgetOld(now: now)
        var record = sources[source] ?? SourceRecord()
        if now < record.lockedUntil { return .tooSoon(waitSeconds: record.lockedUntil - now) }
        if let last = guessLast { guessTokens = min(Self.guessBurst, guessTokens + (now - last) / Self.guessRefillSeconds) }
        guessLast = now
        guard guessTokens >= 1 else { return .tooManyGuesses(waitSeconds: (1 - guessTokens) * Self.guessRefillSeconds) }
        guard Self.constantTimeEqual(attempt, pin) else {
            guessTokens -= 1
            record.failures += 1
            record.lastFailure = now
            let over = record.failures - Self.freeFailures
            let wait = over > 0 ? min(Self.maxLockSeconds, Double(1 << min(over, 6))) : 0
            record.lockedUntil = now + wait
            if sources[source] == nil, sources.count >= Self.maxSources,
                let oldest = sources.min(by: { $0.value.lastFailure < $1.value.lastFailure })?.key {
                sources[oldest] = nil
            }
            sources[source] = record
            return .wrongPIN(waitSeconds: wait)
        }
        sources[source] = nil  // only this source's own success clears its failures
        let t = Self.randomToken()
        tokens.append(t)
        if tokens.count > maxTokens { tokens.removeFirst() }
        return .token(t)
    }

    mutating func forgetOld(now: Double) {
        guard sources.values.contains(where: { now - $0.lastFailure > Self.forgetSeconds }) else { return }
        sources = sources.filter { now - $0.value.lastFailure <= Self.forgetSeconds || now < $0.value.lockedUntil }
    }

    /// Whether `token` was given by a login of this run (constant time per token).
    public func isValid(token: String) -> Bool {
        var found = false
        for t in tokens where Self.constantTimeEqual(t, token) { found = true }
        return found
    }

    /// The longest `Origin` or `Host` read (bytes: a host name is at most 253, with a scheme
    /// and a port this is ample): a longer header refuses the handshake, never reads as absent.
    public static let maxHeaderBytes = 300

    /// Whether a browser's `Origin` names the server it connected to (`Host`): same scheme-
    /// less host and port. A missing Origin (a non-browser client) is let through: the PIN
    /// still guards writing; a browser always sends one.
    public static func originMatches(origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        guard let host, !host.isEmpty else { return false }
        for scheme in ["http://", "https://"] where origin.hasPrefix(scheme) {
            return origin.dropFirst(scheme.count).lowercased() == host.lowercased()
        }
        return false
    }

    /// The `Host` values a request to this server may carry (lower case): each address it
    /// really serves with its port (IPv6 in brackets), and without the port when it is the
    /// scheme's default; `localhost` when it serves loopback; `HOSTNAME` and `HOSTNAME.local`.
    /// A DNS-rebinding page's `evil.example:PORT` is in none of them.
    /// `addresses`: the listen address, or every address of the machine when it listens on all.
    public static func servedHosts(addresses: [String], port: Int, tls: Bool, hostname: String?) -> Set<String> {
        var names: [String] = []
        for a in addresses {
            let bare = a.split(separator: "%").first.map(String.init) ?? a  // no IPv6 zone
            names.append(bare.contains(":") ? "[\(bare)]" : bare)
            if bare == "::1" || bare.hasPrefix("127.") || bare == "0.0.0.0" || bare == "::" { names.append("localhost") }
        }
        if let hostname, !hostname.isEmpty { names += [hostname, hostname + ".local"] }
        var out = Set<String>()
        for n in names.map({ $0.lowercased() }) {
            out.insert("\(n):\(port)")
            if port == (tls ? 443 : 80) { out.insert(n) }
        }
        return out
    }

    /// Whether `host` (the request's `Host`) is one of `served` (a trailing dot aside).
    public static func hostServed(_ host: String?, served: Set<String>) -> Bool {
        guard var h = host?.lowercased(), !h.isEmpty, h.utf8.count <= maxHeaderBytes else { return false }
        if let colon = h.lastIndex(of: ":"), !h.hasSuffix("]"), h[h.index(before: colon)] == "." {
            h.remove(at: h.index(before: colon))
        } else if h.hasSuffix(".") {
            h.removeLast()
        }
        return served.contains(h)
    }
}

/// A token bucket: `rate` messages a second, bursts of `burst`. Thread: one (a value).
public struct RateLimiter: Sendable {
    public let rate: Double
    public let burst: Double
    var level: Double
    var last: Double?

    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        level = burst
    }

    /// True when a message at time `now` is within the limit (and takes its token).
    public mutating func allow(now: Double) -> Bool {
        if let last { level = min(burst, level + (now - last) * rate) }
        last = now
        guard level >= 1 else { return false }
        level -= 1
        return true
    }
}
