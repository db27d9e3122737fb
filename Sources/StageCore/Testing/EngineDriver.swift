/// Plays one `RenderEngine` directly, as a `RackPlayer` does live but without racks to
/// switch: owns a queue of events in time order and, before each block, injects the ones
/// due (`RenderEngine.inject`), then renders. An event the engine cannot take in this block
/// stays first in the queue for the next (counted in `deferredBlocks`). For tests and
/// benchmarks; the engine itself has no queue of its own.
///
/// Thread: one thread pushes and renders (a test, a benchmark); `events` names it as both
/// its producer and its consumer.
public final class EngineDriver: @unchecked Sendable {
    public let engine: RenderEngine
    /// Events in time order, in the engine's time base (`EngineEvent.now`: the next block's
    /// first frame). Producer and consumer: the driving thread.
    public let events: SPSCQueue<EngineEvent>
    /// Blocks in which events were due but the engine's per-block list was full.
    public private(set) var deferredBlocks = 0

    public init(engine: RenderEngine, queueCapacity: Int = 4096) {
        self.engine = engine
        events = SPSCQueue(minimumCapacity: queueCapacity)
    }

    /// Queues `event`; false when the queue is full. Thread: the driving thread.
    @discardableResult
    public func push(_ event: EngineEvent) -> Bool { events.push(event) }

    /// Injects the events due before the block's end, then renders `frameCount` frames.
    /// Allocates nothing. Thread: the driving thread.
    public func render(frameCount: Int) {
        let blockEnd = engine.sampleTime + Int64(frameCount)
        while let e = events.peek(), e.sampleTime < blockEnd {
            guard engine.inject(e) else {
                deferredBlocks &+= 1
                break
            }
            _ = events.pop()
        }
        engine.render(frameCount: frameCount)
    }
}
