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
    /// Makes the MIDI thread look at its inputs now. Thread: any.
    func wake()
}

extension LiveMIDI {
    /// Hands the MIDI thread a new mapper and engine queue (a new plan, after a preset
    /// switch); it switches between two messages, carrying the knobs' positions over
    /// (`MIDIMapper.takeOver`) and sending the new values as feedback. Thread: control.
    public func replaceMapper(_ mapper: MIDIMapper?, events: SPSCQueue<EngineEvent>?) {
        router.replace(mapper, events: events)
        wake()
    }

    /// Tells the current mapper that a parameter changed on the control side (a snapshot
    /// recalled, a UI): its knobs then wait for pickup (`byPreset`) and its feedback goes
    /// out. Never blocks; false when the queue is full. Thread: one control thread.
    @discardableResult
    public func noteParameterMoved(_ address: ParameterAddress, to value: Float, byPreset: Bool) -> Bool {
        let ok = router.notices.push(ParameterNotice(address: address, value: value, byPreset: byPreset))
        wake()
        return ok
    }

    public var monitor: SPSCQueue<MIDIMonitorRecord>? { router.monitor }
    public var actions: SPSCQueue<ControlAction> { router.actions }
    public var messagesReceived: Int { router.messagesReceived }
    public var engineEventsDropped: Int { router.engineEventsDropped }
}
