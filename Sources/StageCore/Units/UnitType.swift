/// What role a unit type plays in a graph.
public enum UnitRole: Sendable, Equatable {
    /// Takes inputs, produces outputs.
    case processor
    /// Produces sound from MIDI (the synth); may have no inputs.
    case generator
    /// The microphone: the engine's external input (`--input` file offline).
    case hostInput
    /// The speakers: the engine's external output (the output file offline).
    case hostOutput
}

/// The channel count an input bus wants.
public enum InputFormat: Sendable, Equatable {
    /// Exactly this many; the engine copies mono to stereo and averages stereo to mono.
    case channels(Int)
    /// Whatever the connected source has (1 when nothing is connected).
    case any
}

/// The channel count an output bus has.
public enum OutputFormat: Sendable, Equatable {
    case channels(Int)
    /// As many channels as input bus `bus` (0-based) turned out to have.
    case sameAsInput(Int)
}

/// The buses of one unit instance.
public struct BusLayout: Sendable, Equatable {
    public var inputs: [InputFormat]
    public var outputs: [OutputFormat]
    public init(inputs: [InputFormat], outputs: [OutputFormat]) {
        self.inputs = inputs
        self.outputs = outputs
    }
}

/// The kind of value a unit setting takes (settings configure; parameters move in real time).
public enum SettingKind: Sendable, Equatable {
    case integer(ClosedRange<Int>)
    case number(ClosedRange<Double>)
    case string
    case choice([String])
    /// Checked by the unit type's `check`; the text says what is accepted.
    case custom(String)

    /// What is accepted, for help and messages.
    public var summary: String {
        switch self {
        case .integer(let r): return "integer \(r.lowerBound)…\(r.upperBound)"
        case .number(let r): return "number \(formatNumber(r.lowerBound))…\(formatNumber(r.upperBound))"
        case .string: return "text"
        case .choice(let c): return c.map { "\"\($0)\"" }.joined(separator: " | ")
        case .custom(let s): return s
        }
    }
}

/// A setting key a unit type accepts beside `type` and `params`.
public struct SettingSpec: Sendable, Equatable {
    public var key: String
    public var kind: SettingKind
    public var required: Bool
    public var help: String
    public init(key: String, kind: SettingKind, required: Bool = false, help: String) {
        self.key = key
        self.kind = kind
        self.required = required
        self.help = help
    }
}

/// The settings of one unit in a rack file (every member but `type` and `params`), with
/// where they came from. Thread: control.
public struct UnitSettings: Sendable {
    public var members: [JSONMember]
    /// The folder of the rack file (to find files it names); empty when not from a file.
    public var rackDirectory: String
    /// The rack file's `format` (1 or 2): format 2 counts synth programs 1…128, format 1
    /// 0…127 (see `RackFormat`).
    public var rackFormat: Int

    public init(members: [JSONMember] = [], rackDirectory: String = "", rackFormat: Int = RackFormat.original) {
        self.members = members
        self.rackDirectory = rackDirectory
        self.rackFormat = rackFormat
    }

    public func node(_ key: String) -> JSONNode? { members.first { $0.key == key }?.value }
    public func int(_ key: String) -> Int? { node(key)?.number.flatMap { Int(exactly: $0) } }
    public func double(_ key: String) -> Double? { node(key)?.number }
    public func string(_ key: String) -> String? { node(key)?.string }
}

/// A problem with one setting, found by a unit type's `check`.
public struct SettingProblem: Sendable, Equatable {
    public var key: String
    public var message: String
    public init(key: String, message: String) {
        self.key = key
        self.message = message
    }
}

/// What a unit type may need to know about the engine it is built for.
public struct UnitBuildContext: Sendable {
    public var sampleRate: Double
    /// Channels of the engine's external input (the microphone or the `--input` file).
    public var hostInputChannels: Int
    public init(sampleRate: Double, hostInputChannels: Int) {
        self.sampleRate = sampleRate
        self.hostInputChannels = hostInputChannels
    }
}

/// A kind of unit a rack file can name (`"type": "reverb"`): its settings, parameters,
/// buses, and how to make one. Thread: any (types are immutable descriptions).
public protocol UnitType: Sendable {
    /// The name used in rack files.
    var name: String { get }
    /// One line for `stagerack units`.
    var summary: String { get }
    var role: UnitRole { get }
    /// Setting keys accepted beside `type` and `params`.
    var settings: [SettingSpec] { get }
    /// Whether notes and unmapped controller messages are routed to units of this type.
    var receivesMIDI: Bool { get }

    /// The parameters of a unit with these (already checked) settings.
    func parameters(_ settings: UnitSettings) -> [ParameterSpec]
    /// The buses of a unit with these settings.
    func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout
    /// Checks settings beyond their kinds (ranges that depend on each other, syntax).
    func check(_ settings: UnitSettings) -> [SettingProblem]
    /// Groups of parameters of which a rack's `params` may set at most one (two ways of
    /// saying the same thing, such as the dynamics unit's `ratio` and `headRoom`).
    var exclusiveParameters: [[String]] { get }
    /// A host output unit's device channels (0-based) as its settings name them; nil: the
    /// compiler gives it the lowest free pair.
    func hostChannels(_ settings: UnitSettings) -> [Int]?
    /// Makes a unit. Thread: control. May load files (SoundFonts) and throw.
    func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit
}

extension UnitType {
    public var role: UnitRole { .processor }
    public var settings: [SettingSpec] { [] }
    public var receivesMIDI: Bool { false }
    public func check(_ settings: UnitSettings) -> [SettingProblem] { [] }
    public var exclusiveParameters: [[String]] { [] }
    public func hostChannels(_ settings: UnitSettings) -> [Int]? { nil }
}

/// The unit types a program knows, by name. Thread: any.
public struct UnitRegistry: Sendable {
    public private(set) var types: [any UnitType] = []

    public init(_ types: [any UnitType] = []) {
        for t in types { register(t) }
    }

    public mutating func register(_ type: any UnitType) {
        precondition(self.type(named: type.name) == nil, "unit type \(type.name) registered twice")
        types.append(type)
    }

    public func type(named name: String) -> (any UnitType)? {
        types.first { $0.name == name }
    }

    public var names: [String] { types.map(\.name) }
}
