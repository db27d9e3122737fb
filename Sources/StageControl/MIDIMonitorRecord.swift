import StageCore

/// One message as the MIDI thread saw it, for monitors: what came in, from where, and
/// what the mapper made of it (one record per outcome). Thread: any (a value).
@frozen
public struct MIDIMonitorRecord: Sendable, BitwiseCopyable {
    public var message: MIDIMessage
    /// Monotonic seconds at arrival.
    public var seconds: Double
    /// The sending port, or −1 for outcomes of time passing (a 14-bit half completed).
    public var sourceClient: Int16
    public var sourcePort: Int16
    public var outcome: MappingOutcome
    /// False for the second and later outcomes of the same message.
    public var isFirst: Bool
}
