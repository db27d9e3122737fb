import StageCore

// Which standard unit types the engine may skip while nobody hears them, and the mixer's
// input gates (racks/README.md § Silent units). Each of these is `reset()` when heard
// again: its delay lines, tails and detectors start from silence, as a fresh unit's do.
// Not listed, so always running: `input` and `output` (the host's), and `synth` (FluidSynth's
// voices age on its own clock and it takes its MIDI every block).

extension PitchUnitType { public var silence: UnitSilence { .skipsWhenUnheard } }
extension DelayUnitType { public var silence: UnitSilence { .skipsWhenUnheard } }
extension ReverbUnitType { public var silence: UnitSilence { .skipsWhenUnheard } }
extension GainUnitType { public var silence: UnitSilence { .skipsWhenUnheard } }
extension EQUnitType { public var silence: UnitSilence { .skipsWhenUnheard } }
extension DynamicsUnitType { public var silence: UnitSilence { .skipsWhenUnheard } }
extension DeEsserUnitType { public var silence: UnitSilence { .skipsWhenUnheard } }

extension MixerUnitType {
    public var silence: UnitSilence { .skipsWhenUnheard }

    /// Input N is silent when `gainN` or the master `gain` is at −96 dB, or `muteN` is on
    /// (parameter order: gain, then gainN, panN, muteN for each input).
    public func inputGates(_ settings: UnitSettings) -> [InputGate?] {
        (0..<Self.inputCount(settings)).map { b in InputGate(levels: [0, 1 + 3 * b], mutes: [3 + 3 * b]) }
    }
}
