/// A parameter (or a unit's bypass, `ParameterAddress.bypassIndex`) that a MIDI control
/// moved, for the control side's parameter state (`RemoteHub`): what the render thread was
/// told, in the plan `generation` the address refers to. Plain value, sent through an
/// `SPSCQueue` (producer: the MIDI thread; consumer: the control thread). Thread: any.
@frozen
public struct ParameterChange: Sendable, BitwiseCopyable {
    public var address: ParameterAddress
    public var value: Float
    public var generation: UInt32

    @inlinable
    public init(address: ParameterAddress, value: Float, generation: UInt32) {
        self.address = address
        self.value = value
        self.generation = generation
    }
}
