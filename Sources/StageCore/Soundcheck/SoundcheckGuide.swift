/// The guided soundcheck's take, in time: `quietSeconds` of silence (the room's noise
/// floor; `SoundcheckAnalysis` reads its first 2 s), then `singSeconds` of the singer at
/// show level. What to tell the singer at any point of the take, for the terminal
/// (`stagerack soundcheck` on the live input) and the page (its Soundcheck button).
/// Thread: any (a value).
public struct SoundcheckGuide: Sendable, Equatable {
    public var quietSeconds: Double
    public var singSeconds: Double

    /// The shortest and longest parts the analysis can use: 2 s of floor (and a little
    /// room for the singer to settle), at least 5 s of voice, at most a minute each.
    public static let quietRange = 2.5...60.0
    public static let singRange = 5.0...120.0

    public init(quietSeconds: Double = 3, singSeconds: Double = 20) {
        self.quietSeconds = quietSeconds
        self.singSeconds = singSeconds
    }

    public var totalSeconds: Double { quietSeconds + singSeconds }

    public func totalFrames(sampleRate: Double) -> Int { Int((totalSeconds * sampleRate).rounded()) }

    /// A part of the take and the whole seconds left in it (rounded up).
    public enum Phase: Sendable, Equatable {
        case quiet(secondsLeft: Int)
        case sing(secondsLeft: Int)
        case done

        /// The words for the singer, one short line (a terminal redraws it in place).
        public var instruction: String {
            switch self {
            case .quiet(let left): "stay quiet: \(left) s"
            case .sing(let left): "sing and speak at show level: \(left) s"
            case .done: "done: thank you"
            }
        }
    }

    /// The phase `seconds` into the take.
    public func phase(at seconds: Double) -> Phase {
        if seconds < quietSeconds { return .quiet(secondsLeft: Int((quietSeconds - seconds).rounded(.up))) }
        if seconds < totalSeconds { return .sing(secondsLeft: Int((totalSeconds - seconds).rounded(.up))) }
        return .done
    }
}
