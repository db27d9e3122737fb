import Foundation

/// Runs `body` on a new thread and returns when it has finished: for tests where work must
/// happen on a thread other than the one that renders next (a rack warmed on the control
/// thread, its queues then handed over). Thread: any (blocks the caller).
public func runOnAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.start()
    done.wait()
}
