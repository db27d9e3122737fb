/// Which sequencer ports the rack's MIDI client connects to: the rack's `midi.connect`
/// patterns, or by default every hardware port. Pure rules, no ALSA calls.
/// Thread: any (a value).
public struct MIDIPortRules: Sendable, Equatable {
    /// Glob patterns (`*`, `?`, case-insensitive) on the client name, the port name, or
    /// `client:port`. Empty: the default rule.
    public var patterns: [String]
    /// Our own client, never connected.
    public var ownClient: Int

    public init(patterns: [String], ownClient: Int) {
        self.patterns = patterns
        self.ownClient = ownClient
    }

    public static let systemClient = 0
    public static let throughClientName = "Midi Through"

    /// True when `port` is a source our input should receive from.
    public func acceptsSource(_ port: SequencerPort) -> Bool {
        port.isReadable && accepts(port)
    }

    /// True when `port` is a destination for feedback (a controller's input).
    public func acceptsDestination(_ port: SequencerPort) -> Bool {
        port.isWritable && accepts(port)
    }

    func accepts(_ port: SequencerPort) -> Bool {
        guard port.client != ownClient, port.client != Self.systemClient else { return false }
        if patterns.isEmpty {
            // Every hardware port: kernel clients, except Midi Through.
            return port.isKernelClient && port.clientName != Self.throughClientName
        }
        let names = [port.clientName, port.portName, "\(port.clientName):\(port.portName)"]
        return patterns.contains { p in names.contains { Self.glob(p, $0) } }
    }

    /// Shell-style wildcard match, case-insensitive: `*` any run, `?` one character.
    public static func glob(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.lowercased())
        let t = Array(text.lowercased())
        var pi = 0
        var ti = 0
        var star = -1
        var mark = 0
        while ti < t.count {
            if pi < p.count && (p[pi] == "?" || p[pi] == t[ti]) {
                pi += 1
                ti += 1
            } else if pi < p.count && p[pi] == "*" {
                star = pi
                mark = ti
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < p.count && p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
