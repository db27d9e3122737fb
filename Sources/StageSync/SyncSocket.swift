import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// A box's address on the sync port: `host:port` as written in `syncFollowers`, resolved to
/// IPv4 (getaddrinfo: a name, e.g. `drums.local` through Avahi's nss-mdns, or an address).
/// Thread: any (a value).
public struct SyncAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    public var description: String { "\(host):\(port)" }

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `host:port`; the error says what is wrong with it.
    public static func parse(_ text: String) -> Result<SyncAddress, SyncError> {
        let t = String(text.filter { $0 != " " && $0 != "\t" })
        guard let colon = t.lastIndex(of: ":"), !t[..<colon].isEmpty else {
            return .failure(SyncError("\"\(text)\" is not HOST:PORT (e.g. 192.168.1.21:9720)"))
        }
        guard let port = UInt16(t[t.index(after: colon)...]), port > 0 else {
            return .failure(SyncError("\"\(text)\": the port must be 1…65535"))
        }
        return .success(SyncAddress(host: String(t[..<colon]), port: port))
    }

    /// A comma- or space-separated list of `host:port`.
    public static func parseList(_ text: String) -> Result<[SyncAddress], SyncError> {
        var out: [SyncAddress] = []
        for part in text.split(whereSeparator: { $0 == "," || $0 == " " }) {
            switch parse(String(part)) {
            case .success(let a): out.append(a)
            case .failure(let e): return .failure(e)
            }
        }
        return out.isEmpty ? .failure(SyncError("no follower given (HOST:PORT, comma-separated)")) : .success(out)
    }

    /// The IPv4 socket address; nil when the name does not resolve (yet).
    func resolved() -> sockaddr_in? {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        guard let sa = first.pointee.ai_addr else { return nil }
        return UnsafeRawPointer(sa).load(as: sockaddr_in.self)
    }
}

/// The sync port's UDP socket (IPv4, every interface): datagrams in without waiting longer
/// than asked, datagrams out to a socket address. Thread: the sync thread (after `init` on
/// main).
final class SyncSocket {
    let fd: Int32
    var buffer = [UInt8](repeating: 0, count: 2048)

    init(port: UInt16) throws(SyncError) {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SyncError("sync: cannot open a UDP socket (\(String(cString: strerror(errno))))") }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = 0
        let rc = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw SyncError("sync: cannot listen on udp port \(port) (\(why)): is another program (or another stagerack) using it? Set syncPort")
        }
    }

    deinit { close(fd) }

    /// Waits up to `milliseconds` for a datagram.
    func wait(milliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) > 0
    }

    /// One waiting datagram and where it came from (`body` sees the bytes; longer ones are
    /// truncated and reported as such by the decoder); nil when none waits.
    func receive<T>(_ body: (UnsafeMutableRawBufferPointer, sockaddr_in) -> T) -> T? {
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = buffer.withUnsafeMutableBytes { b in
            withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, b.baseAddress, b.count, Int32(MSG_DONTWAIT), $0, &length) }
            }
        }
        guard n >= 0 else { return nil }
        return buffer.withUnsafeMutableBytes { b in body(UnsafeMutableRawBufferPointer(rebasing: b[0..<n]), from) }
    }

    func send(_ bytes: [UInt8], to address: sockaddr_in) {
        var a = address
        _ = bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, b.baseAddress, b.count, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// `a.b.c.d:port`, for log lines.
    static func text(_ a: sockaddr_in) -> String {
        var addr = a.sin_addr
        var text = [CChar](repeating: 0, count: 32)
        inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
        return "\(String(cBuffer: text)):\(UInt16(bigEndian: a.sin_port))"
    }

    static func same(_ a: sockaddr_in, _ b: sockaddr_in) -> Bool {
        a.sin_addr.s_addr == b.sin_addr.s_addr && a.sin_port == b.sin_port
    }
}
