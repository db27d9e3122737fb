#if canImport(Glibc)
import Glibc
#endif

/// The one way StageRack starts a thread: named for the kernel (`ps -L`, `top -H`: at most
/// 15 bytes), with a stack of a stated size rather than the 8 MB default (`mlockall` would
/// pin all of it), at SCHED_FIFO `realtimePriority` when asked and allowed (else at normal
/// priority, with the reason kept in `refusal`), optionally pinned to one CPU.
///
/// Thread: creation on any thread; `body` runs on the new thread; `join` on one other thread.
public final class StageThread: @unchecked Sendable {
    public struct Options: Sendable {
        /// At most 15 bytes reach the kernel.
        public var name: String
        /// SCHED_FIFO priority 1…99, or nil for a normal thread.
        public var realtimePriority: Int32?
        /// The stack's size (at least PTHREAD_STACK_MIN).
        public var stackBytes: Int
        /// The CPU the thread runs on, or nil for any.
        public var cpu: Int?

        public init(name: String, realtimePriority: Int32? = nil, stackBytes: Int = StageThread.smallStack, cpu: Int? = nil) {
            self.name = name
            self.realtimePriority = realtimePriority
            self.stackBytes = stackBytes
            self.cpu = cpu
        }
    }

    /// A stack for threads that do plain work (control, MIDI, disk, servers): 512 kB.
    public static let smallStack = 512 << 10
    /// A stack for the render and capture threads: 1 MB, of which `stackPrefaultBytes` are
    /// touched at start so that the render path never faults in a stack page.
    public static let audioStack = 1 << 20
    /// How much of its stack a real-time thread touches before its body runs.
    public static let stackPrefaultBytes = 128 << 10

    public let options: Options
    /// Whether the thread runs at SCHED_FIFO.
    public let isRealtime: Bool
    /// Why SCHED_FIFO was refused, when it was asked for and refused.
    public let refusal: String?
    private var thread = pthread_t()

    public struct StartError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    final class Start {
        let options: Options
        let body: () -> Void
        init(_ options: Options, _ body: @escaping () -> Void) {
            self.options = options
            self.body = body
        }
    }

    /// Starts `body` on a new thread made as `options` say. Thread: any.
    public init(_ options: Options, body: @escaping () -> Void) throws(StartError) {
        self.options = options
        let context = Unmanaged.passRetained(Start(options, body)).toOpaque()
        var realtime = false
        var reason: String?
        var result: Int32 = -1
        if let priority = options.realtimePriority {
            result = Self.create(&thread, options, priority: priority, context)
            if result == 0 {
                realtime = true
            } else {
                reason = String(cString: strerror(result))
            }
        }
        if result != 0 { result = Self.create(&thread, options, priority: nil, context) }
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            throw StartError(message: "cannot start the thread \(options.name): pthread_create: \(String(cString: strerror(result)))")
        }
        isRealtime = realtime
        refusal = reason.map {
            "SCHED_FIFO refused (\($0)); running at normal priority. Grant it with "
                + "LimitRTPRIO= / CAP_SYS_NICE (systemd) or an rtprio limit in /etc/security/limits.d"
        }
    }

    /// Waits for the thread to end. Thread: one other thread, once.
    public func join() {
        guard !joined else { return }
        pthread_join(thread, nil)
        joined = true
    }

    private var joined = false

    /// A thread nobody joined is detached, so that its resources go when it ends.
    deinit { if !joined { pthread_detach(thread) } }

    private static func create(
        _ thread: inout pthread_t, _ options: Options, priority: Int32?, _ context: UnsafeMutableRawPointer
    ) -> Int32 {
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setstacksize(&attr, max(options.stackBytes, Int(PTHREAD_STACK_MIN)))
        if let priority {
            pthread_attr_setinheritsched(&attr, Int32(PTHREAD_EXPLICIT_SCHED))
            pthread_attr_setschedpolicy(&attr, SCHED_FIFO)
            var param = sched_param()
            param.sched_priority = priority
            pthread_attr_setschedparam(&attr, &param)
        }
        return pthread_create(&thread, &attr, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            nameThisThread(start.options.name)
            if let cpu = start.options.cpu { pinThisThread(to: cpu) }
            if start.options.realtimePriority != nil { prefaultStack(StageThread.stackPrefaultBytes) }
            start.body()
            return nil
        }, context)
    }
}

/// Names the calling thread for the kernel (top, `ps -L`, /proc/PID/task/TID/comm; at most
/// 15 bytes): Foundation's `Thread.name` does not reach it on Linux. Thread: the one named.
public func nameThisThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// Pins the calling thread to `cpu` (ignored when the CPU does not exist). Thread: the one pinned.
func pinThisThread(to cpu: Int) {
    var set = cpu_set_t()
    guard cpu >= 0 && cpu < MemoryLayout<cpu_set_t>.size * 8 else { return }
    withUnsafeMutableBytes(of: &set) { $0[cpu / 8] |= UInt8(1 << (cpu % 8)) }
    // sched_setaffinity is a GNU extension the Glibc module does not export: found by name.
    typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32
    guard let symbol = dlsym(nil, "sched_setaffinity") else { return }
    let setAffinity = unsafeBitCast(symbol, to: SetAffinity.self)
    _ = withUnsafeBytes(of: &set) { setAffinity(0, $0.count, $0.baseAddress!) }
}

/// Touches about `bytes` of the calling thread's stack, so that its pages are there (and
/// locked, under `mlockall(MCL_ONFAULT)`) before the thread's real work: a chain of calls,
/// each with a 1000-byte stack buffer (small enough that Swift always puts it on the stack).
/// Thread: the one it runs on.
func prefaultStack(_ bytes: Int) {
    _ = touchStackFrames(bytes / 1024)
}

@inline(never)
private func touchStackFrames(_ depth: Int) -> UInt8 {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1000) { buffer in
        buffer[0] = UInt8(truncatingIfNeeded: depth)
        buffer[999] = buffer[0]
        let below = depth > 0 ? touchStackFrames(depth - 1) : 0  // not a tail call: the buffer lives on
        return buffer[999] &+ below
    }
}
