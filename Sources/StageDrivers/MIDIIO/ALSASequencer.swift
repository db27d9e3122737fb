import CALSA

#if canImport(Glibc)
import Glibc
#endif

/// An ALSA sequencer call that failed: which C function, and its error code.
/// (DESIGN.md rule 8: every call goes through `ALSASequencer.check`, which names it.)
public struct ALSASequencerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function, e.g. `snd_seq_open`.
    public var function: String
    /// The negative errno alsa-lib returned.
    public var code: Int32
    /// What was being done, e.g. `connecting from 20:0`.
    public var context: String

    public init(function: String, code: Int32, context: String = "") {
        self.function = function
        self.code = code
        self.context = context
    }

    public var description: String {
        let what = String(cString: snd_strerror(code))
        var s = "\(function) failed: \(what) (\(code))"
        if !context.isEmpty { s += " while \(context)" }
        if function == "snd_seq_open" && code == -ENOENT {
            s += "; this system has no ALSA sequencer (/dev/snd/seq): load the snd-seq kernel module"
        }
        return s
    }
}

/// A sequencer client or port as the system lists it.
public struct SequencerPort: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var client: Int
    public var port: Int
    public var clientName: String
    public var portName: String
    /// SND_SEQ_PORT_CAP_* bits.
    public var capability: UInt32
    /// SND_SEQ_PORT_TYPE_* bits.
    public var type: UInt32
    /// True for a kernel client (hardware drivers, virtual raw MIDI, Midi Through).
    public var isKernelClient: Bool

    public init(
        client: Int, port: Int, clientName: String, portName: String, capability: UInt32, type: UInt32,
        isKernelClient: Bool
    ) {
        self.client = client
        self.port = port
        self.clientName = clientName
        self.portName = portName
        self.capability = capability
        self.type = type
        self.isKernelClient = isKernelClient
    }

    /// Others can read from it (it is a source we can connect to our input).
    public var isReadable: Bool {
        capability & UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ) == UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ)
            && capability & UInt32(SND_SEQ_PORT_CAP_NO_EXPORT) == 0
    }

    /// Others can write to it (a destination for feedback).
    public var isWritable: Bool {
        capability & UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE) == UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE)
            && capability & UInt32(SND_SEQ_PORT_CAP_NO_EXPORT) == 0
    }

    /// `Client:Port (c:p)`, e.g. `nanoKONTROL2:nanoKONTROL2 _ CTRL (24:0)`.
    public var description: String { "\(clientName):\(portName) (\(client):\(port))" }
}

/// The thin layer over an `snd_seq_t`: each method is one or a few alsa-lib calls, each
/// checked by `check`, which turns a negative result into an `ALSASequencerError` naming
/// the function. Nothing else in the program calls the sequencer API.
///
/// Thread: open and close on the control thread; everything else on the one thread that
/// owns the client (the MIDI thread). Polling descriptors may be read by that thread only.
public final class ALSASequencer {
    let handle: OpaquePointer
    public let clientID: Int
    let decoder: OpaquePointer
    let encoder: OpaquePointer
    let clientInfo: OpaquePointer
    let portInfo: OpaquePointer
    let queryClient: OpaquePointer

    /// Throws unless `result` ≥ 0; returns it.
    @discardableResult
    @inline(__always)
    public static func check(_ function: String, _ result: Int32, _ context: @autoclosure () -> String = "") throws(ALSASequencerError) -> Int32 {
        if result < 0 { throw ALSASequencerError(function: function, code: result, context: context()) }
        return result
    }

