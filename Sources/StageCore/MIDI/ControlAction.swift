/// A request for the control side that is not an engine event: preset changes and the
/// transport. The MIDI thread pushes these into `MIDIMapper.actions` (an SPSC queue, never
/// blocking); the control thread pops them and acts (the preset layer loads the preset).
/// Plain value, fixed size. Thread: any (a value).
@frozen
public struct ControlAction: Sendable, Equatable, BitwiseCopyable, CustomStringConvertible {
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// Program Change: select preset `program` (0…127) of bank `bank` (0…16383, or −1
        /// when no Bank Select came before it on that channel).
        case selectPreset
        /// A trigger mapped to `next-preset` / `previous-preset` fired.
        case nextPreset
        case previousPreset
        /// MIDI Start / Continue / Stop arrived (the clock's transport).
        case transportStart
        case transportContinue
        case transportStop
    }

    public var kind: Kind
    public var program: Int16
    public var bank: Int16
    /// 0-based channel of the message that caused it (0 for system messages).
    public var channel: Int8

    @inlinable
    public init(kind: Kind, program: Int = 0, bank: Int = -1, channel: Int = 0) {
        self.kind = kind
        self.program = Int16(truncatingIfNeeded: program)
        self.bank = Int16(truncatingIfNeeded: bank)
        self.channel = Int8(truncatingIfNeeded: channel)
    }

    public var description: String {
        switch kind {
        case .selectPreset:
            return bank >= 0 ? "select preset \(program) bank \(bank)" : "select preset \(program)"
        case .nextPreset: return "next preset"
        case .previousPreset: return "previous preset"
        case .transportStart: return "start"
        case .transportContinue: return "continue"
        case .transportStop: return "stop"
        }
    }
}

/// A parameter value that changed outside the mapper (a preset was loaded, a UI moved it),
/// on its way to the MIDI thread. Thread: any (a value).
@frozen
public struct ParameterNotice: Sendable, BitwiseCopyable {
    public var address: ParameterAddress
    public var value: Float
    /// True when a preset change moved it: mappings without an explicit `takeover` then
    /// wait for pickup.
    public var byPreset: Bool

    @inlinable
    public init(address: ParameterAddress, value: Float, byPreset: Bool) {
        self.address = address
        self.value = value
        self.byPreset = byPreset
    }
}
