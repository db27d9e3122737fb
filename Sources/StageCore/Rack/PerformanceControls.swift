/// One control of the rack's `performance` section: what the performer view of the page
/// shows as a large labelled fader or toggle. It moves one parameter or a group of them
/// together (one "Harmony" fader for three voices): each target goes to the same position
/// of its own `min…max`. Targets are `unit.param` addresses as MIDI mappings write them
/// (`unit.bypass` included). Thread: any (a value).
public struct PerformanceControlDescription: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// A continuous fader (dB, %, Hz, ...).
        case fader
        /// On/off: switches (`bool` parameters) and bypasses.
        case toggle
        /// One of a list (enumerations): shown as a row of buttons.
        case choice
    }

    public var label: String
    public var targets: [String]
    public var kind: Kind
    /// The fader's two ends in the first target's units; nil: that parameter's range ends.
    /// Every target of a group goes to the same position between its own ends.
    public var min: Float?
    public var max: Float?
    public var location: SourceLocation?

    public init(label: String, targets: [String], kind: Kind, min: Float? = nil, max: Float? = nil, location: SourceLocation? = nil) {
        self.label = label
        self.targets = targets
        self.kind = kind
        self.min = min
        self.max = max
        self.location = location
    }

    /// At most this many controls: what fits a phone held in one hand.
    public static let maxControls = 8
    /// At most this many parameters moved by one control.
    public static let maxTargets = 8
    /// A label's length in characters.
    public static let maxLabel = 24
}

extension RackDescription {
    /// The controls the performer view shows: the rack's `performance` section, or when it
    /// has none a default: one fader per mixer input (its gain, labelled by the unit that
    /// feeds it, looking through strip units such as eq or dynamics to the source), then
    /// the bypass of each time effect (delay, reverb) as a toggle; at most
    /// `PerformanceControlDescription.maxControls`. Thread: any.
    public var performanceControls: [PerformanceControlDescription] {
        if let performance { return performance }
        return defaultPerformance
    }

    /// Unit types that shape a source without being one (looked through when naming a
    /// mixer input by what feeds it).
    static let stripTypes: Set<String> = ["eq", "dynamics", "deesser", "gain", "tune"]
    static let timeEffectTypes: Set<String> = ["delay", "reverb"]

    var defaultPerformance: [PerformanceControlDescription] {
        var out: [PerformanceControlDescription] = []
        for mixer in units where mixer.type == "mixer" {
            let inputs = Swift.min(Swift.max(mixer.settings.int("inputs") ?? 2, 1), 32)
            for n in 1...inputs {
                guard let from = connections.first(where: { $0.to.unit == mixer.id && $0.to.bus == n })?.from.unit else { continue }
                out.append(
                    PerformanceControlDescription(
                        label: Self.title(sourceName(from)), targets: ["\(mixer.id).gain\(n)"], kind: .fader, min: -60, max: 6))
            }
        }
        for unit in units where Self.timeEffectTypes.contains(unit.type) {
            out.append(PerformanceControlDescription(label: Self.title(unit.id), targets: ["\(unit.id).bypass"], kind: .toggle))
        }
        // A time effect's fader and its toggle: the fader is its "level".
        let toggles = Set(out.filter { $0.kind == .toggle }.map(\.label))
        for i in out.indices where out[i].kind == .fader && toggles.contains(out[i].label) { out[i].label += " level" }
        var labels: [String: Int] = [:]
        for i in out.indices {
            labels[out[i].label, default: 0] += 1
            if labels[out[i].label]! > 1 { out[i].label += " \(labels[out[i].label]!)" }
        }
        return Array(out.prefix(PerformanceControlDescription.maxControls))
    }

    /// The unit whose sound arrives through `unit`: strip units are looked through (a
    /// chain of at most 16, so a cycle the compiler will report cannot loop here).
    func sourceName(_ unit: String) -> String {
        var id = unit
        for _ in 0..<16 {
            guard let u = self.unit(id), Self.stripTypes.contains(u.type),
                let up = connections.first(where: { $0.to.unit == id })?.from.unit
            else { break }
            id = up
        }
        return id
    }

    /// "lead_vox" → "Lead vox".
    static func title(_ id: String) -> String {
        let words = id.replacingUnderscores()
        return words.prefix(1).uppercased() + words.dropFirst()
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String { String(map { $0 == "_" ? " " : $0 }) }
}
