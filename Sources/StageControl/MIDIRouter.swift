import StageCore
import Synchronization

/// The MIDI thread's work once a message is decoded, apart from ALSA: schedule it on the
/// audio clock, map it, and push the engine events straight into the rack player's queue.
/// `MIDIInput` runs one on its thread; the live stress test drives one from a flood thread.
///
/// - Scheduling: a message arriving at CLOCK_MONOTONIC time t plays at the player frame
///   `clock.scheduledFrame(t)` (t on the audio clock plus one period: a constant latency,
///   no block-boundary jitter). Frames never go backwards from one message to the next.
/// - Queues (this thread is the one producer of each, whatever mapper is current):
///   `events` (consumer: the render thread), `actions` (consumer: the control thread),
///   `monitor` (consumer: the control thread, for meters and monitors). It consumes
///   `notices` (producer: the control thread). The mapper's own `feedback` queue is
///   produced and consumed on this thread.
///
/// Thread: everything on the MIDI thread, except `replace` (any thread: a mailbox taken at
/// the next message) and the counters (any thread).
public final class MIDIRouter: @unchecked Sendable {
    /// Preset selection and transport. Producer: the MIDI thread. Consumer: the control thread.
    public let actions = SPSCQueue<ControlAction>(minimumCapacity: 256)
    /// Parameter changes made on the control side. Producer: the control thread. Consumer:
    /// the MIDI thread.
    public let notices = SPSCQueue<ParameterNotice>(minimumCapacity: 4096)
    /// What came in and what it did, for monitors. Producer: the MIDI thread. Consumer: one
    /// control thread.
    public let monitor: SPSCQueue<MIDIMonitorRecord>?
    /// Parameters and bypasses the mapped controls moved, for the control side's parameter
    /// state (the remote). Producer: the MIDI thread. Consumer: the control thread. nil
    /// unless asked for (`reportParameterChanges`) before the MIDI thread starts.
    public private(set) var parameterChanges: SPSCQueue<ParameterChange>?
    /// Every message as it came in while `learnArmed`, for MIDI learn from the remote page.
    /// Producer: the MIDI thread. Consumer: the control thread. nil unless asked for
    /// (`reportMessagesForLearning`) before the MIDI thread starts.
    public private(set) var learnMessages: SPSCQueue<TimedMIDIMessage>?
    /// Set by the control thread while a page is learning a control. Thread: any.
    public let learnArmed = Atomic<Bool>(false)
    /// Parameter changes lost because `parameterChanges` was full.
    public var parameterChangesDropped: Int { droppedChanges.load(ordering: .relaxed) }
    let droppedChanges = Atomic<Int>(0)

    // Counters (any thread may read).
    public var messagesReceived: Int { received.load(ordering: .relaxed) }
    /// Engine events lost because the player's queue was full (sized so it never is: the
    /// render thread takes everything due each period).
    public var engineEventsDropped: Int { dropped.load(ordering: .relaxed) }
    /// Actions (program changes, transport) lost because the control thread's queue was full.
    public var actionsDropped: Int { droppedActions.load(ordering: .relaxed) }
    /// Engine events pushed into the player's queue.
    public var engineEventsSent: Int { sent.load(ordering: .relaxed) }
    let received = Atomic<Int>(0)
    let sent = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let droppedActions = Atomic<Int>(0)

    // MIDI thread state.
    public private(set) var mapper: MIDIMapper?
    var events: SPSCQueue<EngineEvent>?
    var clock: AudioClock?
    var lastFrame: Int64 = .min
    var source: (Int16, Int16) = (-1, -1)
    /// Feedback must be sent for every mapping (a new mapper, a reconnected controller).
    public var needsInitialFeedback = true
    /// Called on the MIDI thread after a message queued an action (wakes the control
    /// thread). Set before the MIDI thread starts.
    public var onAction: (@Sendable () -> Void)?

    // Control → MIDI thread: the next mapper (a preset switch).
    let swap = Locked<(MIDIMapper?, SPSCQueue<EngineEvent>?)?>(nil)
    let swapPending = Atomic<Bool>(false)

    /// `events`: the player's queue (nil: events are dropped, as in a bare monitor);
    /// `clock`: the audio clock live events are scheduled on (nil: they apply at the next
    /// block, `EngineEvent.now`). Thread: control, before the MIDI thread starts.
    public init(mapper: MIDIMapper?, events: SPSCQueue<EngineEvent>?, clock: AudioClock?, monitor: Bool) {
        self.events = events
        self.clock = clock
        self.monitor = monitor ? SPSCQueue(minimumCapacity: 8192) : nil
        if let mapper { adopt(mapper) }
    }

    /// Makes the MIDI thread also report every parameter and bypass it moves
    /// (`parameterChanges`). Thread: control, before the MIDI thread starts.
    public func reportParameterChanges() {
        if parameterChanges == nil { parameterChanges = SPSCQueue(minimumCapacity: 8192) }
    }

    /// Makes the MIDI thread copy every message into `learnMessages` while `learnArmed`.
    /// Thread: control, before the MIDI thread starts.
    public func reportMessagesForLearning() {
        if learnMessages == nil { learnMessages = SPSCQueue(minimumCapacity: 1024) }
    }

