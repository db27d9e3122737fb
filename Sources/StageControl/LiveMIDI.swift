import StageCore

/// What `play` needs of its live MIDI input: the sequencer client (`MIDIInput`), or for
/// tests on a machine without `/dev/snd/seq` a pipe of raw MIDI bytes (`MIDIPipeInput`).
/// Both hand every message to a `MIDIRouter` on a MIDI thread of their own.
/// Thread: as `MIDIInput` says (control for the set-up and notices, any for `wake`).
public protocol LiveMIDI: AnyObject, Sendable {
    var router: MIDIRouter { get }
    /// How to reach it, for the log (`StageRack:in (128:0)`).
    var inputName: String { get }
    var inputOverruns: Int { get }
    func start() throws
    func stop()
    func replaceMapper(_ mapper: MIDIMapper?, events: SPSCQueue<EngineEvent>?)
    @discardableResult
    func noteParameterMoved(_ address: ParameterAddress, to value: Float, byPreset: Bool) -> Bool
    func takeLog() -> [String]
}

extension LiveMIDI {
    public var monitor: SPSCQueue<MIDIMonitorRecord>? { router.monitor }
    public var actions: SPSCQueue<ControlAction> { router.actions }
    public var messagesReceived: Int { router.messagesReceived }
    public var engineEventsDropped: Int { router.engineEventsDropped }
}
