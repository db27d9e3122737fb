import Dispatch
import Foundation
import StageCore
import StageRemote
import StageService
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `play --osc`: the OSC address space (`OSCAddressSpace`) on a UDP socket, served by a
/// thread of its own (`stagerack-osc`), never the render thread. Each datagram is checked
/// before it is decoded: a source outside `allow` is dropped without a reply; a packet over
/// `maxPacket` bytes, a malformed message, an unknown address or a bad argument gets an
/// `/stagerack/error s` reply and changes nothing. Commands go to the control thread through
/// `RemoteHub.fromOSC` (this thread is its one producer); subscribers get the state's
/// changes, read from `RemoteHub.view()` at every turn (at most 50 ms apart).
///
/// OSC has no authentication: it listens on localhost unless given an address, and
/// belongs on a trusted network (racks/README.md § Remote control). UDP source addresses
/// can be forged, so what is sent back is bounded: `/state` and `/subscribe` are answered
/// only to allowed sources (inside `oscAllow`, or loopback when it is not set), every reply
/// goes through a per-source byte budget (`OSCReplyBudget`: at most ×2 the bytes received
/// for any source not allowed), a subscription goes to the sender's own port or an
/// unprivileged one (≥ `minSubscribePort`), and a new subscriber never evicts an active one
/// of another address. Refusals are logged as warnings, once a minute per class.
///
/// Thread: `start`/`stop` on main; everything else on the OSC thread.
public final class OSCServer: @unchecked Sendable {
    public static let maxPacket = 4096
    public static let maxSubscribers = 8
    /// Subscribers kept at most (`oscSubscribers`; the oldest goes): `maxSubscribers` by default.
    public let subscriberLimit: Int
    /// Datagrams taken per turn at most (the rest wait in the socket: bounded work).
    public static let maxPerTurn = 256
    /// The lowest port a subscription may name other than the sender's own (no system
    /// services: DNS, NTP, syslog and their kind sit below it).
    public static let minSubscribePort = 1024
    /// A subscriber whose address sent nothing for this long (seconds) may give its place
    /// to a new one when all are taken; a more recent one is never evicted for another address.
    public static let subscriberIdleSeconds = 600.0

    public let address: ListenAddress
    let allow: NetworkList?
    let hub: RemoteHub
    let log: @Sendable (LogLevel, String) -> Void
    let fd: Int32
    let running = Atomic<Bool>(false)
    var thread: StageThread?

    // Counters (any thread).
    public let packetsReceived = Atomic<Int>(0)
    public let packetsRefused = Atomic<Int>(0)
    public let errorsReplied = Atomic<Int>(0)

    // OSC thread state.
    var subscribers: [Peer] = []
    /// The readout texts sent last (`sendReadouts`).
    var lastReadouts: [String] = []
    /// The song's transpose last sent to the subscribers.
    var lastTranspose: Int?
    /// When each subscriber's address last sent anything (monotonic seconds).
    var heardFrom: [[UInt8]: Double] = [:]
    var budget = OSCReplyBudget()
    var refusals = RefusalLog()
    var lastView: RemoteView?
    var buffer = [UInt8](repeating: 0, count: OSCServer.maxPacket + 1)

    /// A client's address, as the socket gave it.
    struct Peer: Equatable {
        var storage: sockaddr_storage
        var length: socklen_t
        var bytes: [UInt8]
        var port: UInt16

        static func == (a: Peer, b: Peer) -> Bool { a.bytes == b.bytes && a.port == b.port }

        var description: String { bytes.count == 4 ? bytes.map(String.init).joined(separator: ".") + ":\(port)" : "[IPv6]:\(port)" }
    }

