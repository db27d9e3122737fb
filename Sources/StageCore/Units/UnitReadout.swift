/// A unit with read-only values to show beside the meters (`--meters`, `--status`): an LV2
/// plugin's control output ports (a tuner's frequency, a limiter's gain reduction).
///
/// Like `UnitMeter`, read from the control side; the unit's render thread writes the values
/// once per block (a float store, never torn on the machines StageRack runs on).
public protocol UnitReadout: AnyObject {
    /// Each value with its name (`freq_out 440.1`). Thread: any (allocates: not the render thread).
    var readouts: [(name: String, value: Float)] { get }
    /// `unit: …` for a status line, the remote and OSC (default: each value with its name;
    /// the tuner says the note). Thread: any (not render).
    func readoutText(unitID: String) -> String
}

extension UnitReadout {
    /// `unit: name value, name value` for a status line. Thread: any (not render).
    public func readoutText(unitID: String) -> String {
        "\(unitID): " + readouts.map { "\($0.name) \(formatNumber((Double($0.value) * 100).rounded() / 100))" }
            .joined(separator: ", ")
    }
}
