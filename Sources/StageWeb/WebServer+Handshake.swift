import CWebSockets
import Foundation
import StageCore
import StageRemote

#if canImport(Glibc)
import Glibc
#endif

/// The handshake's checks and the peer's identity: the `Host` values this server answers to
/// (its addresses), headers read with their length bounded, the source key of the PIN lock
/// and of eviction. Thread: web.
extension WebServer {
    /// Counts and logs (once a minute per class) a refused handshake; false.
    func refuse(_ kind: String, _ text: String, _ now: Double) -> Bool {
        handshakesRefused.add(1, ordering: .relaxed)
        if let line = refusals.note(kind, text, now: now) { log(.warning, "web: " + line) }
        return false
    }

    static func shown(_ s: String?) -> String {
        guard let s else { return "(none)" }
        return s.count > 80 ? String(s.prefix(80)) + "…" : s
    }

    /// The Host values to answer to: the listen address, or every address of the machine
    /// when it listens on all; `localhost` for loopback; `HOSTNAME` and `HOSTNAME.local`.
    func servedHosts() -> Set<String> {
        let a = options.address
        var hostname = [CChar](repeating: 0, count: 256)
        let name = gethostname(&hostname, hostname.count - 1) == 0 ? String(cBuffer: hostname) : nil
        return WebSecurity.servedHosts(
            addresses: a.isWildcard ? Self.machineAddresses() : [a.host], port: a.port, tls: options.tls != nil, hostname: name)
    }

    /// Every IPv4 and IPv6 address of this machine's interfaces, as text.
    static func machineAddresses() -> [String] {
        var out: [String] = []
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return ["127.0.0.1", "::1"] }
        var p = list
        while let e = p {
            if let sa = e.pointee.ifa_addr {
                var text = [CChar](repeating: 0, count: 64)
                if sa.pointee.sa_family == sa_family_t(AF_INET) {
                    var sin = UnsafeRawPointer(sa).load(as: sockaddr_in.self)
                    inet_ntop(AF_INET, &sin.sin_addr, &text, socklen_t(text.count))
                    out.append(String(cBuffer: text))
                } else if sa.pointee.sa_family == sa_family_t(AF_INET6) {
                    var sin6 = UnsafeRawPointer(sa).load(as: sockaddr_in6.self)
                    inet_ntop(AF_INET6, &sin6.sin6_addr, &text, socklen_t(text.count))
                    out.append(String(cBuffer: text))
                }
            }
            p = e.pointee.ifa_next
        }
        freeifaddrs(list)
        return out
    }

    /// A new socket (`fd`, accepted): refused when its source has `maxConnectionsPerSource`
    /// open already. The table is keyed by descriptor, so each entry of the source is checked
    /// (still open, still that peer) before it counts: closed ones drop out.
    func acceptConnection(_ fd: Int32) -> Bool {
        guard fd >= 0, let key = Self.peerKey(fd) else { return true }
        var open = 0
        for (f, k) in connections where k == key && f != fd {
            if Self.peerKey(f) == key { open += 1 } else { connections[f] = nil }
        }
        guard open < Self.maxConnectionsPerSource else {
            connections[fd] = nil
            return refuse("connections", "refused a connection from \(key): \(Self.maxConnectionsPerSource) open already", monotonicSeconds())
        }
        connections[fd] = key
        return true
    }

    /// The source key of the peer of socket `fd`, or nil when it is none.
    static func peerKey(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let r = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) } }
        guard r == 0 else { return nil }
        var text = [CChar](repeating: 0, count: 64)
        switch Int32(storage.ss_family) {
        case AF_INET:
            var s4 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            inet_ntop(AF_INET, &s4.sin_addr, &text, socklen_t(text.count))
        case AF_INET6:
            var s6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            inet_ntop(AF_INET6, &s6.sin6_addr, &text, socklen_t(text.count))
        default:
            return nil
        }
        return sourceKey(String(cBuffer: text))
    }

    /// The peer's address as the PIN lock's key: IPv4 as is (also when mapped into IPv6),
    /// IPv6 as its /64 network (one machine usually holds many addresses of one).
    static func source(of wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard stage_lws_peer(wsi, &buffer, buffer.count) == 0 else { return "?" }
        return sourceKey(String(cBuffer: buffer))
    }

    static func sourceKey(_ text: String) -> String {
        if text.lowercased().hasPrefix("::ffff:"), text.contains(".") { return String(text.dropFirst(7)) }
        var a6 = in6_addr()
        guard text.contains(":"), inet_pton(AF_INET6, text, &a6) == 1 else { return text }
        let bytes = withUnsafeBytes(of: a6) { Array($0.prefix(8)) }
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":") + "::/64"
    }

    enum Header {
        case absent, tooLong
        case value(String)
        var text: String? {
            if case .value(let s) = self { return s }
            return nil
        }
    }

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> Header {
        var buffer = [CChar](repeating: 0, count: WebSecurity.maxHeaderBytes + 1)
        switch stage_lws_header(wsi, token, &buffer, Int32(buffer.count)) {
        case -2: return .tooLong
        case ..<0: return .absent
        default: return .value(String(cBuffer: buffer))
        }
    }
}
