import CALSA
import StageCore
import StageControl
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The rack's live MIDI input: an ALSA sequencer client (`StageRack`, ports `in` and
/// `out`) that connects to the controllers the rack names, follows hotplug, decodes
/// events and maps them on a thread of its own.
///
/// - Connects to every port matching `midi.connect` (default: every hardware port, never
///   Midi Through or itself) at start, and to matching ports that appear later (System
///   Announce); ports that vanish and come back are connected again by name.
/// - Any program can also connect to `StageRack:in` (aconnect, aplaymidi -p, a DAW).
/// - Takes channel messages, NRPN/RPN and 14-bit events (as their CCs), clock and
///   Start/Stop straight from the sequencer's decoded events (`SequencerEvents`); passes
///   over SysEx. Stamps each with CLOCK_MONOTONIC on arrival and hands it to its
///   `MIDIRouter`, which schedules it on the audio clock, maps it and pushes the engine
///   events into the player's queue (this thread is that queue's one producer).
/// - Sends the mapper's feedback out of `StageRack:out`, which it connects to the
///   controllers' inputs when some mapping asks for feedback.
///
/// Thread: init, `start`, `stop`, `replaceMapper`, `noteParameterMoved`, `takeLog` on the
/// control thread; `wake` from any; the rest runs on the MIDI thread it starts.
public final class MIDIInput: @unchecked Sendable {
    public struct Options: Sendable {
        public var clientName: String
        /// Port name patterns (`midi.connect`); empty: every hardware port.
        public var patterns: [String]
        /// Queue a `MIDIMonitorRecord` for every message (see `monitor`).
        public var monitor: Bool
        public init(clientName: String = "StageRack", patterns: [String] = [], monitor: Bool = false) {
            self.clientName = clientName
            self.patterns = patterns
            self.monitor = monitor
        }
    }

    public let options: Options
    public let clientID: Int
    public let inputPort: Int
    public let outputPort: Int
    /// Scheduling, mapping and the queues to the render and control threads.
    public let router: MIDIRouter
    /// Records for a monitor (when `options.monitor`). Producer: the MIDI thread.
    /// Consumer: one control thread.
    public var monitor: SPSCQueue<MIDIMonitorRecord>? { router.monitor }
    /// Preset selection (Program Change, next/previous triggers) and transport, kept across
    /// mapper replacements. Producer: the MIDI thread. Consumer: one control thread.
    public var actions: SPSCQueue<ControlAction> { router.actions }

    // Counters (any thread may read).
    public var messagesReceived: Int { router.messagesReceived }
    /// Engine events lost because the player's queue was full.
    public var engineEventsDropped: Int { router.engineEventsDropped }
    /// Times the kernel's input pool overflowed (events lost before we read them).
    public var inputOverruns: Int { overruns.load(ordering: .relaxed) }
    public var sysExSkipped: Int { sysEx.load(ordering: .relaxed) }
    let overruns = Atomic<Int>(0)
    let sysEx = Atomic<Int>(0)

    let sequencer: ALSASequencer
    let rules: MIDIPortRules
    // MIDI thread state.
    var mapper: MIDIMapper? { router.mapper }
    var sources: [SequencerPort] = []
    var destinations: [SequencerPort] = []

    // Control ↔ MIDI thread.
    let stopping = Atomic<Bool>(false)
    let log = Locked<[String]>([])
    let connected = Locked<[String]>([])
    let wakeRead: Int32
    let wakeWrite: Int32
    var thread: StageThread?

