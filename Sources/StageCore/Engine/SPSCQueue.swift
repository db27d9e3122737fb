import Synchronization

/// A bounded single-producer/single-consumer ring of plain values, allocated once.
///
/// `push` is called by exactly one producer thread, `pop`/`peek` by exactly one consumer
/// thread; neither allocates, locks or blocks. Head and tail live on separate cache lines,
/// each side caches the other's index. Thread: one producer, one consumer.
public final class SPSCQueue<Element: BitwiseCopyable>: @unchecked Sendable {
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    @usableFromInline let mask: Int
    public let capacity: Int

    // Consumer-owned line.
    @usableFromInline let head = Atomic<Int>(0)
    @usableFromInline var cachedTail = 0
    @usableFromInline var padding1: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    // Producer-owned line.
    @usableFromInline let tail = Atomic<Int>(0)
    @usableFromInline var cachedHead = 0
    @usableFromInline var padding2: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)

    /// A queue holding at least `minimumCapacity` elements (rounded up to a power of two).
    public init(minimumCapacity: Int) {
        var size = 2
        while size < minimumCapacity + 1 { size <<= 1 }
        storage = .allocate(capacity: size)
        mask = size - 1
        capacity = size - 1
    }

    deinit { storage.deallocate() }

    /// Appends `element`; false when the queue is full (the element is dropped).
    /// Thread: producer.
    @inlinable
    @discardableResult
    public func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let next = (t + 1) & mask
        if next == cachedHead {
            cachedHead = head.load(ordering: .acquiring)
            if next == cachedHead { return false }
        }
        (storage + t).initialize(to: element)
        tail.store(next, ordering: .releasing)
        return true
    }

    /// The oldest element without removing it. Thread: consumer.
    @inlinable
    public func peek() -> Element? {
        let h = head.load(ordering: .relaxed)
        if h == cachedTail {
            cachedTail = tail.load(ordering: .acquiring)
            if h == cachedTail { return nil }
        }
        return storage[h]
    }

    /// Removes and returns the oldest element. Thread: consumer.
    @inlinable
    public func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        if h == cachedTail {
            cachedTail = tail.load(ordering: .acquiring)
            if h == cachedTail { return nil }
        }
        let e = storage[h]
        head.store((h + 1) & mask, ordering: .releasing)
        return e
    }

    /// Elements waiting (exact only when both sides are idle). Thread: any.
    public var approximateCount: Int {
        (tail.load(ordering: .acquiring) - head.load(ordering: .acquiring)) & mask
    }
}
