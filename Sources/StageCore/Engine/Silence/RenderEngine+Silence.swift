/// What the silence system (`EngineSilence`) is doing, for tests, benchmarks and the
/// status: the render thread's state, read by the render thread or by the control thread
/// while no block renders.
extension RenderEngine {
    /// Whether units nobody hears are skipped (the default; false renders every unit
    /// always, for comparisons). Thread: render, or control when idle.
    public var skipsUnheardUnits: Bool {
        get { silence.enabled }
        set { silence.enabled = newValue }
    }

    /// Whether unit `u` sleeps now because it has nothing to say (EngineSilence). Thread:
    /// render, or control when idle.
    public func isSleeping(unit u: Int) -> Bool { silence.asleep[u] }

    /// Whether unit `u`'s output was flagged silent in the last segment rendered. Thread:
    /// render, or control when idle.
    public func isOutputSilent(unit u: Int) -> Bool { silence.outputSilent[u] }

    /// Times units went to sleep on silence and woke again. Thread: render, or control when idle.
    public var sleepCounts: (sleeps: Int, wakes: Int) { (silence.sleepCount, silence.wakeCount) }

    /// Segments unit `u` rendered so far (a unit nobody hears renders none). Thread: render,
    /// or control when idle.
    public func renderCount(unit u: Int) -> Int { silence.renders[u] }

    /// Whether unit `u` is being skipped because nobody hears it. Thread: render, or control when idle.
    public func isSkipping(unit u: Int) -> Bool { silence.isUnheard(u) }
}
