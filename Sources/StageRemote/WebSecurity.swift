/// The web page's locks: the PIN (checked in constant time, failures slowed down), session
/// tokens, the Origin check against cross-site WebSocket hijacking, and a per-client rate
/// limit. Pure logic with the clock passed in, so each rule is tested on its own.
/// Thread: the web server's (one per value).
public struct WebSecurity: Sendable {
    public let pin: String
    /// Failed PIN attempts in a row (any client): after `freeFailures`, each next attempt
    /// must wait 2^(n − free) seconds, 60 at most; attempts made sooner are refused unchecked.
    public private(set) var failures = 0
    public private(set) var lockedUntil = 0.0
    public static let freeFailures = 3
    /// Session tokens kept: a login beyond this forgets the oldest (`webSessions`).
    public let maxTokens: Int
    var tokens: [String] = []

    public init(pin: String, maxTokens: Int = 64) {
        self.pin = pin
        self.maxTokens = max(1, maxTokens)
    }

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
        case tooSoon(waitSeconds: Double)
    }

    /// Checks `attempt` at time `now` (seconds, monotonic); a session token when right.
    public mutating func login(_ attempt: String, now: Double) -> LoginResult {
        if now < lockedUntil { return .tooSoon(waitSeconds: lockedUntil - now) }
        guard Self.constantTimeEqual(attempt, pin) else {
            failures += 1
            let wait = failures > Self.freeFailures ? min(60, Double(1 << min(failures - Self.freeFailures, 6))) : 0
            lockedUntil = now + wait
            return .wrongPIN(waitSeconds: wait)
        }
        failures = 0
        let t = Self.randomToken()
        tokens.append(t)
        if tokens.count > maxTokens { tokens.removeFirst() }
        return .token(t)
    }

    /// Whether `token` was given by a login of this run (constant time per token).
    public func isValid(token: String) -> Bool {
        var found = false
        for t in tokens where Self.constantTimeEqual(t, token) { found = true }
        return found
    }

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
