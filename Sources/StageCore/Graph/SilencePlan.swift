/// Who hears whom in a compiled plan: what the engine needs to skip units nobody hears
/// (`UnitSilence`). Built by the compiler from the graph and the unit types' opt-ins.
/// Thread: control builds it; the render thread reads the engine's copy (`EngineSilence`).
public struct SilencePlan: Sendable {
    /// One connection: unit `from` feeds unit `to`, through `gate` when `to` can silence
    /// that input (a mixer's fader and mute).
    public struct Edge: Sendable {
        public var from: Int
        public var to: Int
        public var gate: InputGate?
        public init(from: Int, to: Int, gate: InputGate?) {
            self.from = from
            self.to = to
            self.gate = gate
        }
    }

    /// Per unit (plan order): whether it may be skipped while unheard.
    public var skippable: [Bool]
    public var edges: [Edge]

    /// Per unit: whether it sleeps while its inputs are silent and its tail has ended
    /// (`UnitSilence.sleepsWhenSilent`, EngineSilence).
    public var sleeps: [Bool] = []
    /// Per unit, per input bus: the unit feeding it, or −1 (unconnected: silence).
    public var sources: [[Int]] = []

    public init(skippable: [Bool], edges: [Edge]) {
        self.skippable = skippable
        self.edges = edges
    }

    public static let none = SilencePlan(skippable: [], edges: [])

    /// True when no unit may be skipped (the engine then does no silence work at all).
    public var isEmpty: Bool { !skippable.contains(true) || !edges.contains { $0.gate != nil } }
}
