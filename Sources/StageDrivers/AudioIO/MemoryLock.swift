#if canImport(Glibc)
import Glibc
#endif

/// Locks the process's memory so that the audio path never waits for a page from disk.
public enum MemoryLock {
    /// `mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)`: pages are locked as they are first
    /// touched, not all of every mapping at once. What the render path uses is touched
    /// before the audio thread starts (the rack's warm-up on the control thread, the
    /// audio thread's prefaulted stack: `StageThread`), so it is resident and locked, while
    /// what a rack never touches (most of ICU's data, the unused part of thread stacks)
    /// costs no memory. Without MCL_ONFAULT (Linux before 4.4) every page of every mapping
    /// would be pinned. Returns nil on success, else why not. Thread: control.
    public static func lockAll() -> String? {
        let onFault: Int32 = 4  // MCL_ONFAULT (linux/mman.h), not exported by every Glibc module map
        if mlockall(Int32(MCL_CURRENT) | Int32(MCL_FUTURE) | onFault) == 0 { return nil }
        let reason = String(cString: strerror(errno))
        return "mlockall failed (\(reason)); memory is not locked. Grant it with "
            + "LimitMEMLOCK=infinity / CAP_IPC_LOCK (systemd) or a memlock limit"
    }
}
