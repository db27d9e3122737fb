/// A player's or looper's transport, as `--status` and `--meters` show it:
/// `track playing 1:23 -2:05` (position, time left), `track stopped 0:00`,
/// `track playing 0:42 (disk late 3)` when the disk was late. Thread: any (a value).
public struct TrackReading: Sendable, Equatable {
    public var unit: String
    public var state: String
    public var position: Double
    public var remaining: Double?
    public var underruns: Int

    public init(unit: String, state: String, position: Double, remaining: Double?, underruns: Int) {
        self.unit = unit
        self.state = state
        self.position = position
        self.remaining = remaining
        self.underruns = underruns
    }

    /// `m:ss` of `seconds` (whole seconds, rounded down).
    public static func clock(_ seconds: Double) -> String {
        let s = max(0, Int(seconds.isFinite ? seconds : 0))
        let rest = s % 60
        return "\(s / 60):\(rest < 10 ? "0" : "")\(rest)"
    }

    public var text: String {
        var t = "\(unit) \(state) \(Self.clock(position))"
        if let remaining { t += " -" + Self.clock(remaining.rounded(.up)) }
        if underruns > 0 { t += " (disk late \(underruns))" }
        return t
    }
}
