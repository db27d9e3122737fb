import CLink
import StageCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Why Link could not start (`stage_link_create`, `stage_link_enable`). Thread: any (a value).
public struct LinkError: Error, CustomStringConvertible {
    public let function: String
    public let message: String
    public var description: String { "\(function): \(message)" }
}

/// One reading of the session as the render thread took it at a block: Link's clock there
/// (µs, CLOCK_MONOTONIC_RAW, plus the output latency), the beat the rack's grid took there
/// and the session's tempo. Thread: any (a value).
public struct LinkBlockReading: Sendable, Equatable {
    public var micros: Int64
    public var beat: Double
    public var tempo: Double
}

/// `play --link`: the rack's tempo and beat grid shared with a band's other programs through
/// Ableton Link (Debian's ableton-link-dev, `CLink`). Link's own thread finds peers by
/// multicast on UDP port 20808; the render thread reads and changes the session through
/// Link's real-time safe audio API (`read`, `propose`: no lock, no allocation); the main
/// thread makes it, enables it, and reads the peer count and the last block's reading.
/// Thread: main, except where a member says otherwise.
public final class LinkSession: TempoSession, @unchecked Sendable {
    /// The UDP port Link's discovery listens on (shared between Link programs on one machine).
    public static let discoveryPort: UInt16 = 20808
    let link: OpaquePointer
    /// Added to Link's clock at each block: when the block will be heard (the output latency).
    let latencyMicros: Int64
    /// The host time of the block being rendered. Thread: render.
    var blockMicros: Int64 = 0
    /// The last block's reading, behind a sequence lock: the render thread writes (never
    /// waits), any thread reads (`lastBlock` retries while a write is half done).
    let sequence = Atomic<UInt64>(0)
    let readMicros = Atomic<Int64>(0)
    let readBeat = Atomic<UInt64>(0)
    let readTempo = Atomic<UInt64>(0)

    /// A session at `tempo` BPM, not yet joined; `latencySeconds` is the output latency (the
    /// beat a block takes is the one at the time it will be heard).
    public init(tempo: Double, latencySeconds: Double) throws(LinkError) {
        var error = [CChar](repeating: 0, count: 256)
        guard let l = stage_link_create(tempo, &error, Int32(error.count)) else {
            throw LinkError(function: "stage_link_create", message: String(cBuffer: error))
        }
        link = l
        latencyMicros = Int64((latencySeconds * 1e6).rounded())
    }

    deinit { stage_link_destroy(link) }

    /// Joins the network session (Link's thread starts discovery). Thread: main.
    public func enable() throws(LinkError) {
        var error = [CChar](repeating: 0, count: 256)
        guard stage_link_enable(link, 1, &error, Int32(error.count)) == 0 else {
            throw LinkError(function: "stage_link_enable", message: String(cBuffer: error))
        }
    }

    /// Peers sharing the session (other programs). Thread: any.
    public var peers: Int { Int(stage_link_peers(link)) }

    /// Link's clock now, µs. Thread: any.
    public var clockMicros: Int64 { stage_link_clock_micros(link) }

    /// Thread: render.
    public func read(quantum: Double) -> TempoSessionState {
        blockMicros = stage_link_clock_micros(link) + latencyMicros
        let s = stage_link_audio_read(link, blockMicros, quantum)
        let seq = sequence.load(ordering: .relaxed)
        sequence.store(seq &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        readMicros.store(blockMicros, ordering: .relaxed)
        readBeat.store(s.beat.bitPattern, ordering: .relaxed)
        readTempo.store(s.tempo.bitPattern, ordering: .relaxed)
        sequence.store(seq &+ 2, ordering: .releasing)
        return TempoSessionState(tempo: s.tempo, beat: s.beat, shared: stage_link_peers(link) > 0)
    }

    /// Thread: render.
    public func propose(tempo: Double) {
        stage_link_audio_propose_tempo(link, tempo, blockMicros)
    }

    /// The last block's reading; nil before the first block. Thread: any (not render).
    public var lastBlock: LinkBlockReading? {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before == 0 { return nil }
            if before & 1 == 1 { continue }
            let r = LinkBlockReading(
                micros: readMicros.load(ordering: .relaxed), beat: Double(bitPattern: readBeat.load(ordering: .relaxed)),
                tempo: Double(bitPattern: readTempo.load(ordering: .relaxed)))
            atomicMemoryFence(ordering: .acquiring)
            if sequence.load(ordering: .relaxed) == before { return r }
        }
    }

    /// Whether another program holds Link's discovery port without sharing it (a bind with
    /// SO_REUSEADDR, as Link's own, fails with EADDRINUSE): Link then finds no peers.
    /// The errno text when taken, nil when free. Thread: any.
    public static func discoveryPortTaken() -> String? {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = discoveryPort.bigEndian
        a.sin_addr.s_addr = 0
        let rc = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return rc == 0 ? nil : String(cString: strerror(errno))
    }
}
