#if canImport(Glibc)
import Glibc
#endif

/// Names the calling thread for the kernel (top, `ps -L`, /proc/PID/task/TID/comm; at most
/// 15 bytes): Foundation's `Thread.name` does not reach it on Linux. Thread: the one named.
public func nameThisThreadForTheKernel(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}
