import CJack
import CStageShim
import StageCore
import StageDrivers
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// StageRack as a JACK client: one port per playback channel and per capture channel
/// (`JackPortNames`), the rack rendered in JACK's process callback at the server's rate and
/// buffer size. The server's xrun callback counts xruns; its shutdown callback marks the
/// server gone, and the caller (the main thread) closes the client and reopens one later,
/// with the same `RackPlayer`: the show's state is kept.
///
/// The process callback is the render thread and keeps its rules (no locks, allocation,
/// logging): it takes the port buffers, copies the capture ports into `inputStorage`, and
/// renders straight into the playback ports through `PeriodMeters.renderPeriod`, the code
/// ALSA's loop runs, in chunks of at most the rack's block size (a server whose buffer grows
/// after the rack was compiled is followed without a new rack).
/// Thread: `init`, `activate`, `connect`, `outcome`, `status`, `close` on the main thread;
/// `process` on JACK's process thread; the xrun, buffer-size and shutdown callbacks on
/// JACK's threads (atomics only).
public final class JackAudio: @unchecked Sendable {
    public enum Outcome: Sendable {
        case stopped
        case finished
        /// The server shut down or dropped the client (`jack_on_shutdown`).
        case serverLost
    }

    public let player: RackPlayer
    /// The server's rate and buffer size when the client opened.
    public let sampleRate: Int
    public let bufferFrames: Int
    /// The name the server gave this client (`stagerack`, or `stagerack-01` if taken).
    public let clientName: String
    public let outputNames: [String]
    public let inputNames: [String]
    /// Stop after this many frames (tests, `--duration`); nil runs until stopped.
    public let frameLimit: Int?

    let client: OpaquePointer
    let outputPorts: [OpaquePointer]
    let inputPorts: [OpaquePointer]
    /// The port buffers of this cycle and the chunk being rendered (render thread).
    let outputBase: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let outputChunk: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let inputBase: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let inputStorage: BusStorage?
    /// Largest block the rack takes.
    let chunkFrames: Int
    let meters = PeriodMeters()
    let xruns = Atomic<Int>(0)
    let framesDone = Atomic<Int>(0)
    let finished = Atomic<Bool>(false)
    let serverGone = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    /// The buffer size the server last announced.
    public let currentBufferFrames = Atomic<Int>(0)
    /// Render thread only: flush-to-zero is set on JACK's thread at its first cycle.
    var flushToZeroSet = false
    var closed = false

