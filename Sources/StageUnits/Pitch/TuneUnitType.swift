import StageCore

/// `tune`: pitch correction of one singer (mono in, mono out) with a fixed 4.5 ms latency.
/// See `TuneUnit` for the method.
///
/// Settings: `source` `scale` (default: the nearest note of `key` and `scale`, default
/// `chromatic`; the key is also a parameter, `unit.key`, that a `midi.map` entry with a
/// `keys` range sets from a played note) or `notes` (the nearest of the notes held on its `channel` and `keys`, in
/// any octave; none held: no correction).
/// Parameters: `speed` (retune time, ms: the correction gets 90 % of the way in that time;
/// 0 snaps at once, the robotic effect), `amount` (% of the correction applied), `humanize`
/// (% of the singer's vibrato kept around the corrected note).
public struct TuneUnitType: UnitType {
    public init() {}
    public var name: String { "tune" }
    public var summary: String { "pitch correction to a scale or the held notes; 4.5 ms latency" }
    public var receivesMIDI: Bool { true }

    public var settings: [SettingSpec] {
        [
            SettingSpec(key: "source", kind: .choice(["scale", "notes"]), help: "correct to the scale, or to the held notes"),
            SettingSpec(key: "key", kind: .custom("a key such as \"C\", \"F#\" or \"Bb\""), help: "key of the scale (default C)"),
            SettingSpec(key: "scale", kind: .choice(HarmonyTheory.scaleNames), help: "scale (default chromatic)"),
        ] + NoteFilter.settingSpecs
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(
                id: "speed", name: "Speed", unit: .generic, range: 0...1000, defaultValue: 20, smoothingSeconds: 0,
                help: "retune time in ms (90 % of the way); 0 snaps hard"),
            ParameterSpec(
                id: "amount", name: "Amount", unit: .percent, range: 0...100, defaultValue: 100, smoothingSeconds: 0.02,
                help: "share of the correction applied"),
            ParameterSpec(
                id: "humanize", name: "Humanize", unit: .percent, range: 0...100, defaultValue: 0, smoothingSeconds: 0.02,
                help: "share of the singer's vibrato kept around the corrected note"),
            .musicalKey(
                defaultKey: (try? TuneConfiguration.parse(settings).get().key) ?? 0,
                help: "key of the scale (the `key` setting is where it starts); a `keys` mapping sets it from a note"),
        ]
    }

    public func check(_ settings: UnitSettings) -> [SettingProblem] {
        switch TuneConfiguration.parse(settings) {
        case .success: return []
        case .failure(let list): return list.problems
        }
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.channels(1)], outputs: [.channels(1)])
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        switch TuneConfiguration.parse(settings) {
        case .success(let c): return TuneUnit(c)
        case .failure(let list): throw UnitError(list.problems.map { "\($0.key): \($0.message)" }.joined(separator: "; "))
        }
    }
}

/// The tune unit's settings, checked. Thread: any (a value).
struct TuneConfiguration: Sendable, Equatable {
    var fromNotes = false
    var notes = NoteFilter()
    /// The scale in `key` (0 = C).
    var scaleMask: UInt16 = 0xFFF
    var key = 0

    static func parse(_ s: UnitSettings) -> Result<TuneConfiguration, SettingsProblemList> {
        var c = TuneConfiguration()
        var problems: [SettingProblem] = []
        if let node = s.node("source") {
            if let t = node.string, t == "scale" || t == "notes" { c.fromNotes = t == "notes" } else {
                problems.append(SettingProblem(key: "source", message: "must be \"scale\" or \"notes\""))
            }
        }
        switch NoteFilter.parse(s) {
        case .success(let f): c.notes = f
        case .failure(let list): problems += list.problems
        }
        var key = 0
        if let node = s.node("key") {
            if let t = node.string, let k = KeyRange.key(t + "4") { key = k % 12 } else {
                problems.append(SettingProblem(key: "key", message: "must be a key such as \"C\", \"F#\" or \"Bb\""))
            }
        }
        c.key = key
        if let mask = HarmonyTheory.scaleMask(s.string("scale") ?? "chromatic", key: key) { c.scaleMask = mask } else {
            problems.append(SettingProblem(key: "scale", message: "must be one of " + HarmonyTheory.scaleNames.joined(separator: ", ")))
        }
        return problems.isEmpty ? .success(c) : .failure(SettingsProblemList(problems: problems))
    }
}
