import StageCore

/// The pure-Swift unit types of this module, for building a registry.
public enum StandardUnits {
    public static var types: [any UnitType] {
        [
            InputUnitType(), OutputUnitType(), GainUnitType(), MixerUnitType(), ClickUnitType(),
            DelayUnitType(), ReverbUnitType(), PitchUnitType(), EQUnitType(), DynamicsUnitType(),
            DeEsserUnitType(),
            HarmonyUnitType(),
            TuneUnitType(),
            TunerUnitType(),
            FeedbackUnitType(),
            LooperUnitType(),
        ]
    }
}
