import StageCore

/// The unit types of this module, for building a registry (the app registers them beside
/// `StandardUnits.types`).
public enum SynthUnits {
    public static var types: [any UnitType] { [SynthUnitType()] }
}

/// `synth`: FluidSynth playing a SoundFont, driven by the notes routed to it. A stereo
/// generator with no inputs.
///
/// Settings: `soundfont`, `bank`, `program`, `channel`, `keys`, `transpose`, `polyphony`
/// (see `settings`). Parameters, in order:
/// - `gain` (dB, −96…+12, default 0, smoothed 20 ms): applied per sample to FluidSynth's
///   output, which runs at FluidSynth's own default gain of 0.2 (−14 dB) so that chords do
///   not clip.
/// - `reverb`, `chorus` (switches, default off): FluidSynth's own effect sends, for racks
///   without their own effects. They switch at FluidSynth's next 64-frame block; turning
///   one off cuts its tail. While either is on, Debian's libfluidsynth allocates once per
///   64-frame block (see `SynthUnit`).
/// - `tune` (cents, −100…+100, default 0, smoothed 50 ms): fine tuning of every channel, to
///   play with an acoustic instrument (A = 442 Hz is +7.85 cents). It sets FluidSynth's
///   channel fine tune, which an incoming RPN 1 also sets: the last one wins. Applied on
///   FluidSynth's 64-frame grid.
/// Thread: any (a description); `make` runs on the control thread and loads the SoundFont.
public struct SynthUnitType: UnitType {
    public let library: SoundFontLibrary

    public init(library: SoundFontLibrary = .shared) { self.library = library }

    public var name: String { "synth" }
    public var summary: String { "FluidSynth playing a SoundFont from MIDI notes (stereo source)" }
    public var role: UnitRole { .generator }
    public var receivesMIDI: Bool { true }

    public var settings: [SettingSpec] {
        [
            SettingSpec(
                key: "soundfont", kind: .string,
                help: "SoundFont file: a path, or a name looked up in the rack's folder, $STAGERACK_SOUNDFONTS, "
                    + "soundfonts/ beside the rack's folder, the installed share folder, the binary's checkout, "
                    + "$XDG_DATA_HOME/soundfonts, /usr/share/sounds/sf2, "
                    + "/usr/share/soundfonts (default: FluidR3_GM.sf2 or TimGM6mb.sf2 if installed, "
                    + "else the bundled stagerack-basic.sf2)"),
            SettingSpec(
                key: "bank", kind: .integer(0...16383),
                help: "preset bank (default 0; 128 for drums when the unit listens to channel 10 only)"),
            SettingSpec(key: "program", kind: .integer(0...127), help: "preset number 0…127 (General MIDI number − 1)"),
            SettingSpec(
                key: "channel", kind: .custom("MIDI channel 1…16 or \"all\""),
                help: "MIDI channel listened to (default \"all\": every channel plays on its own)"),
            SettingSpec(
                key: "keys", kind: .custom("key range such as \"C2..C6\" or \"36..84\" (C4 = 60)"),
                help: "keys that play, for splits (before transposing; default all)"),
            SettingSpec(
                key: "transpose", kind: .integer(SynthConfiguration.transposeRange),
                help: "semitones added to every note"),
            SettingSpec(
                key: "polyphony", kind: .integer(SynthConfiguration.polyphonyRange),
                help: "most voices sounding at once (default 256)"),
        ]
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(
                id: "gain", name: "Gain", unit: .decibels, range: -96...12, defaultValue: 0, smoothingSeconds: 0.02,
                help: "output level; −96 dB is silence"),
            ParameterSpec(
                id: "reverb", name: "FluidSynth reverb", unit: .boolean, range: 0...1, defaultValue: 0,
                smoothingSeconds: 0, help: "FluidSynth's own reverb (off: the rack has its own)"),
            ParameterSpec(
                id: "chorus", name: "FluidSynth chorus", unit: .boolean, range: 0...1, defaultValue: 0,
                smoothingSeconds: 0, help: "FluidSynth's own chorus"),
            ParameterSpec(
                id: "tune", name: "Tune", unit: .cents, range: -100...100, defaultValue: 0, smoothingSeconds: 0.05,
                help: "fine tuning of every channel (A = 442 Hz is +7.85 cents)"),
        ]
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [], outputs: [.channels(2)])
    }

    /// The settings, and whether the SoundFont can be found: a missing font is reported with
    /// the rack's other errors, at its setting (loading it waits for `make`). Thread: control.
    public func check(_ settings: UnitSettings) -> [SettingProblem] {
        switch SynthConfiguration.parse(settings) {
        case .success(let config):
            do {
                _ = try SoundFontSearch(rackDirectory: settings.rackDirectory).resolve(config.soundfont)
                return []
            } catch {
                let text = "\(error)"
                let message = text.hasPrefix("synth: ") ? String(text.dropFirst(7)) : text
                return [SettingProblem(key: "soundfont", message: message)]
            }
        case .failure(let p): return p.problems
        }
    }

    /// Parses the settings, finds and loads the SoundFont (shared through `library`) and
    /// checks that the preset asked for exists. Thread: control.
    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        try makeSynth(settings)
    }

    /// `make` with the concrete type. Thread: control.
    public func makeSynth(_ settings: UnitSettings) throws -> SynthUnit {
        let config: SynthConfiguration
        switch SynthConfiguration.parse(settings) {
        case .success(let c): config = c
        case .failure(let p):
            throw UnitError("synth: " + p.problems.map { "\($0.key): \($0.message)" }.joined(separator: "; "))
        }
        let (font, choice) = try library.load(
            setting: config.soundfont, search: SoundFontSearch(rackDirectory: settings.rackDirectory))
        if config.bank != nil || config.program != nil {
            let bank = SynthUnit.bank(for: config, channel: config.channel ?? 0, font: font)
            let program = config.program ?? 0
            if font.preset(bank: bank, program: program) == nil {
                let some = font.presets.prefix(12).map(\.description).joined(separator: ", ")
                throw UnitError(
                    "synth: \(font.path) has no preset at bank \(bank) program \(program); "
                        + "it has \(counted(font.presets.count, "preset")): \(some)\(font.presets.count > 12 ? ", …" : "")")
            }
        }
        return SynthUnit(configuration: config, soundFont: font, choice: choice)
    }
}
