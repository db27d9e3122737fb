import StageCore

/// `harmony`: up to four harmony voices from one singer (mono in, stereo out), led by the
/// keys, a chord, a key and scale, or fixed intervals. See `HarmonyUnit` for the method.
///
/// Settings:
/// - `voices` 1…4 (default 2).
/// - `source`: `notes` (each voice sings a held note), `chord` (voices take chord tones
///   around the sung melody, by `positionN`), `scale` (diatonic intervals in `key` and
///   `scale`), `intervals` (fixed semitones). Default `notes`.
/// - `channel`, `keys`: the notes it takes (`NoteFilter`, as the synth: a note that both a
///   synth and a harmony unit take reaches both, a layer; disjoint `keys` make a split).
/// - `key` (`C`, `F#`, `Bb`…) and `scale` (`HarmonyTheory.scales`), for `scale` mode. The
///   key is also a parameter (`unit.key`, starting at the setting), so a `midi.map` entry
///   with a `keys` range sets it from a played note (and snapshots and the remote can).
/// - `intervals`: a list, one per voice: semitones in `intervals` mode; interval numbers
///   within the scale in `scale` mode (`3` a third above, `-3` below, `5`, `8`, `1`).
/// - `position1`…`position4`: `above`, `below`, `above2`, `below2` (chord mode).
/// - `tuning`: `equal` or `just` (thirds and fifths pure against the chord's root: the
///   lowest held note; in scale mode against the key).
/// - `hold`: true latches the last chord when the keys are released; `holdRelease` (ms, 0 =
///   until the next chord) lets it go after that time.
/// - `attack`, `release` (ms): a voice fades in over `attack` when its note or chord starts
///   and out over `release` when no note is held (notes and chord modes).
/// - `alignLead`: true delays the lead (the dry voice) by the voices' latency, for
///   recordings; default false (the lead adds no latency).
public struct HarmonyUnitType: UnitType {
    public init() {}
    public var name: String { "harmony" }
    public var summary: String {
        "up to 4 harmony voices from the keys, a chord, a key/scale or intervals (PSOLA, keeps formants); stereo out"
    }
    public var receivesMIDI: Bool { true }
    public static let maxVoices = 4
    public static let positions = ["above", "below", "above2", "below2"]
    public static let sources = ["notes", "chord", "scale", "intervals"]

    public var settings: [SettingSpec] {
        [
            SettingSpec(key: "voices", kind: .integer(1...Self.maxVoices), help: "harmony voices (default 2)"),
            SettingSpec(
                key: "source", kind: .choice(Self.sources),
                help: "what the voices sing: held notes, chord tones, scale intervals, fixed intervals"),
            SettingSpec(key: "key", kind: .custom("a key such as \"C\", \"F#\" or \"Bb\""), help: "key of scale mode"),
            SettingSpec(key: "scale", kind: .choice(HarmonyTheory.scaleNames), help: "scale of scale mode"),
            SettingSpec(
                key: "intervals", kind: .custom("a list of numbers, one per voice"),
                help: "semitones (intervals mode) or interval numbers in the scale (scale mode: 3, 5, -3, 8)"),
            SettingSpec(key: "tuning", kind: .choice(["equal", "just"]), help: "just: pure thirds and fifths"),
            SettingSpec(key: "hold", kind: .custom("true or false"), help: "latch the last chord"),
            SettingSpec(key: "holdRelease", kind: .number(0...60000), help: "ms a latched chord lasts (0: until the next)"),
            SettingSpec(key: "attack", kind: .number(0...5000), help: "ms a voice fades in (notes, chord; default 10)"),
            SettingSpec(key: "release", kind: .number(0...10000), help: "ms voices fade out with no notes held (default 200)"),
            SettingSpec(key: "alignLead", kind: .custom("true or false"), help: "delay the lead to sit with the voices"),
        ] + NoteFilter.settingSpecs
            + (1...Self.maxVoices).map {
                SettingSpec(key: "position\($0)", kind: .choice(Self.positions), help: "chord mode: where voice \($0) sings")
            }
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        let config = (try? HarmonyConfiguration.parse(settings).get()) ?? HarmonyConfiguration()
        let voices = config.voices
        var specs = [
            ParameterSpec(
                id: "leadLevel", name: "Lead level", unit: .decibels, range: -96...12, defaultValue: 0,
                smoothingSeconds: 0.02, help: "the dry voice, centred (−96 = off)"),
            ParameterSpec(
                id: "formant", name: "Formant", unit: .semitones, range: -12...12, defaultValue: 0,
                smoothingSeconds: 0.05, help: "semitones the voices' formants move (0 keeps the singer's)"),
            ParameterSpec(
                id: "glide", name: "Glide", unit: .generic, range: 0...2000, defaultValue: 0, smoothingSeconds: 0,
                help: "ms a voice takes to move to a new note"),
        ]
        for v in 1...voices {
            specs += [
                ParameterSpec(
                    id: "voiceLevel\(v)", name: "Voice \(v) level", unit: .decibels, range: -96...12, defaultValue: -3,
                    smoothingSeconds: 0.02, help: "level of harmony voice \(v) (−96 = off)"),
                ParameterSpec(
                    id: "pan\(v)", name: "Voice \(v) pan", unit: .pan, range: -1...1,
                    defaultValue: Self.defaultPan(voice: v, of: voices), smoothingSeconds: 0.02,
                    help: "−1 left … +1 right (constant power, as the mixer)"),
                ParameterSpec(
                    id: "detune\(v)", name: "Voice \(v) detune", unit: .cents, range: -50...50, defaultValue: 0,
                    smoothingSeconds: 0.05, help: "cents off the target, to humanise"),
            ]
        }
        // Last (HarmonyParameter.key): set from a played note by a `keys` mapping.
        specs.append(
            .musicalKey(defaultKey: config.key, help: "key of scale mode (the `key` setting is where it starts); a `keys` mapping sets it from a note"))
        return specs
    }

