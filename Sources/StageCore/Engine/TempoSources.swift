/// Where the rack's tempo comes from, highest precedence first (racks/README.md,
/// "Tempo"): MIDI clock while it runs, then the Link session while it has peers (`play
/// --link`: a tempo the band shares), then tap tempo, then the song's tempo (the setlist
/// song's `tempo`, else the rack's own `tempo` key), then the looper's first loop. (The raw
/// values are the events' wire values, not the order.)
public enum TempoSource: Int32, Sendable, CaseIterable, BitwiseCopyable {
    case clock = 0
    case tap = 1
    case song = 2
    case loop = 3
    case link = 4

    public var name: String {
        switch self {
        case .clock: return "MIDI clock"
        case .tap: return "tap tempo"
        case .song: return "song"
        case .loop: return "first loop"
        case .link: return "Link"
        }
    }
}

/// The tempo each source last gave (0: that source gives none), and the one that decides:
/// the first set in `TempoSource` order; 120 BPM when none is. Plain value, no
/// allocation. Thread: render (the engine's copy).
public struct TempoSources: Sendable, Equatable {
    /// The tempo when no source gives one.
    public static let fallback = 120.0
    public private(set) var clock = 0.0
    public private(set) var link = 0.0
    public private(set) var tap = 0.0
    public private(set) var song = 0.0
    public private(set) var loop = 0.0

    public init(song: Double? = nil) { self.song = Self.valid(song ?? 0) }

    static func valid(_ bpm: Double) -> Double { bpm.isFinite && bpm > 0 ? min(max(bpm, 20), 400) : 0 }

    /// Sets what `source` says; 0 (or anything not a tempo) withdraws it.
    public mutating func set(_ source: TempoSource, _ bpm: Double) {
        let v = Self.valid(bpm)
        switch source {
        case .clock: clock = v
        case .link: link = v
        case .tap: tap = v
        case .song: song = v
        case .loop: loop = v
        }
    }

    public func value(_ source: TempoSource) -> Double {
        switch source {
        case .clock: return clock
        case .link: return link
        case .tap: return tap
        case .song: return song
        case .loop: return loop
        }
    }

    /// The source that decides the tempo, nil when none gives one.
    public var winner: TempoSource? {
        if clock > 0 { return .clock }
        if link > 0 { return .link }
        if tap > 0 { return .tap }
        if song > 0 { return .song }
        if loop > 0 { return .loop }
        return nil
    }

    /// The rack's tempo in BPM. (Not `winner.map(value)`: that boxes a partial application
    /// of `value`, one heap allocation a call, on the render thread.)
    public var tempo: Double {
        guard let source = winner else { return Self.fallback }
        return value(source)
    }
}

/// A unit that can give the rack a tempo (the looper's first loop), read by the engine after
/// each block the unit renders; 0 gives none. Thread: render.
public protocol UnitTempoReporter: AnyObject {
    var reportedTempo: Double { get }
    /// Beats in the unit's bar (the looper's `beatsPerBar`): the rack's bar, which a shared
    /// session's phase is kept to (`RenderEngine.beatsPerBar`). Thread: any (a setting).
    var beatsPerBar: Int { get }
}
