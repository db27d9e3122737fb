/// Whether the engine may skip a unit nobody hears (Apple's "output is silence" idea).
/// Opt-in per unit type: a type that says nothing always runs.
public enum UnitSilence: Sendable, Equatable {
    /// Renders every block, heard or not (the default: always safe).
    case alwaysRuns
    /// Skipped while no output can hear it (every path to an output passes a mixer input
    /// that is muted or at −96 dB and has settled there); its output then reads as silence.
    /// It is `reset()` at the frame it is heard again, so it starts from silence as a
    /// fresh unit does, while the mixer's own ramp brings it in (no click). A type that
    /// receives MIDI is never skipped (it keeps taking its events: the engine treats it as
    /// `alwaysRuns`).
    case skipsWhenUnheard
    /// Skipped while nobody hears it (as `skipsWhenUnheard`), and also while it has nothing
    /// to say: once every input has stayed silent and its own output below the silence floor
    /// (−120 dBFS) for longer than its `silenceHoldFrames` (its tail, measured on its
    /// output), it sleeps from the next point of the engine's 64-frame grid, its output
    /// zeros flagged silent, until the first frame an input is above the floor; then it is
    /// `reset()` and renders from that frame (EngineSilence). A type that receives MIDI or
    /// takes commands never sleeps (it must take its events).
    case sleepsWhenSilent

    /// Whether the engine may skip it while nobody hears it.
    public var skipsUnheard: Bool { self != .alwaysRuns }
}

/// What makes one input bus of a unit inaudible at the unit's output: any of these
/// parameters settled at its silent value. The mixer's gate for input N is its `gainN` and
/// master `gain` (decibels, silent at −96 dB or below) and its `muteN` (silent at 1).
public struct InputGate: Sendable, Equatable {
    /// Decibel parameters (indices) that silence the input at −96 dB or below.
    public var levels: [Int]
    /// Toggle parameters (indices) that silence the input at 1.
    public var mutes: [Int]
    public init(levels: [Int], mutes: [Int]) {
        self.levels = levels
        self.mutes = mutes
    }

    /// A level at or below this is silence (`faderGain`).
    public static let silentDecibels: Float = -96
}
