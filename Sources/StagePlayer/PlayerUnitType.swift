import StageCore

/// The unit types of this module, for building a registry.
public enum PlayerUnits {
    public static var types: [any UnitType] { [PlayerUnitType()] }
}

/// The `loop` setting: off, the whole file, or a region of the file's frames.
enum LoopSetting: Equatable {
    case off
    case whole
    /// File frames `start ..< end`.
    case region(Int, Int)
}

/// What `play` does while the track is already playing.
enum TriggerMode: String, CaseIterable {
    /// Starts again from the beginning.
    case oneShot
    /// Keeps playing (the loop repeats until `stop`).
    case loop
    /// Stops (with the fade).
    case toggle
}

/// The player's settings as read from a rack. Thread: control.
struct PlayerSettings {
    var path: String
    var cues: [(name: String, seconds: Double)]
    var loop: LoopSetting
    var trigger: TriggerMode
    var startOnLoad: Bool
    var preloadSeconds: Double
    var bufferSeconds: Double
    /// The song's transpose at load (semitones; 0: none): the file's start is preloaded at it.
    var songTranspose: Int

    static let maximumCues = 32

    init(_ s: UnitSettings) {
        let file = s.string("file") ?? ""
        path = file.hasPrefix("/") || s.rackDirectory.isEmpty ? file : s.rackDirectory + "/" + file
        cues = (s.node("cues")?.members ?? []).compactMap { m in m.value.number.map { (m.key, $0) } }
        trigger = s.string("trigger").flatMap(TriggerMode.init(rawValue:)) ?? .oneShot
        switch s.node("loop")?.value {
        case .bool(true)?: loop = .whole
        case .array(let a)? where a.count == 2:
            loop = .region(Int(a[0].number ?? 0), Int(a[1].number ?? 0))
        default: loop = trigger == .loop ? .whole : .off
        }
        startOnLoad = s.node("startOnLoad")?.bool ?? false
        preloadSeconds = s.double("preload") ?? 2
        bufferSeconds = s.double("buffer") ?? 2
        songTranspose = Int(min(max(s.double(RackDescription.songTransposeKey) ?? 0, -12), 12).rounded())
    }
}

/// `player`: plays a sound file (a backing track) from disk, as Apple's AudioFilePlayer
/// feeds a graph. See racks/README.md, section "Player".
public struct PlayerUnitType: UnitType {
    public init() {}
    public var name: String { "player" }
    public var summary: String { "plays a sound file from disk (backing tracks): cues, loops, transport from MIDI" }
    public var role: UnitRole { .generator }

