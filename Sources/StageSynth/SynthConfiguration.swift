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
        switch NoteFilter.parse(settings) {
        case .success(let filter):
            c.channel = filter.channel
            c.keys = filter.keys
        case .failure(let list): problems += list.problems
        }
        return problems.isEmpty ? .success(c) : .failure(SettingsProblems(problems: problems))
    }
}

/// Problems found in a unit's settings (all at once).
public struct SettingsProblems: Error, Sendable, Equatable {
    public var problems: [SettingProblem]
}

// `KeyRange` lives in StageCore (MIDI/NoteFilter.swift): every unit that takes notes uses it.
