/// A change for the render thread: a parameter target, a MIDI message for a unit, a
/// tempo. Plain value, fixed size, sent through an `SPSCQueue`. Thread: any (a value).
@frozen
public struct EngineEvent: Sendable, BitwiseCopyable {
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// Set parameter `parameter` of unit `unit` to `value` (in the parameter's units).
        case parameter
        /// Deliver `message` to unit `unit`.
        case midi
        /// Tempo source `parameter` (`TempoSource`) gives `value` BPM (0 withdraws it); the
        /// rack's tempo is the first source that gives one (`TempoSources`).
        case tempo
        /// Reset every unit (silence all tails).
        case resetAll
        /// Set the bypass of unit `unit` to `value` (0 in use … 1 bypassed), smoothed.
        case bypass
        /// Jump to the next section of the song (`parameter` 1) or repeat the current one (2)
        /// at the next bar line after `sampleTime` (`SongClock`, `SectionJump`).
        case section
        /// Talk on, off or toggled (`parameter`: `TalkChange`), decided by the engine's one
        /// Talk state (`TalkSwitch`).
        case talk
        /// The song's transpose by `parameter` semitones (+1 or −1), at the next section or
        /// at once (`SongTranspose`); with `value` 1, to `parameter` semitones in all, at
        /// once (a sync follower taking its leader's); with `unit` `sectionAtBeat`, to
        /// `parameter` in all on the bar line at song beat `value` (a leader's, told).
        case transpose
        /// Recall the rack's snapshot number `parameter` on a bar line of the song's clock
        /// (`HeldSnapshots`): the first at or after `sampleTime`, or, when `unit` is
        /// `sectionAtBeat`, the one at song beat `value` (a sync leader's).
        case snapshot
    }

    public var kind: Kind
    /// Absolute engine frame at which it applies; anything not after the current block's
    /// start applies at frame 0 of the next block (`EngineEvent.now`).
    public var sampleTime: Int64
    public var unit: Int32
    public var parameter: Int32
    public var value: Float
    public var message: MIDIMessage
    /// For `.parameter`: ramp over this many frames instead of the parameter's own
    /// smoothing time (snapshot morphs); −1 uses the parameter's smoothing.
    public var rampFrames: Int32
    /// The plan the unit and parameter indices refer to (`RenderPlan.generation`); 0 means
    /// whichever plan is playing. A rack player drops events meant for a plan it no longer plays.
    public var generation: UInt32

    /// Apply as soon as possible.
    public static let now: Int64 = .min

    @inlinable
    public init(kind: Kind, sampleTime: Int64, unit: Int32 = 0, parameter: Int32 = 0, value: Float = 0,
                message: MIDIMessage = MIDIMessage(status: 0), rampFrames: Int32 = -1, generation: UInt32 = 0) {
        self.kind = kind
        self.rampFrames = rampFrames
        self.generation = generation
        self.sampleTime = sampleTime
        self.unit = unit
        self.parameter = parameter
        self.value = value
        self.message = message
    }

    /// A parameter change; `ParameterAddress.bypassIndex` makes it a `.bypass` event.
    @inlinable
    public static func setParameter(_ address: ParameterAddress, _ value: Float, at time: Int64 = now) -> EngineEvent {
        EngineEvent(
            kind: address.parameter == ParameterAddress.bypassIndex ? .bypass : .parameter, sampleTime: time,
            unit: Int32(address.unit), parameter: Int32(address.parameter), value: value)
    }

    @inlinable
    public static func midi(_ message: MIDIMessage, toUnit unit: Int, at time: Int64 = now) -> EngineEvent {
        EngineEvent(kind: .midi, sampleTime: time, unit: Int32(unit), message: message)
    }

    /// A section jump (`SongClock`): it takes effect at the first bar line at or after `time`.
    @inlinable
    public static func section(_ jump: SectionJump, at time: Int64 = now) -> EngineEvent {
        EngineEvent(kind: .section, sampleTime: time, parameter: jump.rawValue)
    }

    /// A section jump for the bar line at song beat `bar` (a sync leader's), or the first
    /// after `time` if that has passed (`SongClock`): `unit` is `sectionAtBeat`.
    @inlinable
    public static func section(_ jump: SectionJump, atBar bar: Int, at time: Int64 = now) -> EngineEvent {
        EngineEvent(kind: .section, sampleTime: time, unit: sectionAtBeat, parameter: jump.rawValue, value: Float(bar))
    }

    /// A snapshot recall held for the next bar line at or after `time` (`HeldSnapshots`).
    @inlinable
    public static func snapshot(_ index: Int, at time: Int64 = now) -> EngineEvent {
        EngineEvent(kind: .snapshot, sampleTime: time, parameter: Int32(index))
    }

    /// A snapshot recall held for the bar line at song beat `bar` (a sync leader's), or the
    /// first after `time` if that has passed (`HeldSnapshots`).
    @inlinable
    public static func snapshot(_ index: Int, atBar bar: Int, at time: Int64 = now) -> EngineEvent {
        EngineEvent(kind: .snapshot, sampleTime: time, unit: sectionAtBeat, parameter: Int32(index), value: Float(bar))
    }

    /// `unit` of a `.section` or `.snapshot` event whose `value` is the song beat of its bar line.
    public static let sectionAtBeat: Int32 = 1

    /// Talk on, off or toggled, decided by the engine's one Talk state (`TalkSwitch`).
    @inlinable
    public static func talk(_ change: TalkChange, at time: Int64 = now) -> EngineEvent {
        EngineEvent(kind: .talk, sampleTime: time, parameter: change.rawValue)
    }

    /// The song a semitone up (+1) or down (−1) (`SongTranspose`).
    @inlinable
    public static func transpose(_ semitones: Int32, at time: Int64 = now) -> EngineEvent {
        EngineEvent(kind: .transpose, sampleTime: time, parameter: semitones)
    }

    /// The song's transpose to `semitones` in all (its own counted), at once whatever
    /// `transposeAt` says: a sync follower taking its leader's (`SongTranspose`).
    @inlinable
    public static func transpose(to semitones: Int32, at time: Int64 = now) -> EngineEvent {
        EngineEvent(kind: .transpose, sampleTime: time, parameter: semitones, value: 1)
    }

    /// The song's transpose to `semitones` in all on the bar line at song beat `bar` (a
    /// sync leader's, told), or the first after `time` if that has passed (`SongTranspose`).
    @inlinable
    public static func transpose(to semitones: Int32, atBar bar: Int, at time: Int64 = now) -> EngineEvent {
        EngineEvent(kind: .transpose, sampleTime: time, unit: sectionAtBeat, parameter: semitones, value: Float(bar))
    }

    @inlinable
    public static func tempo(_ bpm: Double, source: TempoSource, at time: Int64 = now) -> EngineEvent {
        EngineEvent(kind: .tempo, sampleTime: time, parameter: source.rawValue, value: Float(bpm))
    }
}

/// Where a parameter lives in a compiled plan: unit index and parameter index.
@frozen
public struct ParameterAddress: Sendable, Hashable, BitwiseCopyable {
    public var unit: Int
    public var parameter: Int
    /// The `parameter` index that names the engine's bypass of the unit (`unit.bypass`).
    public static let bypassIndex = -1
    @inlinable
    public init(unit: Int, parameter: Int) {
        self.unit = unit
        self.parameter = parameter
    }
}
