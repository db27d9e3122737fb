import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Times some thread pushed to or popped from an `SPSCQueue` it does not own, over every
/// queue of the process. Stays 0 in a correct program; the stress tests check it. Thread: any.
public let queueOwnershipViolations = Atomic<Int>(0)

/// A bounded single-producer/single-consumer ring of plain values, allocated once.
///
/// `push` is called by exactly one producer thread, `pop`/`peek` by exactly one consumer
/// thread; neither allocates, locks or blocks. Head and tail live on separate cache lines,
/// each side caches the other's index.
///
/// Ownership is checked, not only documented: the first thread to push becomes the
/// producer and the first to pop or peek the consumer; any other thread that does so later
/// is counted in `ownershipViolations` (and `queueOwnershipViolations`), and traps in builds
/// made with `-D STAGERACK_QUEUE_OWNER_TRAPS` (`make tsan`). When a thread is replaced
/// (the audio thread after a lost device), whoever arranges the replacement calls
/// `handOverProducer()`/`handOverConsumer()` after the old thread has stopped and before
/// the new one starts: the next thread to use that side becomes its owner.
/// Every queue's declaration names its producer and consumer thread. Thread: one producer,
/// one consumer.
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

    // Owners (0: not claimed yet) and the count of uses by other threads.
    @usableFromInline let producerOwner = Atomic<UInt>(0)
    @usableFromInline let consumerOwner = Atomic<UInt>(0)
    @usableFromInline let violations = Atomic<Int>(0)

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
        checkOwner(producerOwner, side: "push")
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
        checkOwner(consumerOwner, side: "pop")
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
        checkOwner(consumerOwner, side: "pop")
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

    /// Pushes or pops by a thread that did not own that side. Thread: any.
    public var ownershipViolations: Int { violations.load(ordering: .relaxed) }

    /// Lets the next thread that pushes become the producer. Thread: the one arranging a
    /// thread replacement, while neither the old nor the new producer runs.
    public func handOverProducer() { producerOwner.store(0, ordering: .releasing) }

    /// Lets the next thread that pops become the consumer. Thread: as `handOverProducer`.
    public func handOverConsumer() { consumerOwner.store(0, ordering: .releasing) }

    @inlinable
    @inline(__always)
    func checkOwner(_ owner: borrowing Atomic<UInt>, side: StaticString) {
        let me = UInt(pthread_self())
        let current = owner.load(ordering: .relaxed)
        if current == me { return }
        if current == 0 && owner.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing).exchanged { return }
        violations.add(1, ordering: .relaxed)
        queueOwnershipViolations.add(1, ordering: .relaxed)
        #if STAGERACK_QUEUE_OWNER_TRAPS
        fatalError("SPSCQueue: a second thread called \(side) on a single-owner queue")
        #endif
    }
}
