/// A unit that reports a read-only level for meters: the dynamics units' gain reduction.
///
/// The parameter system has no read-only parameters yet; until it has, a meter display
/// (`--meters`, `--status`) can find these units in a plan and read `meterValue` from the
/// control side. The unit stores it once per block with a relaxed atomic.
public protocol UnitMeter: AnyObject {
    /// What the value is, for a meter's label (e.g. "gain reduction").
    var meterName: String { get }
    /// The latest value (for gain reduction: dB, ≥ 0, the most of the last block).
    /// Thread: any.
    var meterValue: Float { get }
}