    /// Opens the sequencer client and its ports. `mapper` may be nil (a bare monitor);
    /// `events` is the player's queue (nil: events are dropped); `clock` the audio clock
    /// live events are scheduled on (nil: each applies at the next block). Thread: control.
    public init(options: Options, mapper: MIDIMapper?, events: SPSCQueue<EngineEvent>?, clock: AudioClock? = nil)
        throws(ALSASequencerError)
    {
        self.options = options
        sequencer = try ALSASequencer(name: options.clientName)
        clientID = sequencer.clientID
        inputPort = try sequencer.createPort(name: "in", input: true)
        outputPort = try sequencer.createPort(name: "out", input: false)
        // Hotplug: the system announces clients and ports starting and stopping.
        try sequencer.connectFrom(MIDIPortRules.systemClient, Int(SND_SEQ_PORT_SYSTEM_ANNOUNCE), to: inputPort)
        rules = MIDIPortRules(patterns: options.patterns, ownClient: clientID)
        router = MIDIRouter(mapper: mapper, events: events, clock: clock, monitor: options.monitor)
        var fds: [Int32] = [0, 0]
        try ALSASequencer.check("pipe", pipe(&fds) == 0 ? 0 : -errno, "making the MIDI thread's wake-up pipe")
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        stop()
        close(wakeRead)
        close(wakeWrite)
    }

    /// `StageRack:in (128:0)`.
    public var inputName: String { "\(options.clientName):in (\(clientID):\(inputPort))" }
    public var outputName: String { "\(options.clientName):out (\(clientID):\(outputPort))" }

    /// Connects to the ports that exist now and starts the MIDI thread.
    /// Thread: control, once.
    public func start() throws(ALSASequencerError) {
        precondition(thread == nil, "MIDIInput started twice")
        for p in try sequencer.ports() { consider(p) }
        do {
            thread = try StageThread(.init(name: "stagerack-midi")) { [self] in run() }
        } catch {
            throw ALSASequencerError(function: "pthread_create", code: -11, context: "starting the MIDI thread: \(error)")
        }
    }

    /// Stops the MIDI thread and waits for it. The client stays open until release.
    /// Thread: control.
    public func stop() {
        guard let t = thread else { return }
        stopping.store(true, ordering: .releasing)
        wake()
        t.join()
        thread = nil
    }



    /// Makes the MIDI thread look at its inputs now (e.g. after `noteParameterMoved`, so
    /// feedback goes out at once). Thread: any.
    public func wake() {
        var b: UInt8 = 1
        _ = write(wakeWrite, &b, 1)
    }

    /// Connection changes since the last call (`connected: …`, `disconnected: …`).
    /// Thread: control.
    public func takeLog() -> [String] {
        log.withLock { lines in
            let out = lines
            lines.removeAll()
            return out
        }
    }

    /// The source ports connected now.
    public var connectedSources: [String] { connected.withLock { $0 } }

    // MARK: - MIDI thread

    func run() {
        var fds: [pollfd]
        do {
            fds = try sequencer.pollDescriptors()
        } catch {
            note("MIDI input stopped: \(error)")
            return
        }
        fds.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
        var drain = [UInt8](repeating: 0, count: 64)
        while !stopping.load(ordering: .acquiring) {
            router.takeReplacement()
            sendFeedback()
            var timeout: Int32 = 100
            if let deadline = router.nextDeadline {
                timeout = Int32(min(max((deadline - monotonicSeconds()) * 1000, 0).rounded(.up), 100))
            }
            for i in fds.indices { fds[i].revents = 0 }
            let n = poll(&fds, nfds_t(fds.count), timeout)
            if n < 0 && errno != EINTR {
                note("MIDI input stopped: poll failed (errno \(errno))")
                return
            }
            if fds[fds.count - 1].revents & Int16(POLLIN) != 0 {
                while read(wakeRead, &drain, drain.count) > 0 {}
            }
            if stopping.load(ordering: .acquiring) { break }
            router.takeReplacement()
            readEvents()
            router.poll(nanoseconds: monotonicNanoseconds())
            sendFeedback()
        }
    }

    func readEvents() {
        while true {
            let input: ALSASequencer.Input
            do {
                input = try sequencer.read()
            } catch {
                note("MIDI read error: \(error)")
                return
            }
            switch input {
            case .empty: return
            case .overrun: overruns.add(1, ordering: .relaxed)
            case .event(let ev): handle(ev)
            }
        }
    }