    /// Opens the sequencer (duplex, non-blocking) as client `name`.
    public init(name: String) throws(ALSASequencerError) {
        stage_alsa_quiet_errors()
        var h: OpaquePointer?
        try Self.check("snd_seq_open", snd_seq_open(&h, "default", SND_SEQ_OPEN_DUPLEX, SND_SEQ_NONBLOCK))
        guard let h else { throw ALSASequencerError(function: "snd_seq_open", code: -ENOMEM) }
        handle = h
        var dec: OpaquePointer?
        var enc: OpaquePointer?
        var ci: OpaquePointer?
        var pi: OpaquePointer?
        var qc: OpaquePointer?
        do {
            try Self.check("snd_seq_set_client_name", snd_seq_set_client_name(h, name))
            clientID = Int(try Self.check("snd_seq_client_id", snd_seq_client_id(h)))
            try Self.check("snd_midi_event_new", snd_midi_event_new(64, &dec))
            try Self.check("snd_midi_event_new", snd_midi_event_new(64, &enc))
            try Self.check("snd_seq_client_info_malloc", snd_seq_client_info_malloc(&ci))
            try Self.check("snd_seq_port_info_malloc", snd_seq_port_info_malloc(&pi))
            try Self.check("snd_seq_client_info_malloc", snd_seq_client_info_malloc(&qc))
        } catch {
            if let dec { snd_midi_event_free(dec) }
            if let enc { snd_midi_event_free(enc) }
            if let ci { snd_seq_client_info_free(ci) }
            if let pi { snd_seq_port_info_free(pi) }
            if let qc { snd_seq_client_info_free(qc) }
            snd_seq_close(h)
            throw error
        }
        decoder = dec!
        encoder = enc!
        clientInfo = ci!
        portInfo = pi!
        queryClient = qc!
        snd_midi_event_no_status(decoder, 1)  // every decoded message carries its status byte
    }

    deinit {
        snd_midi_event_free(decoder)
        snd_midi_event_free(encoder)
        snd_seq_client_info_free(clientInfo)
        snd_seq_port_info_free(portInfo)
        snd_seq_client_info_free(queryClient)
        snd_seq_close(handle)
    }

