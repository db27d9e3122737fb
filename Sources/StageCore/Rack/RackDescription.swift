/// A rack as read from its file and checked: the units, how they connect, MIDI mappings
/// and I/O preferences. Nothing is built yet. Thread: any (a value).
public struct RackDescription: Sendable {
    /// The file it was read from (for messages); empty when made in code.
    public var file: String = ""
    public var name: String = ""
    /// The tempo that tempo-synced units start with, in BPM: `songTempo`, else 120.
    public var tempo: Double = 120
    /// The song's tempo (the setlist song's `tempo`, else the rack's `tempo` key): one of
    /// the rack's tempo sources (`TempoSources`); nil when neither says one.
    public var songTempo: Double?
    /// The setlist song's time signature and sections (`SongTimeline`); none for a rack alone.
    public var timeline = SongTimeline()
    /// The setlist song's lyrics matched to its sections (`SongLyrics`); nil: none.
    public var lyrics: SongLyrics?
    public var units: [UnitDescription] = []
    /// Where the `units` section starts, for errors about the rack as a whole.
    public var unitsLocation: SourceLocation?
    public var connections: [ConnectionDescription] = []
    public var midi = MIDIDescription()
    public var io = IODescription()
    /// Named parameter sets recalled live (morphs, no rebuild).
    public var snapshots: [SnapshotDescription] = []
    /// The `performance` section: the performer view's controls; nil when the file has
    /// none (`performanceControls` then gives a default).
    public var performance: [PerformanceControlDescription]?
    /// The units Talk takes off the voice (`"talk"`); nil: those of `Talk.defaultTypes`.
    public var talk: [String]?
    /// dB the players' `gain` dips by while Talk is on (`"talkDuck"`, −60…0); nil: no dip.
    public var talkDuck: Double?
    /// The file's `format` (see `RackFormat`).
    public var format = RackFormat.current
    /// Things worth saying about a valid rack (how to update a format 1 file), as
    /// diagnostics that do not make the rack invalid.
    public var notes: [RackDiagnostic] = []

    public init() {}

    public func unit(_ id: String) -> UnitDescription? { units.first { $0.id == id } }
}

/// One entry of `units`.
public struct UnitDescription: Sendable {
    public var id: String
    public var type: String
    public var location: SourceLocation?
    public var settings: UnitSettings
    /// Values the rack sets, by parameter id (already checked against the type).
    public var parameterValues: [ParameterValueDescription]
    /// The commands its type offers with these settings (a player's `play`, a looper's
    /// `record`): what the page's transport buttons fire. Set by the reader.
    public var commands: [String] = []

    public init(
        id: String, type: String, location: SourceLocation? = nil, settings: UnitSettings = UnitSettings(),
        parameterValues: [ParameterValueDescription] = []
    ) {
        self.id = id
        self.type = type
        self.location = location
        self.settings = settings
        self.parameterValues = parameterValues
    }
}

public struct ParameterValueDescription: Sendable, Equatable {
    public var id: String
    public var value: Float
    public var location: SourceLocation?
    public init(id: String, value: Float, location: SourceLocation? = nil) {
        self.id = id
        self.value = value
        self.location = location
    }
}

/// One end of a connection: a unit and a bus (1-based, as written in the file).
public struct Endpoint: Sendable, Equatable {
    public var unit: String
    public var bus: Int
    public var location: SourceLocation?
    public init(unit: String, bus: Int = 1, location: SourceLocation? = nil) {
        self.unit = unit
        self.bus = bus
        self.location = location
    }
}

/// `from` (its output bus 1) feeds input bus `to.bus` of `to`.
public struct ConnectionDescription: Sendable, Equatable {
    public var from: Endpoint
    public var to: Endpoint
    public init(from: Endpoint, to: Endpoint) {
        self.from = from
        self.to = to
    }
}

/// The `midi` section.
public struct MIDIDescription: Sendable {
    /// Patterns of sequencer client/port names to connect to (`*` and `?` wildcards).
    /// Empty: every hardware port.
    public var connect: [String] = []
    public var map: [MIDIMappingDescription] = []
    /// Whether MIDI clock sets the tempo (and Start/Stop reach the control side).
    public var clock: Bool = true
    /// What Program Change does; nil: select presets when the rack plays under the preset
    /// switcher (a setlist, `stagerack play`), else pass them to the units.
    public var programs: ProgramRouting?
    /// 1…16: only this channel's Program Change and Bank Select choose presets; nil: any.
    public var programChannel: Int?
    public init() {}
}

/// One entry of `midi.map`: a control (knob, fader, encoder, pad, key) moving a parameter
/// or firing an action.
public struct MIDIMappingDescription: Sendable, Equatable {
    public var source: MIDIControlSource
    /// 14-bit values: a CC pair (MSB `cc`, LSB `cc + 32`) or NRPN/RPN data MSB+LSB.
    public var hires: Bool
    /// 1…16, or nil for every channel.
    public var channel: Int?
    /// `unit.param` (or `unit.bypass`); nil when the mapping fires an `action`.
    public var target: String?
    public var action: MappingAction?
    /// `unit.command` (a player's `play`, `cue intro`): see `UnitCommand`; nil otherwise.
    public var command: String?
    /// The command's index in its unit type's `commands` list.
    public var commandIndex: Int = -1
    /// The values at the control's two ends (off/on for buttons); nil means the
    /// parameter's range ends. `min > max` inverts.
    public var min: Float?
    public var max: Float?
    /// nil means the parameter's natural curve (steps over every choice of an enum).
    public var curve: MappingCurve?
    public var mode: MIDIControlMode
    /// Relative encoders: one step moves `sensitivity / 128` of the knob's travel.
    public var sensitivity: Float
    /// nil: jump, except after a preset change moved the parameter (then pickup).
    public var takeover: TakeoverRule?
    public var button: ButtonBehavior?
    /// Send the value back to the controller on load and on change.
    public var feedback: Bool
    public var location: SourceLocation?
    public var targetLocation: SourceLocation?

    public init(
        source: MIDIControlSource, hires: Bool = false, channel: Int? = nil, target: String? = nil,
        action: MappingAction? = nil, min: Float? = nil, max: Float? = nil, curve: MappingCurve? = nil,
        mode: MIDIControlMode = .absolute, sensitivity: Float = 1, takeover: TakeoverRule? = nil,
        button: ButtonBehavior? = nil, feedback: Bool = false, location: SourceLocation? = nil,
        targetLocation: SourceLocation? = nil
    ) {
        self.source = source
        self.hires = hires
        self.channel = channel
        self.target = target
        self.action = action
        self.min = min
        self.max = max
        self.curve = curve
        self.mode = mode
        self.sensitivity = sensitivity
        self.takeover = takeover
        self.button = button
        self.feedback = feedback
        self.location = location
        self.targetLocation = targetLocation
    }

    /// The classic knob mapping: controller `cc` moves `target`.
    public init(
        cc: Int, channel: Int? = nil, target: String, min: Float? = nil, max: Float? = nil,
        curve: ParameterCurve? = nil
    ) {
        self.init(source: .cc(cc), channel: channel, target: target, min: min, max: max, curve: curve.map(MappingCurve.init))
    }
}

/// The `io` section: what live audio should open (flags override it).
public struct IODescription: Sendable, Equatable {
    public var playback: String?
    public var capture: String?
    public var sampleRate: Double?
    public var period: Int?
    public var periods: Int?
    public init() {}
}
