#if canImport(Glibc)
import Glibc
#endif

/// A value under a POSIX mutex, for state shared by threads that are not real time (main,
/// control, MIDI, disk, web): never used on the render thread.
///
/// Why not the standard library's `Synchronization.Mutex`: on Linux it is built on raw futex
/// calls the thread sanitizer cannot see, so `make tsan` reported every value it guards as a
/// data race (the preset switcher's request mailbox, under the live stress test). A
/// `pthread_mutex_t` is intercepted by the sanitizer, so the locking is checked, not assumed.
/// Thread: any (except render).
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the lock held. Thread: any (except render).
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