    /// Opens a client on the running server (never starts one) and registers the ports;
    /// nothing runs until `activate`.
    public init(clientName name: String, outputNames: [String], inputNames: [String], player: RackPlayer, frameLimit: Int?) throws(JackError) {
        stage_jack_quiet_messages()
        var status = jack_status_t(rawValue: 0)
        guard let client = stage_jack_open(name, &status) else { throw JackError.open(status: status) }
        self.client = client
        self.player = player
        self.frameLimit = frameLimit
        self.outputNames = outputNames
        self.inputNames = inputNames
        clientName = String(cString: jack_get_client_name(client))
        sampleRate = Int(jack_get_sample_rate(client))
        bufferFrames = Int(jack_get_buffer_size(client))
        currentBufferFrames.store(bufferFrames, ordering: .relaxed)
        chunkFrames = player.maxFrames
        var outs: [OpaquePointer] = []
        var ins: [OpaquePointer] = []
        for n in outputNames {
            if let p = jack_port_register(client, n, JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0) { outs.append(p) }
        }
        for n in inputNames {
            if let p = jack_port_register(client, n, JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsInput.rawValue), 0) { ins.append(p) }
        }
        outputPorts = outs
        inputPorts = ins
        outputBase = .allocate(capacity: max(outs.count, 1))
        outputChunk = .allocate(capacity: max(outs.count, 1))
        inputBase = .allocate(capacity: max(ins.count, 1))
        inputStorage = ins.isEmpty ? nil : BusStorage(bufferCount: ins.count, maxFrames: player.maxFrames)
        guard outs.count == outputNames.count, ins.count == inputNames.count else {
            jack_client_close(client)
            closed = true
            throw JackError(function: "jack_port_register", code: -1)
        }
        try setCallbacks()
    }

    /// The running server's rate and buffer size, from a client opened and closed at once.
    /// Thread: main.
    public static func serverFormat(clientName name: String) throws(JackError) -> (sampleRate: Int, bufferFrames: Int) {
        stage_jack_quiet_messages()
        var status = jack_status_t(rawValue: 0)
        guard let client = stage_jack_open(name, &status) else { throw JackError.open(status: status) }
        defer { jack_client_close(client) }
        return (Int(jack_get_sample_rate(client)), Int(jack_get_buffer_size(client)))
    }

    /// The server runs its clients' process callbacks with real-time priority.
    public var isRealtime: Bool { jack_is_realtime(client) != 0 }

    deinit {
        close()
        outputBase.deallocate()
        outputChunk.deallocate()
        inputBase.deallocate()
    }

    private func setCallbacks() throws(JackError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let process: JackProcessCallback = { frames, arg in
            Unmanaged<JackAudio>.fromOpaque(arg!).takeUnretainedValue().process(Int(frames))
        }
        let xrun: JackXRunCallback = { arg in
            Unmanaged<JackAudio>.fromOpaque(arg!).takeUnretainedValue().xruns.add(1, ordering: .relaxed)
            return 0
        }
        let bufferSize: JackBufferSizeCallback = { frames, arg in
            Unmanaged<JackAudio>.fromOpaque(arg!).takeUnretainedValue().currentBufferFrames.store(Int(frames), ordering: .relaxed)
            return 0
        }
        let shutdown: JackShutdownCallback = { arg in
            Unmanaged<JackAudio>.fromOpaque(arg!).takeUnretainedValue().serverGone.store(true, ordering: .releasing)
        }
        var rc = jack_set_process_callback(client, process, me)
        if rc == 0 { rc = jack_set_xrun_callback(client, xrun, me) }
        if rc == 0 { rc = jack_set_buffer_size_callback(client, bufferSize, me) }
        jack_on_shutdown(client, shutdown, me)
        if rc != 0 { throw JackError(function: "jack_set_process_callback", code: Int(rc)) }
    }

    /// Starts the process callback. Thread: main, with no other thread rendering `player`.
    public func activate() throws(JackError) {
        player.clock.reset()
        let rc = jack_activate(client)
        if rc != 0 { throw JackError(function: "jack_activate", code: Int(rc)) }
    }

    /// Connects the playback ports to the ports `outputPattern` matches (a regular
    /// expression, as `jack_get_ports` takes: "system:playback_"), in order, and the
    /// capture ports from those `inputPattern` matches. Returns one log line per pattern:
    /// what was connected, or that it matched nothing (the show goes on unconnected).
    /// Thread: main, after `activate`.
    public func connect(outputPattern: String?, inputPattern: String?) -> [(warning: Bool, text: String)] {
        var lines: [(Bool, String)] = []
        if let outputPattern {
            lines.append(connect(outputPorts, to: outputPattern, flags: JackPortIsInput.rawValue, ours: outputNames, outgoing: true))
        }
        if let inputPattern, !inputPorts.isEmpty {
            lines.append(connect(inputPorts, to: inputPattern, flags: JackPortIsOutput.rawValue, ours: inputNames, outgoing: false))
        }
        return lines
    }

    private func connect(_ ports: [OpaquePointer], to pattern: String, flags: UInt32, ours: [String], outgoing: Bool)
        -> (Bool, String)
    {
        let found = portNames(matching: pattern, flags: flags)
        guard !found.isEmpty else { return (true, "JACK: \"\(pattern)\" matches no \(outgoing ? "input" : "output") port; \(outgoing ? "outputs" : "inputs") not connected") }
        var made: [String] = []
        for (k, other) in zip(ports.indices, found) {
            let mine = "\(clientName):\(ours[k])"
            let rc = outgoing ? jack_connect(client, mine, other) : jack_connect(client, other, mine)
            made.append(rc == 0 || rc == EEXIST ? (outgoing ? "\(mine) → \(other)" : "\(other) → \(mine)") : "\(ours[k]) failed (\(rc))")
        }
        return (false, "JACK: connected " + made.joined(separator: ", "))
    }

    /// The audio ports `pattern` matches, with `flags`, in the server's order.
    private func portNames(matching pattern: String, flags: UInt32) -> [String] {
        guard let list = jack_get_ports(client, pattern, JACK_DEFAULT_AUDIO_TYPE, UInt(flags)) else { return [] }
        defer { jack_free(list) }
        var names: [String] = []
        var i = 0
        while let p = list[i] {
            names.append(String(cString: p))
            i += 1
        }
        return names
    }

    /// Frames from the start of a cycle's render to its first sample at the outputs the
    /// client's ports reach (the server's playback latency on them, the largest over the
    /// ports; after `connect`). At least one period: JACK plays a cycle one period later.
    /// Thread: main.
    public var playbackLatencyFrames: Int {
        var latest = UInt32(bufferFrames)
        for port in outputPorts {
            var range = jack_latency_range_t()
            jack_port_get_latency_range(port, JackPlaybackLatency, &range)
            latest = max(latest, range.max)
        }
        return Int(latest)
    }

    /// Asks the render to fade out; `outcome` turns `.stopped` when it has. Thread: any.
    public func requestStop() {
        player.requestFadeOut()
        stopRequested.store(true, ordering: .releasing)
    }

    /// nil while playing. Thread: main.
    public func outcome() -> Outcome? {
        if serverGone.load(ordering: .acquiring) { return .serverLost }
        if finished.load(ordering: .acquiring) { return .finished }
        if stopRequested.load(ordering: .acquiring) && player.isFadedOut { return .stopped }
        return nil
    }

    /// Xruns the server reported, the meters since the last call, frames rendered.
    /// Thread: any (one reader).
    public func status() -> LiveAudio.Status {
        let m = meters.take()
        var s = LiveAudio.Status(
            xruns: xruns.load(ordering: .relaxed), load: m.load, peakIn: m.peakIn, peakOut: m.peakOut,
            frames: framesDone.load(ordering: .relaxed))
        (s.tempo, s.tempoSource) = player.playingTempo
        return s
    }

    /// Deactivates and closes the client (also after the server went away). Thread: main.
    public func close() {
        guard !closed else { return }
        closed = true
        if !serverGone.load(ordering: .acquiring) { jack_deactivate(client) }
        jack_client_close(client)
    }

    /// One JACK cycle. Never allocates, locks or logs. Thread: JACK's process thread.
    func process(_ frames: Int) -> Int32 {
        if !flushToZeroSet {
            stage_enable_flush_to_zero()
            flushToZeroSet = true
        }
        for k in outputPorts.indices { outputBase[k] = jack_port_get_buffer(outputPorts[k], UInt32(frames)).assumingMemoryBound(to: Float.self) }
        for k in inputPorts.indices { inputBase[k] = jack_port_get_buffer(inputPorts[k], UInt32(frames)).assumingMemoryBound(to: Float.self) }
        var done = framesDone.load(ordering: .relaxed)
        if finished.load(ordering: .relaxed) || (stopRequested.load(ordering: .relaxed) && player.isFadedOut) {
            for k in outputPorts.indices { outputBase[k].update(repeating: 0, count: frames) }
            return 0
        }
        let rate = Double(sampleRate)
        var offset = 0
        while offset < frames {
            let n = min(frames - offset, chunkFrames)
            for k in outputPorts.indices { outputChunk[k] = outputBase[k] + offset }
            var input: AudioBus?
            if let inputStorage {
                for k in inputPorts.indices { inputStorage.buffer(k).update(from: inputBase[k] + offset, count: n) }
                let bus = inputStorage.bus(first: 0, channels: inputPorts.count)
                meters.publishInputPeak(bus, frames: n)
                input = bus
            }
            let output = AudioBus(channelPointers: UnsafePointer(outputChunk), channelCount: outputPorts.count)
            meters.renderPeriod(player, input: input, output: output, frames: n, sampleRate: rate)
            offset += n
        }
        done += frames
        framesDone.store(done, ordering: .relaxed)
        if let frameLimit, done >= frameLimit { finished.store(true, ordering: .releasing) }
        return 0
    }
}
