import CStageShim
#if canImport(Glibc)
import Glibc
#endif

/// Starts a thread with SCHED_FIFO when the system allows it, a normal one otherwise.
/// Thread: control (creation); the body runs on the new thread.
public final class RealtimeThread: @unchecked Sendable {
    public let isRealtime: Bool
    /// Why real-time scheduling was refused, when it was.
    public let refusal: String?
    private var thread = pthread_t()
    private let box: Box

    final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a new thread at SCHED_FIFO `priority` (1…99) if permitted, named
    /// `name` (at most 15 bytes: `ps -L`, `top -H`) when given.
    public init(priority: Int32 = 70, name: String? = nil, body: @escaping () -> Void) throws {
        box = Box(body)
        let context = Unmanaged.passRetained(box).toOpaque()
        let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { raw in
            let b = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            b.body()
            return nil
        }
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setinheritsched(&attr, Int32(PTHREAD_EXPLICIT_SCHED))
        pthread_attr_setschedpolicy(&attr, SCHED_FIFO)
        var param = sched_param()
        param.sched_priority = priority
        pthread_attr_setschedparam(&attr, &param)
        var result = pthread_create(&thread, &attr, entry, context)
        if result == 0 {
            if let name { _ = stage_name_thread(UInt(thread), name) }
            isRealtime = true
            refusal = nil
        } else {
            let reason = String(cString: strerror(result))
            result = pthread_create(&thread, nil, entry, context)
            guard result == 0 else {
                Unmanaged<Box>.fromOpaque(context).release()
                throw ThreadError(message: "pthread_create failed: \(String(cString: strerror(result)))")
            }
            isRealtime = false
            if let name { _ = stage_name_thread(UInt(thread), name) }
            refusal = "SCHED_FIFO refused (\(reason)); running at normal priority. Grant it with "
                + "LimitRTPRIO= / CAP_SYS_NICE (systemd) or an rtprio limit in /etc/security/limits.d"
        }
    }

    /// Waits for the thread to end. Thread: control.
    public func join() { pthread_join(thread, nil) }

    public struct ThreadError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Locks the process's memory so the audio path never page-faults; nil on success,
    /// else why not. Thread: control.
    public static func lockMemory() -> String? {
        if mlockall(Int32(MCL_CURRENT) | Int32(MCL_FUTURE)) == 0 { return nil }
        return "mlockall failed (\(String(cString: strerror(errno)))); memory is not locked. Grant it with "
            + "LimitMEMLOCK=infinity / CAP_IPC_LOCK (systemd) or a memlock limit"
    }
}

