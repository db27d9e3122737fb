/// Which notes a unit that plays from the keys takes: a MIDI channel (or all) and a key
/// range, from the `channel` and `keys` settings of a rack file.
///
/// This is the one place where note routing by channel and key range is defined. The MIDI
/// layer sends notes to every unit whose type `receivesMIDI` (`MIDIMapper`, in the order of
/// the plan); each such unit keeps only the notes its filter passes. So a note on a
/// channel and key that two units take reaches both: a layer (a `synth` and a `harmony`
/// unit on the same keys sound together), and a split is two units with disjoint `keys`.
/// Units using it: `synth` (StageSynth), `harmony` (StageUnits). Thread: any (a value).
public struct NoteFilter: Sendable, Equatable {
    /// 0-based MIDI channel, or nil for every channel.
    public var channel: Int?
    public var keys: ClosedRange<Int>

    public init(channel: Int? = nil, keys: ClosedRange<Int> = 0...127) {
        self.channel = channel
        self.keys = keys
    }

    /// Whether a note message on `channel` (0-based) for `key` passes.
    @inline(__always)
    public func takes(channel c: Int, key: Int) -> Bool {
        (channel == nil || channel == c) && keys.contains(key)
    }

    /// The `channel` and `keys` setting specs, for a unit type's `settings`.
    public static let settingSpecs: [SettingSpec] = [
        SettingSpec(
            key: "channel", kind: .custom("MIDI channel 1…16 or \"all\""),
            help: "MIDI channel whose notes it takes (default \"all\")"),
        SettingSpec(
            key: "keys", kind: .custom("key range such as \"C2..C6\" or \"36..84\" (C4 = 60)"),
            help: "keys it takes, for splits and layers (default all)"),
    ]

    /// The filter a unit's settings give, or the problems with `channel` and `keys`.
    public static func parse(_ settings: UnitSettings) -> Result<NoteFilter, SettingsProblemList> {
        var filter = NoteFilter()
        var problems: [SettingProblem] = []
        if let node = settings.node("channel") {
            switch parseChannel(node) {
            case .success(let ch): filter.channel = ch
            case .failure(let p): problems.append(SettingProblem(key: "channel", message: p.message))
            }
        }
        if let node = settings.node("keys") {
            if let text = node.string, let r = KeyRange.parse(text) {
                filter.keys = r
            } else {
                problems.append(
                    SettingProblem(
                        key: "keys",
                        message: "\(node.string.map { "\"\($0)\"" } ?? "this") is not a key range; write it as "
                            + "\"C2..C6\" (note names with # or b and an octave, C4 = 60) or \"36..84\""))
            }
        }
        return problems.isEmpty ? .success(filter) : .failure(SettingsProblemList(problems: problems))
    }

    /// `1`…`16` (a number or a string) or `"all"`.
    public static func parseChannel(_ node: JSONNode) -> Result<Int?, UnitError> {
        if let n = node.number, let i = Int(exactly: n), (1...16).contains(i) { return .success(i - 1) }
        if let s = node.string {
            let t = s.noteFilterTrimmed().lowercased()
            if t == "all" || t == "omni" { return .success(nil) }
            if let i = Int(t), (1...16).contains(i) { return .success(i - 1) }
        }
        return .failure(UnitError("must be a MIDI channel 1…16 or \"all\""))
    }
}

/// Problems found with some settings (all at once).
public struct SettingsProblemList: Error, Sendable, Equatable {
    public var problems: [SettingProblem]
    public init(problems: [SettingProblem]) { self.problems = problems }
}

/// Key ranges for splits: `"C2..C6"`, `"F#3..Bb5"`, `"C-1..G9"`, `"36..96"`, or one key.
///
/// Note names: a letter A–G, then any number of `#`/`♯` or `b`/`♭`, then an octave number
/// (may be negative); C4 = 60 (so A4 = 69, C-1 = 0, G9 = 127). Numbers are MIDI key numbers.
/// Both ends are included. Thread: any.
public enum KeyRange {
    /// The range, or nil when the text is not one.
    public static func parse(_ text: String) -> ClosedRange<Int>? {
        let t = text.noteFilterTrimmed()
        let parts: [String]
        if let r = t.firstRange(of: "..") {
            parts = [String(t[..<r.lowerBound]), String(t[r.upperBound...])]
        } else if let r = t.firstRange(of: "…") {
            parts = [String(t[..<r.lowerBound]), String(t[r.upperBound...])]
        } else {
            parts = [t, t]
        }
        guard parts.count == 2, let lo = key(parts[0]), let hi = key(parts[1]), lo <= hi else { return nil }
        return lo...hi
    }

    /// One key: a MIDI number 0…127 or a note name with octave.
    public static func key(_ text: String) -> Int? {
        let t = text.noteFilterTrimmed()
        if let n = Int(t) { return (0...127).contains(n) ? n : nil }
        var chars = Substring(t)
        guard let letter = chars.first?.uppercased() else { return nil }
        let base: Int
        switch letter {
        case "C": base = 0
        case "D": base = 2
        case "E": base = 4
        case "F": base = 5
        case "G": base = 7
        case "A": base = 9
        case "B": base = 11
        default: return nil
        }
        chars = chars.dropFirst()
        var accidental = 0
        while let c = chars.first, c == "#" || c == "♯" || c == "b" || c == "♭" {
            accidental += (c == "#" || c == "♯") ? 1 : -1
            chars = chars.dropFirst()
        }
        // -1…9 are MIDI's octaves; a longer number (which could overflow) is no key.
        guard let octave = Int(chars.noteFilterTrimmed()), (-2...10).contains(octave), abs(accidental) <= 12 else {
            return nil
        }
        let k = 12 * (octave + 1) + base + accidental
        return (0...127).contains(k) ? k : nil
    }

    /// The name of MIDI key `key` with sharps, e.g. 61 → "C#4".
    public static func name(_ key: Int) -> String {
        let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
        return names[((key % 12) + 12) % 12] + String(key / 12 - 1)
    }
}

extension StringProtocol {
    fileprivate func noteFilterTrimmed() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s = s.dropFirst() }
        while let c = s.last, c.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