    /// Voices spread across the stereo field by default.
    static func defaultPan(voice: Int, of count: Int) -> Float {
        count == 1 ? 0 : -0.6 + 1.2 * Float(voice - 1) / Float(count - 1)
    }

    public func check(_ settings: UnitSettings) -> [SettingProblem] {
        switch HarmonyConfiguration.parse(settings) {
        case .success: return []
        case .failure(let list): return list.problems
        }
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.channels(1)], outputs: [.channels(2)])
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        switch HarmonyConfiguration.parse(settings) {
        case .success(let c): return HarmonyUnit(c)
        case .failure(let list): throw UnitError(list.problems.map { "\($0.key): \($0.message)" }.joined(separator: "; "))
        }
    }
}

/// The harmony unit's settings, checked. Thread: any (a value).
struct HarmonyConfiguration: Sendable, Equatable {
    enum Source: Int, Sendable { case notes, chord, scale, intervals }
    var voices = 2
    var source = Source.notes
    var notes = NoteFilter()
    var key = 0
    var scaleMask: UInt16 = HarmonyTheory.scaleMask("major", key: 0)!
    /// Semitones (intervals mode) or scale steps (scale mode), per voice.
    var intervals: [Int] = []
    /// Per voice: 0 above, 1 below, 2 above2, 3 below2.
    var positions: [Int] = [0, 1, 2, 3]
    var just = false
    var hold = false
    var holdReleaseMs = 0.0
    var attackMs = 10.0
    var releaseMs = 200.0
    var alignLead = false

    static func parse(_ s: UnitSettings) -> Result<HarmonyConfiguration, SettingsProblemList> {
        var c = HarmonyConfiguration()
        var problems: [SettingProblem] = []
        func fail(_ key: String, _ message: String) { problems.append(SettingProblem(key: key, message: message)) }
        if s.node("voices") != nil {
            if let v = s.int("voices"), (1...HarmonyUnitType.maxVoices).contains(v) { c.voices = v } else {
                fail("voices", "must be an integer 1…\(HarmonyUnitType.maxVoices)")
            }
        }
        if let node = s.node("source") {
            if let t = node.string, let i = HarmonyUnitType.sources.firstIndex(of: t) { c.source = Source(rawValue: i)! } else {
                fail("source", "must be one of " + HarmonyUnitType.sources.map { "\"\($0)\"" }.joined(separator: " | "))
            }
        }
        switch NoteFilter.parse(s) {
        case .success(let f): c.notes = f
        case .failure(let list): problems += list.problems
        }
        if let node = s.node("key") {
            if let t = node.string, let k = KeyRange.key(t + "4") { c.key = k % 12 } else {
                fail("key", "must be a key such as \"C\", \"F#\" or \"Bb\"")
            }
        }
        let scaleName = s.string("scale") ?? "major"
        if let mask = HarmonyTheory.scaleMask(scaleName, key: c.key) { c.scaleMask = mask } else {
            fail("scale", "must be one of " + HarmonyTheory.scaleNames.joined(separator: ", "))
        }
        let defaults = c.source == .scale ? [3, -3, 5, 8] : [4, 7, -5, 12]
        var written = defaults
        if let node = s.node("intervals") {
            let numbers = node.elements?.compactMap { $0.number.flatMap { Int(exactly: $0) } } ?? []
            if node.elements == nil || numbers.count != node.elements!.count || numbers.isEmpty
                || numbers.contains(where: { abs($0) > 24 })
            {
                fail("intervals", "must be a list of whole numbers −24…24, one per voice, such as [3, -3]")
            } else {
                written = numbers + defaults.dropFirst(numbers.count)
            }
        }
        c.intervals = written.map { c.source == .scale ? HarmonyTheory.scaleSteps(interval: $0) : $0 }
        for v in 1...HarmonyUnitType.maxVoices {
            guard let node = s.node("position\(v)") else { continue }
            if let t = node.string, let i = HarmonyUnitType.positions.firstIndex(of: t) { c.positions[v - 1] = i } else {
                fail("position\(v)", "must be one of \"above\", \"below\", \"above2\", \"below2\"")
            }
        }
        if let t = s.node("tuning") {
            if let v = t.string, v == "equal" || v == "just" { c.just = v == "just" } else { fail("tuning", "must be \"equal\" or \"just\"") }
        }
        func flag(_ key: String) -> Bool {
            guard let node = s.node(key) else { return false }
            if let b = node.bool { return b }
            fail(key, "must be true or false")
            return false
        }
        c.hold = flag("hold")
        c.alignLead = flag("alignLead")
        func ms(_ key: String, _ range: ClosedRange<Double>, _ value: inout Double) {
            guard let node = s.node(key) else { return }
            if let v = node.number, range.contains(v) { value = v } else {
                fail(key, "must be a number of ms \(Int(range.lowerBound))…\(Int(range.upperBound))")
            }
        }
        ms("holdRelease", 0...60000, &c.holdReleaseMs)
        ms("attack", 0...5000, &c.attackMs)
        ms("release", 0...10000, &c.releaseMs)
        return problems.isEmpty ? .success(c) : .failure(SettingsProblemList(problems: problems))
    }
}
