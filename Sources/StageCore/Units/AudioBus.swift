/// A bus: some channels of non-interleaved Float samples, one block long.
///
/// A plain value over memory owned by a render plan; copying it copies pointers only.
/// Thread: render (the memory is only valid while its plan is alive).
public struct AudioBus: @unchecked Sendable {
    /// Pointers to the first sample of each channel.
    public let channelPointers: UnsafePointer<UnsafeMutablePointer<Float>>
    public let channelCount: Int

    public init(channelPointers: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int) {
        self.channelPointers = channelPointers
        self.channelCount = channelCount
    }

    /// The samples of channel `channel`.
    @inline(__always)
    public subscript(channel: Int) -> UnsafeMutablePointer<Float> {
        channelPointers[channel]
    }

    /// Writes zeros into the first `frames` samples of every channel.
    @inline(__always)
    public func clear(frames: Int) {
        for c in 0..<channelCount { channelPointers[c].update(repeating: 0, count: frames) }
    }
}

/// Memory for buses: one slab of channel buffers allocated up front. Thread: control
/// (creation and release); the buses it hands out are used on the render thread.
public final class BusStorage: @unchecked Sendable {
    public let maxFrames: Int
    public let bufferCount: Int
    private let samples: UnsafeMutablePointer<Float>
    private let pointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// `bufferCount` mono buffers of `maxFrames` samples each, zeroed.
    public init(bufferCount: Int, maxFrames: Int) {
        self.maxFrames = maxFrames
        self.bufferCount = bufferCount
        // Round each buffer to 16 floats so channels start on 64-byte lines.
        let stride = (maxFrames + 15) & ~15
        samples = .allocate(capacity: max(bufferCount * stride, 1))
        samples.initialize(repeating: 0, count: max(bufferCount * stride, 1))
        pointers = .allocate(capacity: max(bufferCount, 1))
        for i in 0..<bufferCount { (pointers + i).initialize(to: samples + i * stride) }
    }

    deinit {
        samples.deallocate()
        pointers.deallocate()
    }

    /// The buffer with index `index`.
    public func buffer(_ index: Int) -> UnsafeMutablePointer<Float> { pointers[index] }

    /// A bus over the consecutive buffers `first ..< first+channels`.
    public func bus(first: Int, channels: Int) -> AudioBus {
        AudioBus(channelPointers: UnsafePointer(pointers + first), channelCount: channels)
    }
}

/// A fixed table of channel-pointer lists, for buses whose channels are not consecutive
/// in a `BusStorage`. Thread: control builds it, render reads it.
public final class ChannelTable: @unchecked Sendable {
    private let pointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let capacity: Int
    private var used = 0

    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
        pointers = .allocate(capacity: self.capacity)
    }

    deinit { pointers.deallocate() }

    /// Stores `channels` and returns a bus over them.
    public func bus(_ channels: [UnsafeMutablePointer<Float>]) -> AudioBus {
        precondition(used + channels.count <= capacity, "ChannelTable too small")
        let start = pointers + used
        for (i, p) in channels.enumerated() { (start + i).initialize(to: p) }
        used += channels.count
        return AudioBus(channelPointers: UnsafePointer(start), channelCount: channels.count)
    }
}
