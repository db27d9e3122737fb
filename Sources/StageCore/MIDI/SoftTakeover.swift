/// Soft takeover: what an absolute knob does to a parameter it is out of step with.
/// Positions are normalized 0…1 along the mapping's curve. Thread: any (pure functions).
public enum SoftTakeover {
    /// The outcome of one knob move.
    public struct Step: Equatable, Sendable {
        /// The parameter's new position, or nil to leave it where it is.
        public var position: Float?
        /// True once the knob has the parameter (later moves just follow the knob).
        public var caughtUp: Bool
        public init(position: Float?, caughtUp: Bool) {
            self.position = position
            self.caughtUp = caughtUp
        }
    }

    /// Applies `rule` to a knob moving from `from` (nil when its last position is unknown)
    /// to `to`, while the parameter sits at `parameter`.
    ///
    /// - jump: the parameter goes to the knob.
    /// - pickup: nothing happens until the knob comes within `tolerance` of the parameter
    ///   or crosses it between two messages; from then on it follows.
    /// - scale: the parameter moves toward the end the knob moves to, in proportion to the
    ///   travel left on each side (`p += (to − from)·(1 − p)/(1 − from)` going up,
    ///   `p −= (from − to)·p/from` going down), so knob and parameter reach the end
    ///   together; where they meet or cross, the knob has it.
    public static func step(
        _ rule: TakeoverRule, from: Float?, to: Float, parameter p: Float, tolerance: Float
    ) -> Step {
        if rule == .jump || abs(to - p) <= tolerance { return Step(position: to, caughtUp: true) }
        guard let from else { return Step(position: nil, caughtUp: false) }
        switch rule {
        case .jump:
            return Step(position: to, caughtUp: true)
        case .pickup:
            if min(from, to) - tolerance <= p && p <= max(from, to) + tolerance {
                return Step(position: to, caughtUp: true)
            }
            return Step(position: nil, caughtUp: false)
        case .scale:
            var q = p
            if to > from {
                if from < 1 { q = p + (to - from) * (1 - p) / (1 - from) }
            } else if to < from {
                if from > 0 { q = p - (from - to) * p / from }
            } else {
                return Step(position: nil, caughtUp: false)
            }
            q = min(max(q, 0), 1)
            // Met or crossed: the parameter was on one side of the knob and is now on the other.
            if (p - from) * (q - to) <= 0 || abs(q - to) <= tolerance { return Step(position: to, caughtUp: true) }
            return Step(position: q, caughtUp: false)
        }
    }
}
