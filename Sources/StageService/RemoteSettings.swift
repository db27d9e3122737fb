/// Where a server listens: `PORT` (localhost), `ADDR:PORT` or `[IPv6]:PORT`, as
/// `play --osc` and `--web` take it. `*` or `0.0.0.0` listens on every IPv4 interface,
/// `[::]` on every interface. Thread: any (a value).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// A numeric address (IPv4 dotted or IPv6), never a name.
    public var host: String
    public var port: Int
    public var isIPv6: Bool { host.contains(":") }
    /// True when only this machine can reach it.
    public var isLoopback: Bool { host == "127.0.0.1" || host.hasPrefix("127.") || host == "::1" }
    /// True when it listens on every interface.
    public var isWildcard: Bool { host == "0.0.0.0" || host == "::" }

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `[ADDR:]PORT`; nil with the reason in `problem`.
    public static func parse(_ text: String) -> Result<ListenAddress, ListenAddressError> {
        let t = text.trimmingSpaces
        var host = "127.0.0.1"
        var portText = Substring(t)
        if t.hasPrefix("[") {
            guard let close = t.firstIndex(of: "]"), t[t.index(after: close)...].hasPrefix(":") else {
                return .failure(ListenAddressError("\"\(text)\": an IPv6 address is written [ADDR]:PORT"))
            }
            host = String(t[t.index(after: t.startIndex)..<close])
            portText = t[t.index(close, offsetBy: 2)...]
            guard IPAddress.bytes(host) != nil, host.contains(":") else {
                return .failure(ListenAddressError("\"\(host)\" is not an IPv6 address"))
            }
        } else if let colon = t.lastIndex(of: ":") {
            host = String(t[..<colon])
            portText = t[t.index(after: colon)...]
            if host == "*" { host = "0.0.0.0" }
            if host == "localhost" { host = "127.0.0.1" }
            guard IPAddress.bytes(host) != nil, !host.contains(":") else {
                return .failure(ListenAddressError("\"\(host)\" is not an IPv4 address (a name is not taken: write 0.0.0.0 for every interface, or the Pi's address)"))
            }
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            return .failure(ListenAddressError("\"\(text)\": the port must be a number 1…65535"))
        }
        return .success(ListenAddress(host: host, port: port))
    }

    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

public struct ListenAddressError: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// Numeric IP addresses as bytes (4 for IPv4, 16 for IPv6), pure Swift. Thread: any.
public enum IPAddress {
    /// The bytes of a dotted IPv4 or a colon IPv6 address (`::` shortening, an IPv4 tail), or nil.
    public static func bytes(_ text: String) -> [UInt8]? {
        if !text.contains(":") { return ipv4(Substring(text)) }
        return ipv6(text)
    }

    static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for p in parts {
            guard !p.isEmpty, p.count <= 3, p.allSatisfy(\.isASCII), let n = Int(p), (0...255).contains(n) else { return nil }
            out.append(UInt8(n))
        }
        return out
    }

    static func ipv6(_ text: String) -> [UInt8]? {
        guard text.count <= 45 else { return nil }
        // Split at "::" (at most one), without Foundation.
        var halves: [String] = [text]
        let chars = Array(text)
        if let i = chars.indices.dropLast().first(where: { chars[$0] == ":" && chars[$0 + 1] == ":" }) {
            halves = [String(chars[..<i]), String(chars[(i + 2)...])]
            if halves[1].hasPrefix(":") || halves[1].contains("::") { return nil }
        }
        func groups(_ s: String) -> [UInt8]? {
            if s.isEmpty { return [] }
            var out: [UInt8] = []
            let parts = s.split(separator: ":", omittingEmptySubsequences: false)
            for (i, p) in parts.enumerated() {
                if i == parts.count - 1, p.contains("."), let v4 = ipv4(p) { return out + v4 }
                guard (1...4).contains(p.count), let n = UInt16(p, radix: 16) else { return nil }
                out += [UInt8(n >> 8), UInt8(n & 0xFF)]
            }
            return out
        }
        guard let head = groups(halves[0]) else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1]), head.count + tail.count < 16 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}

/// The networks a server takes messages from (`oscAllow`: `192.168.1.0/24, 10.0.0.5`),
/// IPv4 and IPv6; an IPv4-mapped IPv6 source (`::ffff:a.b.c.d`) matches its IPv4 network.
/// Thread: any (a value).
public struct NetworkList: Sendable, Equatable, CustomStringConvertible {
    public struct Network: Sendable, Equatable {
        public var bytes: [UInt8]
        public var prefix: Int
    }

    public var networks: [Network]
    public let text: String

    /// Parses a comma- or space-separated list of `ADDR[/PREFIX]`.
    public static func parse(_ text: String) -> Result<NetworkList, ListenAddressError> {
        var list: [Network] = []
        for item in text.split(whereSeparator: { $0 == "," || $0 == " " }) {
            let parts = item.split(separator: "/", maxSplits: 1)
            guard let bytes = IPAddress.bytes(String(parts[0])) else {
                return .failure(ListenAddressError("\"\(item)\" is not an address or a network (ADDR/PREFIX)"))
            }
            let bits = bytes.count * 8
            var prefix = bits
            if parts.count == 2 {
                guard let p = Int(parts[1]), (0...bits).contains(p) else {
                    return .failure(ListenAddressError("\"\(item)\": the prefix must be 0…\(bits)"))
                }
                prefix = p
            }
            list.append(Network(bytes: bytes, prefix: prefix))
        }
        guard !list.isEmpty else { return .failure(ListenAddressError("no network given")) }
        return .success(NetworkList(networks: list, text: text))
    }

    /// Whether the source address `bytes` (4 or 16) is inside one of the networks.
    public func contains(_ source: [UInt8]) -> Bool {
        var s = source
        if s.count == 16, s[0..<10].allSatisfy({ $0 == 0 }), s[10] == 0xFF, s[11] == 0xFF { s = Array(s[12...]) }
        return networks.contains { n in
            guard n.bytes.count == s.count else { return false }
            var left = n.prefix
            for i in 0..<s.count where left > 0 {
                let take = min(left, 8)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
                if s[i] & mask != n.bytes[i] & mask { return false }
                left -= take
            }
            return true
        }
    }

    public var description: String { text }
}
