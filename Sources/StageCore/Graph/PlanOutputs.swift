/// One output unit of a compiled rack: where it plays and how late each input reaches it.
public struct PlanOutput: Sendable, Equatable {
    /// The output unit's id.
    public var unitID: String
    /// The playback device channels it plays on, counted from 0.
    public var deviceChannels: [Int]
    /// The largest latency along any path into it, in frames.
    public var latencyFrames: Int
    /// Each input unit that reaches it, with its fastest and slowest path (rack order).
    public var paths: [InputPath]

    public init(unitID: String, deviceChannels: [Int], latencyFrames: Int, paths: [InputPath]) {
        self.unitID = unitID
        self.deviceChannels = deviceChannels
        self.latencyFrames = latencyFrames
        self.paths = paths
    }
}

/// The latency of one input unit's paths to one output, in frames: a dry voice may reach
/// the speakers at once while a pitch-shifted double of it comes 14.5 ms later.
public struct InputPath: Sendable, Equatable {
    public var inputID: String
    public var fastestFrames: Int
    public var slowestFrames: Int

    public init(inputID: String, fastestFrames: Int, slowestFrames: Int) {
        self.inputID = inputID
        self.fastestFrames = fastestFrames
        self.slowestFrames = slowestFrames
    }
}

extension GraphCompiler {
    /// The device channels of each output node (0-based), in the order given: what the rack
    /// names, else the lowest pair no output names (a mono output names its one channel).
    /// Reports two outputs on the same channel. Thread: control.
    func assignOutputChannels(_ outputs: [Int], _ nodes: [Node], report: (SourceLocation?, String, String) -> Void)
        -> [Int: [Int]]
    {
        var assigned: [Int: [Int]] = [:]
        var owner: [Int: Int] = [:]  // device channel → output node
        for o in outputs {
            guard let channels = nodes[o].type.hostChannels(nodes[o].description.settings) else { continue }
            for c in channels {
                if let other = owner[c] {
                    report(
                        nodes[o].description.location, "units.\(nodes[o].id).channels",
                        "device channel \(c + 1) is already \"\(nodes[other].id)\"'s: each output needs channels of its own")
                } else {
                    owner[c] = o
                }
            }
            assigned[o] = channels
        }
        var next = 0
        for o in outputs where assigned[o] == nil {
            while owner[next] != nil || owner[next + 1] != nil { next += 2 }
            assigned[o] = [next, next + 1]
            owner[next] = o
            owner[next + 1] = o
        }
        return assigned
    }

    /// For each output, each input unit's fastest and slowest path to it (frames), from
    /// the units' own latencies. `latency[n]` is node n's latency; `order` the render order.
    func inputPaths(
        outputs: [Int], inputs: [Int], nodes: [Node], order: [Int], latency: (Int) -> Int
    ) -> [Int: [InputPath]] {
        var result: [Int: [InputPath]] = [:]
        for i in inputs {
            var reach = [(Int, Int)?](repeating: nil, count: nodes.count)
            for n in order {
                if n == i {
                    reach[n] = (latency(n), latency(n))
                    continue
                }
                let upstream = nodes[n].sources.compactMap { $0 }.compactMap { reach[$0] }
                guard let fastest = upstream.map(\.0).min(), let slowest = upstream.map(\.1).max() else { continue }
                reach[n] = (fastest + latency(n), slowest + latency(n))
            }
            for o in outputs {
                guard let r = reach[o] else { continue }
                result[o, default: []].append(InputPath(inputID: nodes[i].id, fastestFrames: r.0, slowestFrames: r.1))
            }
        }
        return result
    }
}

extension GraphCompiler {
    /// The playback channels `rack` needs: past its highest output channel (at least 2),
    /// without making any unit. Thread: any.
    public func outputChannelCount(_ rack: RackDescription) -> Int {
        let context = UnitBuildContext(sampleRate: 48000, hostInputChannels: 1)
        var nodes: [Node] = []
        for u in rack.units {
            guard let type = registry.type(named: u.type), type.role == .hostOutput else { continue }
            nodes.append(Node(id: u.id, type: type, description: u, layout: type.layout(u.settings, context), sources: []))
        }
        let channels = assignOutputChannels(Array(nodes.indices), nodes) { _, _, _ in }
        return max(2, (channels.values.flatMap { $0 }.max() ?? 1) + 1)
    }
}