    func handle(_ ev: UnsafeMutablePointer<snd_seq_event_t>) {
        let arrival = monotonicNanoseconds()
        let e = ev.pointee
        if Int(e.source.client) == MIDIPortRules.systemClient {
            announcement(e)
            return
        }
        if e.type == UInt8(SND_SEQ_EVENT_SYSEX.rawValue) {
            sysEx.add(1, ordering: .relaxed)
            return
        }
        let source = (Int16(e.source.client), Int16(e.source.port))
        SequencerEvents.messages(of: e) { router.handle($0, arrivalNanoseconds: arrival, source: source) }
        sendFeedback()
    }

    func sendFeedback() {
        router.sendFeedback { m in
            let count = m.kind == .programChange || m.kind == .channelPressure ? 2 : 3
            try? sequencer.send(MIDIBytes(m.status, m.data1, m.data2, count: count), from: outputPort)
        }
    }

    // MARK: - Hotplug

    func announcement(_ e: snd_seq_event_t) {
        let type = Int32(e.type)
        let addr = e.data.addr
        switch type {
        case Int32(SND_SEQ_EVENT_PORT_START.rawValue), Int32(SND_SEQ_EVENT_PORT_CHANGE.rawValue):
            if let p = sequencer.port(client: Int(addr.client), port: Int(addr.port)) { consider(p) }
        case Int32(SND_SEQ_EVENT_CLIENT_CHANGE.rawValue):
            for p in (try? sequencer.ports(ofClient: Int(addr.client))) ?? [] { consider(p) }
        case Int32(SND_SEQ_EVENT_PORT_EXIT.rawValue):
            forget { $0.client == Int(addr.client) && $0.port == Int(addr.port) }
        case Int32(SND_SEQ_EVENT_CLIENT_EXIT.rawValue):
            forget { $0.client == Int(addr.client) }
        case Int32(SND_SEQ_EVENT_PORT_SUBSCRIBED.rawValue):
            let c = e.data.connect
            if Int(c.dest.client) == clientID && Int(c.dest.port) == inputPort,
                !sources.contains(where: { $0.client == Int(c.sender.client) && $0.port == Int(c.sender.port) }),
                Int(c.sender.client) != MIDIPortRules.systemClient,
                let p = sequencer.port(client: Int(c.sender.client), port: Int(c.sender.port))
            {
                sources.append(p)
                note("connected: \(p) (by another program)")
            }
        case Int32(SND_SEQ_EVENT_PORT_UNSUBSCRIBED.rawValue):
            let c = e.data.connect
            if Int(c.dest.client) == clientID && Int(c.dest.port) == inputPort {
                forget { $0.client == Int(c.sender.client) && $0.port == Int(c.sender.port) }
            }
        default:
            break
        }
    }

    /// Connects `p` if the rules want it and it is not connected yet.
    func consider(_ p: SequencerPort) {
        if rules.acceptsSource(p) && !sources.contains(where: { $0.client == p.client && $0.port == p.port }) {
            do {
                try sequencer.connectFrom(p.client, p.port, to: inputPort)
                sources.append(p)
                note("connected: \(p)")
            } catch let error where error.code == -EBUSY {
                sources.append(p)  // already connected (by aconnect, say)
            } catch {
                note("cannot connect \(p): \(error)")
            }
        }
        guard mapper?.mappings.contains(where: \.feedback) == true, rules.acceptsDestination(p),
            !destinations.contains(where: { $0.client == p.client && $0.port == p.port })
        else { return }
        do {
            try sequencer.connectTo(p.client, p.port, from: outputPort)
            destinations.append(p)
            note("feedback to: \(p)")
            router.needsInitialFeedback = true
        } catch let error where error.code == -EBUSY {
            destinations.append(p)
        } catch {
            note("cannot send feedback to \(p): \(error)")
        }
    }

    func forget(_ which: (SequencerPort) -> Bool) {
        for p in sources where which(p) { note("disconnected: \(p)") }
        sources.removeAll(where: which)
        destinations.removeAll(where: which)
        publishConnections()
    }

    func note(_ line: String) {
        log.withLock { $0.append(line) }
        publishConnections()
    }

    func publishConnections() {
        let names = sources.map(\.description)
        connected.withLock { $0 = names }
    }
}

extension MIDIInput: LiveMIDI {}