    public var settings: [SettingSpec] {
        [
            SettingSpec(key: "file", kind: .string, required: true, help: "the sound file (WAV, FLAC, AIFF, OGG, ...), relative to the rack file"),
            SettingSpec(key: "cues", kind: .custom("an object of named positions in seconds, e.g. { \"chorus\": 42.5 }"),
                        help: "named start points (the action \"unit.cue NAME\" plays from one)"),
            SettingSpec(key: "loop", kind: .custom("true, false, or [first frame, end frame] of the file"),
                        help: "repeat the whole file or a region of it (the file's frames; end excluded)"),
            SettingSpec(key: "trigger", kind: .choice(TriggerMode.allCases.map(\.rawValue)),
                        help: "what \"play\" does while playing: oneShot starts again, loop keeps playing (and loops), toggle stops"),
            SettingSpec(key: "startOnLoad", kind: .custom("true or false"), help: "start playing as soon as the rack plays"),
            SettingSpec(key: "preload", kind: .number(0.1...30), help: "seconds of each start point read ahead, so a start is instant (default 2)"),
            SettingSpec(key: "buffer", kind: .number(0.5...60), help: "seconds the disk thread reads ahead while playing (default 2)"),
            SettingSpec(
                key: RackDescription.songTransposeKey, kind: .custom("set by the setlist song"),
                help: "the song's transpose: the file's start is preloaded at that pitch (see \"Transpose\")"),
        ]
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(
                id: "gain", name: "Gain", unit: .decibels, range: -96...12, defaultValue: 0, smoothingSeconds: 0.02,
                help: "the track's level; −96 dB is silence"),
            transposeSpec,
        ]
    }

    /// `transpose`: whole semitones, stepped (a MIDI knob lands on whole values).
    private var transposeSpec: ParameterSpec {
        var spec = ParameterSpec(
            id: "transpose", name: "Transpose", unit: .semitones, range: -12...12, defaultValue: 0, smoothingSeconds: 0,
            help: "the track's pitch in semitones, its tempo kept (librubberband on the disk thread); 0 plays the file untouched")
        spec.wholeNumbers = true
        return spec
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [], outputs: [.channels(2)])
    }

    /// `play`, `stop`, `toggle`, `restart`, then `cue NAME` for each cue.
    public func commands(_ settings: UnitSettings) -> [String] {
        ["play", "stop", "toggle", "restart"] + PlayerSettings(settings).cues.map { "cue \($0.name)" }
    }

    public func check(_ settings: UnitSettings) -> [SettingProblem] {
        var problems: [SettingProblem] = []
        if let c = settings.node("cues") {
            if let members = c.members {
                if members.count > PlayerSettings.maximumCues {
                    problems.append(SettingProblem(key: "cues", message: "at most \(PlayerSettings.maximumCues) cues"))
                }
                for m in members {
                    guard let v = m.value.number, v >= 0, v <= 86400 else {
                        problems.append(SettingProblem(key: "cues", message: "\"\(m.key)\" must be a position in seconds (0…86400)"))
                        continue
                    }
                    if m.key.isEmpty || m.key.contains(" ") {
                        problems.append(SettingProblem(key: "cues", message: "a cue's name is one word, found \"\(m.key)\""))
                    }
                }
            } else {
                problems.append(SettingProblem(key: "cues", message: "must be an object of named positions in seconds, e.g. { \"chorus\": 42.5 }"))
            }
        }
        if let l = settings.node("loop") {
            switch l.value {
            case .bool: break
            case .array(let a) where a.count == 2:
                let first = a[0].number
                let end = a[1].number
                if let first, let end, first >= 0, end > first, end < 1e12, first == first.rounded(), end == end.rounded() {
                    break
                }
                problems.append(SettingProblem(key: "loop", message: "must be [first frame, end frame] with 0 ≤ first < end, whole numbers"))
            default:
                problems.append(SettingProblem(key: "loop", message: "must be true, false, or [first frame, end frame] of the file"))
            }
        }
        if let s = settings.node("startOnLoad"), s.bool == nil {
            problems.append(SettingProblem(key: "startOnLoad", message: "must be true or false"))
        }
        return problems
    }

    /// Opens the file and reads the preloads (control thread), then starts the disk thread.
    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        if let failure = TrackTransposer.libraryFailure { throw UnitError("player: \(failure)") }
        let s = PlayerSettings(settings)
        let reader: TrackReader
        do {
            reader = try TrackReader(path: s.path, engineRate: context.sampleRate, loop: s.loop)
        } catch {
            throw UnitError(error.message)
        }
        if reader.fileFrames > 0 {
            let seconds = Double(reader.fileFrames) / reader.fileRate
            for cue in s.cues where cue.seconds >= seconds {
                throw UnitError(
                    "cues: \"\(cue.name)\" at \(formatNumber(cue.seconds)) s is past the end of \(s.path) "
                        + "(\(formatNumber((seconds * 1000).rounded() / 1000)) s long)")
            }
        }
        let starts = [0] + s.cues.map { reader.fileFrame(seconds: $0.seconds) }
        let stream = TrackStream(
            reader: reader, startFrames: starts, preloadFrames: Int(s.preloadSeconds * context.sampleRate),
            bufferFrames: Int(s.bufferSeconds * context.sampleRate), fadeFrames: max(1, Int(0.01 * context.sampleRate)),
            primedSemitones: s.songTranspose)
        let unit = PlayerUnit(stream: stream, reader: reader, settings: s, sampleRate: context.sampleRate)
        unit.waitsForDisk = !context.realTime
        do { try stream.startThread() } catch { throw UnitError(error.message) }
        return unit
    }
}
