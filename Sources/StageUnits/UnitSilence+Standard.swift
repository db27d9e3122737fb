import StageCore

// How each standard unit type behaves in silence (racks/README.md § Silent units).
//
// `sleepsWhenSilent` (EngineSilence: asleep on silence, and skipped while nobody hears them):
// once their inputs and their own output have stayed below −120 dBFS for longer than their
// hold (`silenceHoldFrames`: see each unit), they sleep from the next 64-frame grid point
// until an input comes back; then they are `reset()` (delay lines, tails and detectors
// start from silence, as a fresh unit's do) and render from that frame.
//
// Always running, their output flagged silent by the engine's check when it is:
// - `input` and `output` (the host's; the input's flag is the microphone's silence);
// - `synth`: takes its MIDI every block; with no voice sounding and its effects off it does
//   not call FluidSynth at all and flags its output silent itself (SynthUnit);
// - `player` and `looper`: they take transport commands; a stopped player writes zeros and
//   a stopped or empty looper its dry input, which the engine flags silent when it is, so
//   the units after them sleep;
// - `harmony` and `tune`: declared like `pitch`, but they receive MIDI (notes set the
//   harmony and the target scale), so the engine keeps them running to take their notes;
// - `tuner`: its readout must follow the input even where nobody hears its output (muted,
//   or on a mixer input turned down), and it falls to "no note" by itself on silence;
// - `lv2`: LV2 has no way for a plugin to say it is silent-in/silent-out, and its reset
//   (deactivate/activate) is not real-time safe in general, so a plugin always runs; its
//   output is flagged silent by the check when it writes silence.

extension PitchUnitType { public var silence: UnitSilence { .sleepsWhenSilent } }
extension DelayUnitType { public var silence: UnitSilence { .sleepsWhenSilent } }
extension ReverbUnitType { public var silence: UnitSilence { .sleepsWhenSilent } }
extension GainUnitType { public var silence: UnitSilence { .sleepsWhenSilent } }
extension EQUnitType { public var silence: UnitSilence { .sleepsWhenSilent } }
extension DynamicsUnitType { public var silence: UnitSilence { .sleepsWhenSilent } }
extension DeEsserUnitType { public var silence: UnitSilence { .sleepsWhenSilent } }
extension HarmonyUnitType { public var silence: UnitSilence { .sleepsWhenSilent } }
extension TuneUnitType { public var silence: UnitSilence { .sleepsWhenSilent } }

extension MixerUnitType {
    public var silence: UnitSilence { .sleepsWhenSilent }

    /// Input N is silent when `gainN` or the master `gain` is at −96 dB, or `muteN` is on
    /// (parameter order: gain, then gainN, panN, muteN for each input).
    public func inputGates(_ settings: UnitSettings) -> [InputGate?] {
        (0..<Self.inputCount(settings)).map { b in InputGate(levels: [0, 1 + 3 * b], mutes: [3 + 3 * b]) }
    }
}

// Holds (`RackUnit.silenceHoldFrames`): how long an output may stay below the floor while
// something taken in is still to come out. Others keep the default, twice the latency plus
// the tail (pitch: 2 × 14.5 ms; dynamics: 2 × its look-ahead; eq: its filters' ringing).

extension DelayUnit {
    /// The longest tap (and the crossfade between two taps): an echo still in the line can
    /// be that far behind a silent output. The repeats' decay is measured on the output.
    public func silenceHoldFrames(sampleRate: Double) -> Int { max(tapA, tapB) + crossfadeFrames }
}

extension ReverbUnit {
    /// The last reflection (`maxDelayTime`) plus the longest network line (52 ms scaled) and
    /// the diffusers: the tail itself is continuous, measured on the output.
    public func silenceHoldFrames(sampleRate: Double) -> Int {
        Int(((Double(max(core.pointee.tapHigh, 0))) + 0.06) * sampleRate)
    }
}
