import StageCore

/// `tuner`: a chromatic tuner for a guitar, bass, keyboard or voice (mono in, the same signal
/// out, no latency). It shows the note and its deviation in cents beside the meters
/// (`play --status`, the remote's `"readouts"`, OSC `/stagerack/readout`); see `TunerUnit`
/// for the method. Within 0.5 cent on a steady tone from 40 Hz to 2 kHz, settled in under
/// 200 ms (TunerTests).
///
/// Parameters: `reference` (the A above middle C in Hz, 410…470, default 440) and `mute`
/// (the output silent while tuning, as a pedal tuner's; off by default). No settings.
public struct TunerUnitType: UnitType {
    public init() {}
    public var name: String { "tuner" }
    public var summary: String { "chromatic tuner: the note and its cents shown with the meters; sound passes through" }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(
                id: "reference", name: "Reference", unit: .hertz, range: 410...470, defaultValue: 440, smoothingSeconds: 0,
                help: "frequency of A4 the cents are counted from"),
            .toggle(id: "mute", name: "Mute", defaultOn: false, help: "silence the output while tuning"),
        ]
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.channels(1)], outputs: [.channels(1)])
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { TunerUnit() }
}