    /// Creates a port other programs can write to (`input`) or read from.
    public func createPort(name: String, input: Bool) throws(ALSASequencerError) -> Int {
        let caps = input
            ? UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE)
            : UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ)
        let type = UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION)
        return Int(try Self.check("snd_seq_create_simple_port", snd_seq_create_simple_port(handle, name, caps, type), "creating port \(name)"))
    }

    /// Receives `client:port`'s events on our port `port`.
    public func connectFrom(_ client: Int, _ sourcePort: Int, to port: Int) throws(ALSASequencerError) {
        try Self.check(
            "snd_seq_connect_from", snd_seq_connect_from(handle, Int32(port), Int32(client), Int32(sourcePort)),
            "connecting \(client):\(sourcePort) to our port \(port)")
    }

    /// Sends our port `port`'s events to `client:destPort`.
    public func connectTo(_ client: Int, _ destPort: Int, from port: Int) throws(ALSASequencerError) {
        try Self.check(
            "snd_seq_connect_to", snd_seq_connect_to(handle, Int32(port), Int32(client), Int32(destPort)),
            "connecting our port \(port) to \(client):\(destPort)")
    }

    public func disconnectFrom(_ client: Int, _ sourcePort: Int, to port: Int) throws(ALSASequencerError) {
        try Self.check(
            "snd_seq_disconnect_from", snd_seq_disconnect_from(handle, Int32(port), Int32(client), Int32(sourcePort)))
    }

    /// Every port of every client, in client order.
    public func ports() throws(ALSASequencerError) -> [SequencerPort] {
        var list: [SequencerPort] = []
        snd_seq_client_info_set_client(queryClient, -1)
        while snd_seq_query_next_client(handle, queryClient) >= 0 {
            let c = snd_seq_client_info_get_client(queryClient)
            list += try ports(ofClient: Int(c))
        }
        return list
    }

    /// The ports of one client (empty if it is gone).
    public func ports(ofClient client: Int) throws(ALSASequencerError) -> [SequencerPort] {
        guard snd_seq_get_any_client_info(handle, Int32(client), clientInfo) >= 0 else { return [] }
        let clientName = String(cString: snd_seq_client_info_get_name(clientInfo))
        let kernel = snd_seq_client_info_get_type(clientInfo) == SND_SEQ_KERNEL_CLIENT
        var list: [SequencerPort] = []
        snd_seq_port_info_set_client(portInfo, Int32(client))
        snd_seq_port_info_set_port(portInfo, -1)
        while snd_seq_query_next_port(handle, portInfo) >= 0 {
            list.append(
                SequencerPort(
                    client: client, port: Int(snd_seq_port_info_get_port(portInfo)),
                    clientName: clientName, portName: String(cString: snd_seq_port_info_get_name(portInfo)),
                    capability: snd_seq_port_info_get_capability(portInfo), type: snd_seq_port_info_get_type(portInfo),
                    isKernelClient: kernel))
        }
        return list
    }

    /// One port, or nil if it does not exist (any more).
    public func port(client: Int, port: Int) -> SequencerPort? {
        guard snd_seq_get_any_client_info(handle, Int32(client), clientInfo) >= 0,
            snd_seq_get_any_port_info(handle, Int32(client), Int32(port), portInfo) >= 0
        else { return nil }
        return SequencerPort(
            client: client, port: port, clientName: String(cString: snd_seq_client_info_get_name(clientInfo)),
            portName: String(cString: snd_seq_port_info_get_name(portInfo)),
            capability: snd_seq_port_info_get_capability(portInfo), type: snd_seq_port_info_get_type(portInfo),
            isKernelClient: snd_seq_client_info_get_type(clientInfo) == SND_SEQ_KERNEL_CLIENT)
    }

    /// The descriptors to poll for input.
    public func pollDescriptors() throws(ALSASequencerError) -> [pollfd] {
        let n = try Self.check("snd_seq_poll_descriptors_count", snd_seq_poll_descriptors_count(handle, Int16(POLLIN)))
        var fds = [pollfd](repeating: pollfd(), count: Int(n))
        let got = fds.withUnsafeMutableBufferPointer { snd_seq_poll_descriptors(handle, $0.baseAddress, UInt32(n), Int16(POLLIN)) }
        try Self.check("snd_seq_poll_descriptors", got)
        return Array(fds.prefix(Int(got)))
    }

    /// The result of one read.
    public enum Input {
        case event(UnsafeMutablePointer<snd_seq_event_t>)
        /// Nothing more to read now.
        case empty
        /// The kernel's input pool overflowed: some events were lost.
        case overrun
    }

    /// The next input event, without blocking. The pointer is valid until the next read.
    public func read() throws(ALSASequencerError) -> Input {
        var ev: UnsafeMutablePointer<snd_seq_event_t>?
        let r = snd_seq_event_input(handle, &ev)
        if r == -EAGAIN { return .empty }
        if r == -ENOSPC { return .overrun }
        try Self.check("snd_seq_event_input", r)
        guard let ev else { return .empty }
        return .event(ev)
    }

    /// Raw MIDI bytes of an event (channel and system messages; SysEx must be skipped by
    /// the caller). Returns the count written into `buffer`, 0 when the event has no MIDI
    /// form (announcements, queue control).
    public func decode(_ ev: UnsafeMutablePointer<snd_seq_event_t>, into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        let n = snd_midi_event_decode(decoder, buffer, Int(capacity), ev)
        return n > 0 ? n : 0
    }

    /// Sends one channel message from our port `port` to its subscribers, now.
    public func send(_ message: MIDIBytes, from port: Int) throws(ALSASequencerError) {
        var ev = snd_seq_event_t()
        snd_midi_event_reset_encode(encoder)
        var bytes = message
        let used = withUnsafeBytes(of: &bytes.bytes) { raw in
            snd_midi_event_encode(encoder, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), Int(bytes.count), &ev)
        }
        try Self.check("snd_midi_event_encode", Int32(truncatingIfNeeded: used))
        guard ev.type != UInt8(SND_SEQ_EVENT_NONE.rawValue) else { return }
        stage_seq_ev_to_subscribers(&ev, Int32(port))
        try Self.check("snd_seq_event_output_direct", snd_seq_event_output_direct(handle, &ev))
    }
}

/// Up to three bytes of one MIDI message. Thread: any (a value).
public struct MIDIBytes: Sendable {
    public var bytes: (UInt8, UInt8, UInt8)
    public var count: Int
    public init(_ b0: UInt8, _ b1: UInt8 = 0, _ b2: UInt8 = 0, count: Int) {
        bytes = (b0, b1, b2)
        self.count = count
    }
}
