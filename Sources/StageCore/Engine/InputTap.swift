import Synchronization

/// The engine's input copied out while armed, for a control thread that wants to hear it
/// (the page's guided soundcheck records the live input of the running show through it).
///
/// One channel of the input bus `RackPlayer.render` receives (the one `arm` names) goes
/// sample by sample into `ring`, a lock-free single-producer/single-consumer queue
/// allocated once at `init`: nothing is copied while disarmed, nothing is allocated or
/// locked on the render thread, and samples the reader has not taken in time are dropped
/// and counted (`dropped`), never waited for.
/// `ring`: producer the render thread, consumer the thread that calls `drain` (the remote
/// hub's control thread). Thread: `take` on the render thread; `arm`, `disarm`, `drain`
/// on that one consumer thread.
public final class InputTap: @unchecked Sendable {
    /// Producer: the render thread (`take`). Consumer: the control thread (`drain`).
    let ring: SPSCQueue<Float>
    let armed = Atomic<Bool>(false)
    let channel = Atomic<Int>(0)
    let droppedCount = Atomic<Int>(0)

    /// A tap holding up to `seconds` at `sampleRate` between two `drain`s.
    public init(seconds: Double = 2, sampleRate: Double = 48000) {
        ring = SPSCQueue(minimumCapacity: Int(seconds * sampleRate))
    }

    /// Samples dropped since the last `arm` (the reader fell behind by the whole ring).
    public var dropped: Int { droppedCount.load(ordering: .relaxed) }
    public var isArmed: Bool { armed.load(ordering: .acquiring) }

    /// Starts copying channel `channel` (0-based; the input's last channel when it has
    /// fewer), emptying what an earlier take left. Thread: the consumer.
    public func arm(channel c: Int) {
        while ring.pop() != nil {}
        droppedCount.store(0, ordering: .relaxed)
        channel.store(max(c, 0), ordering: .relaxed)
        armed.store(true, ordering: .releasing)
    }

    /// Stops copying. Thread: the consumer.
    public func disarm() { armed.store(false, ordering: .releasing) }

    /// Copies `frames` of the input's armed channel. Thread: render (no allocation, no lock).
    @inline(__always)
    public func take(_ input: AudioBus?, frames: Int) {
        guard armed.load(ordering: .acquiring), let input, input.channelCount > 0 else { return }
        let samples = input[min(channel.load(ordering: .relaxed), input.channelCount - 1)]
        for i in 0..<frames where !ring.push(samples[i]) {
            droppedCount.add(frames - i, ordering: .relaxed)
            return
        }
    }

    /// A new render thread takes over (a device lost and back). Thread: main, between the
    /// old render thread's end and the new one's start.
    public func handOverRenderThread() { ring.handOverProducer() }

    /// Appends what the render thread copied to `buffer`, at most `limit` samples in all
    /// (the rest is left). Thread: the consumer.
    public func drain(into buffer: inout [Float], limit: Int) {
        while buffer.count < limit, let v = ring.pop() { buffer.append(v) }
    }
}