    /// Hands the MIDI thread a new mapper and queue (a new plan after a preset switch); the
    /// MIDI thread takes it before its next message, carrying the knobs' positions over.
    /// Thread: the control thread.
    public func replace(_ mapper: MIDIMapper?, events: SPSCQueue<EngineEvent>?) {
        swap.withLock { $0 = (mapper, events) }
        swapPending.store(true, ordering: .releasing)
    }

    /// Takes a mapper waiting in the mailbox. Thread: MIDI.
    public func takeReplacement() {
        guard swapPending.exchange(false, ordering: .acquiringAndReleasing) else { return }
        guard let (m, e) = swap.withLock({ s -> (MIDIMapper?, SPSCQueue<EngineEvent>?)? in
            let v = s
            s = nil
            return v
        }) else { return }
        if let old = mapper, let m { m.takeOver(from: old) }  // knobs wait for pickup
        if let m { adopt(m) } else { mapper = nil }
        events = e
        needsInitialFeedback = true
    }

    /// The mapper sends its actions and reads its notices through this router's queues, so
    /// they outlive it (no queue chained to another). Thread: MIDI (or control before start).
    func adopt(_ m: MIDIMapper) {
        m.useQueues(actions: actions, notices: notices)
        mapper = m
    }

    /// One decoded message from port `source`, arrived at CLOCK_MONOTONIC `nanoseconds`.
    /// Never allocates. Thread: MIDI.
    public func handle(_ message: MIDIMessage, arrivalNanoseconds nanoseconds: UInt64, source: (Int16, Int16) = (-1, -1)) {
        received.add(1, ordering: .relaxed)
        let seconds = Double(nanoseconds) / 1e9
        if let learnMessages, learnArmed.load(ordering: .relaxed) {
            _ = learnMessages.push(TimedMIDIMessage(message: message, seconds: seconds))  // full: learning has enough
        }
        self.source = source
        guard let mapper else {
            if let monitor {
                _ = monitor.push(
                    MIDIMonitorRecord(message: message, seconds: seconds, sourceClient: source.0, sourcePort: source.1,
                                      outcome: .ignored, isFirst: true))
            }
            return
        }
        var frame = clock?.scheduledFrame(arrivalNanoseconds: nanoseconds) ?? EngineEvent.now
        if frame != EngineEvent.now {
            frame = max(frame, lastFrame)
            lastFrame = frame
        }
        let actionsBefore = mapper.droppedOutputs
        mapper.handle(message, at: frame, seconds: seconds) { push($0) }
        if mapper.droppedOutputs != actionsBefore { droppedActions.add(mapper.droppedOutputs - actionsBefore, ordering: .relaxed) }
        record(message, seconds: seconds, count: mapper.outcomeCount)
        if let onAction, (0..<mapper.outcomeCount).contains(where: { mapper.outcome($0).kind == .action }) { onAction() }
    }

    /// Lets time pass: notices from the control side, 14-bit halves whose partner did not
    /// come. Thread: MIDI.
    public func poll(nanoseconds: UInt64) {
        guard let mapper else {
            while notices.pop() != nil {}
            return
        }
        let count = mapper.poll(seconds: Double(nanoseconds) / 1e9) { push($0) }
        if count > 0 {
            source = (-1, -1)
            record(MIDIMessage(status: 0), seconds: Double(nanoseconds) / 1e9, count: count)
        }
    }

    /// When `poll` next has something to do, on the monotonic clock in seconds.
    public var nextDeadline: Double? { mapper?.nextDeadline }

    /// Hands every feedback message waiting to `send`. Thread: MIDI.
    public func sendFeedback(_ send: (MIDIMessage) -> Void) {
        guard let mapper else { return }
        if needsInitialFeedback {
            needsInitialFeedback = false
            mapper.queueInitialFeedback()
        }
        while let m = mapper.feedback.pop() { send(m) }
    }

    /// Into the player's queue, tagged with the generation of the plan the mapper was made
    /// for (tempo is for whatever rack plays).
    @inline(__always)
    func push(_ e: EngineEvent) {
        guard let events else { return }
        var tagged = e
        tagged.generation = e.kind == .tempo ? 0 : (mapper?.generation ?? 0)
        if events.push(tagged) { sent.add(1, ordering: .relaxed) } else { dropped.add(1, ordering: .relaxed) }
        if let parameterChanges, e.kind == .parameter || e.kind == .bypass {
            let address = ParameterAddress(unit: Int(e.unit), parameter: e.kind == .bypass ? ParameterAddress.bypassIndex : Int(e.parameter))
            if !parameterChanges.push(ParameterChange(address: address, value: e.value, generation: tagged.generation)) {
                droppedChanges.add(1, ordering: .relaxed)
            }
        }
    }

    func record(_ message: MIDIMessage, seconds: Double, count: Int) {
        guard let monitor, let mapper else { return }
        for i in 0..<count {
            _ = monitor.push(
                MIDIMonitorRecord(message: message, seconds: seconds, sourceClient: source.0, sourcePort: source.1,
                                  outcome: mapper.outcome(i), isFirst: i == 0))
        }
    }
}

/// A message and its arrival on the monotonic clock in seconds (MIDI learn). Thread: any.
@frozen
public struct TimedMIDIMessage: Sendable, BitwiseCopyable {
    public var message: MIDIMessage
    public var seconds: Double
    public init(message: MIDIMessage, seconds: Double) {
        self.message = message
        self.seconds = seconds
    }
}
