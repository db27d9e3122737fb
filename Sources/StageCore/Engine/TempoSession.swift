/// A tempo and beat grid shared with other programs on the network, which the playing rack
/// follows (`play --link`: Ableton Link, `StageLink.LinkSession`). The rack player asks it
/// once a block, before rendering, where the session is, and after rendering proposes the
/// tempo this box gives (its MIDI clock, its taps; the whole rack's while no peer shares
/// the session). Implementations must not allocate, lock, log or call Foundation.
/// Thread: render (both methods).
public protocol TempoSession: AnyObject {
    /// The session at the first frame of the block about to render: its tempo, the beat
    /// there for `quantum` beats a bar (the same phase on every peer; the rack's bar,
    /// `RenderEngine.beatsPerBar`), and whether any peer shares it.
    func read(quantum: Double) -> TempoSessionState
    /// Proposes `tempo` (BPM) to the session from the last block read on; peers follow.
    func propose(tempo: Double)
}

/// Where a shared session is at one block. Plain value. Thread: any (a value).
public struct TempoSessionState: Sendable, Equatable, BitwiseCopyable {
    public var tempo: Double
    public var beat: Double
    /// Whether another program shares the session (peers > 0).
    public var shared: Bool

    public init(tempo: Double, beat: Double, shared: Bool) {
        self.tempo = tempo
        self.beat = beat
        self.shared = shared
    }
}
