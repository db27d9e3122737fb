import StageCore

/// The settings of one synth unit, parsed and checked. Thread: any (a value).
public struct SynthConfiguration: Sendable, Equatable {
    /// The `soundfont` setting as written (nil: the default font).
    public var soundfont: String?
    /// Bank and program from the rack (nil: the font's and FluidSynth's defaults). `program`
    /// is FluidSynth's 0-based number, whichever way the rack file counts (`RackFormat`).
    public var bank: Int?
    public var program: Int?
    /// 0-based MIDI channel listened to; nil listens to all 16 (each plays on its own
    /// FluidSynth channel, so a General MIDI file plays with its drums on channel 10).
    public var channel: Int?
    /// Keys (before transposition) that play; others are ignored.
    public var keys: ClosedRange<Int>
    /// Semitones added to every note.
    public var transpose: Int
    public var polyphony: Int

    public init(
        soundfont: String? = nil, bank: Int? = nil, program: Int? = nil, channel: Int? = nil,
        keys: ClosedRange<Int> = 0...127, transpose: Int = 0, polyphony: Int = 256
    ) {
        self.soundfont = soundfont
        self.bank = bank
        self.program = program
        self.channel = channel
        self.keys = keys
        self.transpose = transpose
        self.polyphony = polyphony
    }

    public static let transposeRange = -48...48
    public static let polyphonyRange = 1...256

    /// Parses settings; returns the problems instead when there are any. Thread: any.
    public static func parse(_ settings: UnitSettings) -> Result<SynthConfiguration, SettingsProblems> {
        var c = SynthConfiguration()
        var problems: [SettingProblem] = []
        if let node = settings.node("soundfont") {
            if let s = node.string, !s.isEmpty { c.soundfont = s } else {
                problems.append(SettingProblem(key: "soundfont", message: "must be a file name or path"))
            }
        }
        func integer(_ key: String, _ range: ClosedRange<Int>) -> Int? {
            guard let node = settings.node(key) else { return nil }
            guard let v = node.number, let i = Int(exactly: v), range.contains(i) else {
                problems.append(SettingProblem(key: key, message: "must be an integer \(range.lowerBound)…\(range.upperBound)"))
                return nil
            }
            return i
        }
        c.bank = integer("bank", 0...16383)
        let programs = RackFormat.programRange(settings.rackFormat)
        if settings.node("program") != nil, let written = integer("program", programs) {
            c.program = RackFormat.zeroBasedProgram(written, format: settings.rackFormat)
        } else if settings.rackFormat < RackFormat.current, problems.last?.key == "program" {
            problems[problems.count - 1].message += " (rack format 1 counts programs from 0; format 2 from 1)"
        }
        c.transpose = integer("transpose", transposeRange) ?? 0
        c.polyphony = integer("polyphony", polyphonyRange) ?? 256
        if let node = settings.node("channel") {
            switch parseChannel(node) {
            case .success(let ch): c.channel = ch
            case .failure(let p): problems.append(SettingProblem(key: "channel", message: p.message))
            }
        }
        if let node = settings.node("keys") {
            if let text = node.string, let r = KeyRange.parse(text) {
                c.keys = r
            } else {
                problems.append(
                    SettingProblem(
                        key: "keys",
                        message: "\(node.string.map { "\"\($0)\"" } ?? "this") is not a key range; write it as "
                            + "\"C2..C6\" (note names with # or b and an octave, C4 = 60) or \"36..84\""))
            }
        }
        return problems.isEmpty ? .success(c) : .failure(SettingsProblems(problems: problems))
    }

    /// `1`…`16` (a number or a string) or `"all"`.
    static func parseChannel(_ node: JSONNode) -> Result<Int?, UnitError> {
        if let n = node.number, let i = Int(exactly: n), (1...16).contains(i) { return .success(i - 1) }
        if let s = node.string {
            let t = s.trimmingWhitespace().lowercased()
            if t == "all" || t == "omni" { return .success(nil) }
            if let i = Int(t), (1...16).contains(i) { return .success(i - 1) }
        }
        return .failure(UnitError("must be a MIDI channel 1…16 or \"all\""))
    }
}

/// Problems found in a unit's settings (all at once).
public struct SettingsProblems: Error, Sendable, Equatable {
    public var problems: [SettingProblem]
}

/// Key ranges for splits: `"C2..C6"`, `"F#3..Bb5"`, `"C-1..G9"`, `"36..96"`, or one key.
///
/// Note names: a letter A–G, then any number of `#`/`♯` or `b`/`♭`, then an octave number
/// (may be negative); C4 = 60 (so A4 = 69, C-1 = 0, G9 = 127). Numbers are MIDI key numbers.
/// Both ends are included. Thread: any.
public enum KeyRange {
    /// The range, or nil when the text is not one.
    public static func parse(_ text: String) -> ClosedRange<Int>? {
        let t = text.trimmingWhitespace()
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
        let t = text.trimmingWhitespace()
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
        guard let octave = Int(chars.trimmingWhitespace()), (-2...10).contains(octave), abs(accidental) <= 12 else {
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
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s = s.dropFirst() }
        while let c = s.last, c.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