    /// Opens and binds the socket. Thread: main.
    public init(
        address: ListenAddress, allow: NetworkList?, hub: RemoteHub, subscribers: Int = OSCServer.maxSubscribers,
        log: @escaping @Sendable (LogLevel, String) -> Void
    ) throws(RemoteError) {
        if let failure = OSCPacket.libraryFailure { throw RemoteError(failure) }
        subscriberLimit = max(1, subscribers)
        self.address = address
        self.allow = allow
        self.hub = hub
        self.log = log
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        fd = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RemoteError("OSC: cannot open a UDP socket (\(String(cString: strerror(errno))))") }
        guard let (socketAddress, length) = Self.socketAddress(address) else {
            close(fd)
            throw RemoteError("OSC: \(address.host) is not an address")
        }
        var storage = socketAddress
        if address.isIPv6 {
            var off: Int32 = 0
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw RemoteError("OSC: cannot listen on udp \(address) (\(why))")
        }
    }

    deinit { close(fd) }

    /// Starts the OSC thread. Thread: main, once.
    public func start() throws(StageThread.StartError) {
        running.store(true, ordering: .releasing)
        thread = try StageThread(.init(name: "stagerack-osc")) { [self] in
            while running.load(ordering: .acquiring) { turn() }
        }
    }

    /// Stops the OSC thread and waits for it (50 ms at most). Thread: main.
    public func stop() {
        guard thread != nil, running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        thread?.join()  // joined, not left to leak
        thread = nil
    }

    /// Waits up to 50 ms for datagrams, handles those waiting (bounded), then sends the
    /// state's changes to the subscribers. Thread: OSC.
    func turn() {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if poll(&p, 1, 50) > 0 {
            for _ in 0..<Self.maxPerTurn {
                guard receiveOne() else { break }
            }
        }
        sendChanges()
        sendReadouts()
        sendTranspose()
        for line in refusals.flush(now: monotonicSeconds()) { log(.warning, "OSC: " + line) }
    }

    /// Whether `peer` may have the state and subscribe: inside `oscAllow`, or loopback when
    /// it is not set.
    func isAllowed(_ peer: Peer) -> Bool {
        if let allow { return allow.contains(peer.bytes) }
        return Self.isLoopback(peer.bytes)
    }

    static func isLoopback(_ b: [UInt8]) -> Bool {
        if b.count == 4 { return b[0] == 127 }
        if b.count == 16 {
            if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return true }
            return b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF && b[12] == 127
        }
        return false
    }

    func refused(_ kind: String, _ text: String) {
        if let line = refusals.note(kind, text, now: monotonicSeconds()) { log(.warning, "OSC: " + line) }
    }

    /// One datagram, if one is waiting. Thread: OSC.
    func receiveOne() -> Bool {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let n = buffer.withUnsafeMutableBytes { b in
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fd, b.baseAddress, b.count, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC), $0, &length)
                }
            }
        }
        guard n >= 0 else { return false }
        packetsReceived.add(1, ordering: .relaxed)
        guard let peer = Self.peer(storage, length) else { return true }
        if let allow, !allow.contains(peer.bytes) {
            packetsRefused.add(1, ordering: .relaxed)  // strangers get no answer
            refused("stranger", "dropped a datagram from \(peer.description): outside oscAllow")
            return true
        }
        let now = monotonicSeconds()
        budget.received(n, from: peer.bytes, allowed: isAllowed(peer), now: now)
        if heardFrom[peer.bytes] != nil { heardFrom[peer.bytes] = now }
        guard n <= Self.maxPacket else {
            reply(RemoteError("message of \(n) bytes: the most taken is \(Self.maxPacket)"), to: peer)
            return true
        }
        let decoded = buffer.withUnsafeMutableBytes { OSCPacket.decode(UnsafeMutableRawBufferPointer(rebasing: $0[0..<n])) }
        switch decoded {
        case .failure(let e): reply(RemoteError(e.message), to: peer)
        case .success(let packet): handle(packet, from: peer)
        }
        return true
    }

    /// Carries out one message from `peer`. Thread: OSC.
    func handle(_ packet: OSCPacket, from peer: Peer) {
        let view = hub.view()
        switch OSCAddressSpace.request(packet, view: view) {
        case .failure(let e): reply(e, to: peer)
        case .success(.command(let c)):
            guard hub.fromOSC.push(c) else { return reply(RemoteError("busy: too many commands waiting; this one is dropped"), to: peer) }
            hub.wakeControl()
        case .success(.subscribe(let port)):
            guard isAllowed(peer) else {
                refused("subscribe", "a subscription from \(peer.description) refused: not allowed (oscAllow)")
                return reply(RemoteError("subscribe: not allowed from this address (oscAllow)"), to: peer)
            }
            var p = peer
            if let port, port != Int(peer.port) {
                guard port >= Self.minSubscribePort, port <= 65535 else {
                    refused("subscribe", "a subscription from \(peer.description) to port \(port) refused")
                    return reply(RemoteError("subscribe: a port of \(Self.minSubscribePort)…65535, or none (the sender's)"), to: peer)
                }
                p.setPort(UInt16(port))
            }
            let now = monotonicSeconds()
            subscribers.removeAll { $0 == p }
            if subscribers.count >= subscriberLimit {
                // The same address's own first, else one idle long enough; never an active one.
                let victim = subscribers.firstIndex { $0.bytes == p.bytes }
                    ?? subscribers.indices.filter { now - (heardFrom[subscribers[$0].bytes] ?? 0) >= Self.subscriberIdleSeconds }
                        .min { (heardFrom[subscribers[$0].bytes] ?? 0) < (heardFrom[subscribers[$1].bytes] ?? 0) }
                guard let victim else {
                    refused("subscribe", "a subscription from \(peer.description) refused: \(subscriberLimit) active subscribers")
                    return reply(RemoteError("subscribe: \(subscriberLimit) subscribers already (oscSubscribers)"), to: peer)
                }
                subscribers.remove(at: victim)
            }
            subscribers.append(p)
            if let line = refusals.note("subscribed", "\(p.description) subscribed (\(subscribers.count) of \(subscriberLimit))", now: now) {
                log(.info, "OSC: " + line)
            }
            heardFrom[p.bytes] = now
            heardFrom = heardFrom.filter { k, _ in subscribers.contains { $0.bytes == k } }
            if lastView == nil { lastView = view }
            sendBudgeted(OSCAddressSpace.state(view), to: p, budgetOf: peer)
        case .success(.unsubscribe):
            subscribers.removeAll { $0.bytes == peer.bytes }
        case .success(.state):
            guard isAllowed(peer) else {
                refused("state", "a state request from \(peer.description) refused: not allowed (oscAllow)")
                return reply(RemoteError("state: not allowed from this address (oscAllow)"), to: peer)
            }
            sendBudgeted(OSCAddressSpace.state(view), to: peer, budgetOf: peer)
        }
    }

    /// Sends all of `packets` to `peer` when they fit `source`'s reply budget, else none.
    func sendBudgeted(_ packets: [OSCPacket], to peer: Peer, budgetOf source: Peer) {
        let encoded = packets.map { $0.encoded() }
        let total = encoded.reduce(0) { $0 + $1.count }
        guard budget.take(total, to: source.bytes, allowed: isAllowed(source), now: monotonicSeconds()) else {
            return refused("rate", "replies to \(source.description) over its budget dropped")
        }
        for bytes in encoded { sendBytes(bytes, to: peer) }
    }

    /// Sends the changes since the last turn to every subscriber. Thread: OSC.
    func sendChanges() {
        guard !subscribers.isEmpty else {
            lastView = nil
            return
        }
        let view = hub.view()
        guard let last = lastView, last.serial != view.serial else {
            if lastView == nil { lastView = view }
            return
        }
        let packets = OSCAddressSpace.changes(from: last, to: view)
        lastView = view
        for p in packets { for s in subscribers { send(p, to: s) } }
    }

    /// Sends each unit readout whose text changed since the last turn (`/stagerack/readout s`,
    /// as `play --status` shows it: `tuner: A4 +0.3 cents (440.08 Hz)`) to every
    /// subscriber. Thread: OSC.
    func sendReadouts() {
        guard !subscribers.isEmpty else {
            lastReadouts = []
            return
        }
        let texts = hub.meters().readouts.map(\.text)
        guard texts != lastReadouts else { return }
        for t in texts where !lastReadouts.contains(t) {
            let p = OSCAddressSpace.readout(t)
            for s in subscribers { send(p, to: s) }
        }
        lastReadouts = texts
    }

    /// Sends the song's transpose (`/stagerack/transpose i`) to every subscriber when it
    /// changed since the last turn. Thread: OSC.
    func sendTranspose() {
        let now = hub.meters().transpose
        guard now != lastTranspose else { return }
        lastTranspose = now
        guard let now else { return }
        for s in subscribers { send(OSCAddressSpace.transpose(now), to: s) }
    }

    func reply(_ e: RemoteError, to peer: Peer) {
        errorsReplied.add(1, ordering: .relaxed)
        sendBudgeted([OSCAddressSpace.error(e)], to: peer, budgetOf: peer)
    }

    func send(_ packet: OSCPacket, to peer: Peer) { sendBytes(packet.encoded(), to: peer) }

    func sendBytes(_ bytes: [UInt8], to peer: Peer) {
        var storage = peer.storage
        _ = bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, b.baseAddress, b.count, Int32(MSG_DONTWAIT), $0, peer.length) }
            }
        }
    }

    // MARK: - socket addresses

    static func socketAddress(_ a: ListenAddress) -> (sockaddr_storage, socklen_t)? {
        var storage = sockaddr_storage()
        if a.isIPv6 {
            var s6 = sockaddr_in6()
            s6.sin6_family = sa_family_t(AF_INET6)
            s6.sin6_port = UInt16(a.port).bigEndian
            guard inet_pton(AF_INET6, a.host, &s6.sin6_addr) == 1 else { return nil }
            withUnsafeMutableBytes(of: &storage) { d in withUnsafeBytes(of: s6) { d.copyMemory(from: $0) } }
            return (storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
        var s4 = sockaddr_in()
        s4.sin_family = sa_family_t(AF_INET)
        s4.sin_port = UInt16(a.port).bigEndian
        guard inet_pton(AF_INET, a.host, &s4.sin_addr) == 1 else { return nil }
        withUnsafeMutableBytes(of: &storage) { d in withUnsafeBytes(of: s4) { d.copyMemory(from: $0) } }
        return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
    }

    static func peer(_ storage: sockaddr_storage, _ length: socklen_t) -> Peer? {
        var s = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let s4 = withUnsafeBytes(of: &s) { $0.load(as: sockaddr_in.self) }
            let bytes = withUnsafeBytes(of: s4.sin_addr) { Array($0) }
            return Peer(storage: storage, length: length, bytes: bytes, port: UInt16(bigEndian: s4.sin_port))
        case AF_INET6:
            let s6 = withUnsafeBytes(of: &s) { $0.load(as: sockaddr_in6.self) }
            let bytes = withUnsafeBytes(of: s6.sin6_addr) { Array($0) }
            return Peer(storage: storage, length: length, bytes: bytes, port: UInt16(bigEndian: s6.sin6_port))
        default:
            return nil
        }
    }
}

extension OSCServer.Peer {
    mutating func setPort(_ p: UInt16) {
        port = p
        withUnsafeMutableBytes(of: &storage) { raw in
            // sin_port and sin6_port sit at the same offset (2) after the family.
            raw.storeBytes(of: p.bigEndian, toByteOffset: 2, as: UInt16.self)
        }
    }
}
