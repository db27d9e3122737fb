/// The vocabulary of `midi.map` entries, shared by the rack description (what the file
/// says) and the mapper (what it does). Each raw value is the word used in rack files.
/// Thread: any (values).

/// What a mapping listens to.
public enum MIDIControlSource: Sendable, Equatable, Hashable {
    /// Control change `n` (0…127). With `hires`, controllers 0…31 pair with `n + 32` as LSB.
    case cc(Int)
    /// Non-registered parameter number 0…16383 (CC 99/98 select, CC 6/38 data, 96/97 step).
    case nrpn(Int)
    /// Registered parameter number 0…16383 (CC 101/100 select, data as for NRPN).
    case rpn(Int)
    /// A key: note-on is a press, note-off (or velocity 0) a release.
    case note(Int)
    /// A range of keys whose notes set a key parameter to the played note's pitch class
    /// (`ParameterSpec.isMusicalKey`); their notes are taken, on and off.
    case keys(ClosedRange<Int>)

    /// The rack-file key that names this kind of source.
    public var key: String {
        switch self {
        case .cc: return "cc"
        case .nrpn: return "nrpn"
        case .rpn: return "rpn"
        case .note: return "note"
        case .keys: return "keys"
        }
    }

    public var number: Int {
        switch self {
        case .cc(let n), .nrpn(let n), .rpn(let n), .note(let n): return n
        case .keys(let r): return r.lowerBound
        }
    }

    /// `CC7`, `CC1+33` (14-bit), `NRPN 1234`, `RPN 0`, `Note 36`, `Notes 36…47`.
    public func label(hires: Bool) -> String {
        switch self {
        case .cc(let n): return hires ? "CC\(n)+\(n + 32)" : "CC\(n)"
        case .nrpn(let n): return "NRPN \(n)"
        case .rpn(let n): return "RPN \(n)"
        case .note(let n): return "Note \(n)"
        case .keys(let r): return "Notes \(r.lowerBound)…\(r.upperBound)"
        }
    }
}

/// How a controller's value is read.
public enum MIDIControlMode: String, Sendable, CaseIterable {
    /// The value is the knob's position.
    case absolute
    /// Two's complement steps: 1…63 up, 127…64 down (−1…−64).
    case relativeTwos = "relative-twos"
    /// Sign and magnitude: 1…63 up, 65…127 down (−1…−63); bit 6 is the sign.
    case relativeSignbit = "relative-signbit"
    /// Offset binary: 64 is no motion, 65…127 up (+1…+63), 63…0 down (−1…−64).
    case relativeOffset = "relative-offset"

    public var isRelative: Bool { self != .absolute }

    /// The signed step count a relative encoder's 7-bit value stands for (0 for `absolute`).
    @inlinable
    public func steps(_ value: Int) -> Int {
        let v = value & 127
        switch self {
        case .absolute: return 0
        case .relativeTwos: return v < 64 ? v : v - 128
        case .relativeSignbit: return v & 64 != 0 ? -(v & 63) : v & 63
        case .relativeOffset: return v - 64
        }
    }
}

/// What an absolute control does when its position and the parameter's value disagree
/// (after a preset change, another controller, or at load).
public enum TakeoverRule: String, Sendable, CaseIterable {
    /// The parameter jumps to the knob.
    case jump
    /// The knob is ignored until it reaches (or crosses) the parameter's value.
    case pickup
    /// The parameter moves proportionally toward the end the knob moves to, so both
    /// arrive together; then the knob has it.
    case scale
}

/// How a switch-like control (a pad, a button that sends 127/0) acts.
public enum ButtonBehavior: String, Sendable, CaseIterable {
    /// Each press flips between `min` (off) and `max` (on).
    case toggle
    /// `max` while held, `min` when released.
    case momentary
    /// Each press fires the mapping's `action`, or sets its parameter to `max`.
    case trigger
}

/// An action of the rack itself that a trigger fires.
public enum MappingAction: String, Sendable, CaseIterable {
    /// One tap of tap tempo: the tempo is the average interval of the last taps.
    case tapTempo = "tap-tempo"
    case nextPreset = "next-preset"
    case previousPreset = "previous-preset"
    /// Talk on, then off at the next press: the rack's colouring units off the voice, tails
    /// ringing out (`Talk`).
    case talk
    /// The song's next section, or the current one again (a vamp), from the next bar line
    /// (`SongClock`).
    case nextSection = "next-section"
    case repeatSection = "repeat-section"
    /// The song a semitone up or down, at the next section or at once (`SongTranspose`).
    case transposeUp = "transpose-up"
    case transposeDown = "transpose-down"
}

/// How a knob's position 0…1 maps onto the parameter's values.
public enum MappingCurve: Sendable, Equatable {
    case linear
    /// Equal ratios (needs values above 0).
    case log
    /// Slow start, fast end.
    case exp
    /// The knob's travel split into equal zones, one per value, in list order.
    case steps([Float])

    public init(_ curve: ParameterCurve) {
        switch curve {
        case .linear: self = .linear
        case .log: self = .log
        case .exp: self = .exp
        }
    }

    public var name: String {
        switch self {
        case .linear: return "linear"
        case .log: return "log"
        case .exp: return "exp"
        case .steps: return "steps"
        }
    }
}

/// What Program Change messages do.
public enum ProgramRouting: String, Sendable, CaseIterable {
    /// Select a preset (with the last Bank Select, CC 0/32, of the same channel).
    case presets
    /// Pass them to the units that play MIDI (the synth changes instrument).
    case units
    /// Drop them.
    case ignore
}
