#if canImport(Glibc)
import Glibc
#endif

/// SIGINT, SIGTERM, SIGHUP (and SIGUSR1, only so that a stray one is logged and ignored) taken synchronously: blocked in every thread (so the audio
/// thread is never interrupted) and waited for on the control thread. Thread: main.
enum Signals {
    static var handled: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        sigaddset(&set, SIGUSR1)
        return set
    }

    /// Blocks the signals; threads started afterwards inherit the mask.
    static func blockForWaiting() {
        var set = handled
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits up to `milliseconds` for one of the signals; returns it, or 0 on timeout.
    static func wait(milliseconds: Int) -> Int32 {
        var set = handled
        var timeout = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        let s = sigtimedwait(&set, nil, &timeout)
        return s > 0 ? s : 0
    }

    /// Takes `signal` if it is pending, without waiting.
    static func poll(_ signal: Int32) -> Bool {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        var zero = timespec(tv_sec: 0, tv_nsec: 0)
        return sigtimedwait(&set, nil, &zero) == signal
    }
}

/// Log lines for a terminal or journald: one line per event with a level prefix, on stderr
/// (see `LogOutput` and StageService's `LogFormat`).
/// Thread: control threads only (never the audio thread).
enum Log {
    static func info(_ s: String) { LogOutput.emit(.info, s) }
    static func warning(_ s: String) { LogOutput.emit(.warning, s) }
    static func error(_ s: String) { LogOutput.emit(.error, s) }
    static func status(_ s: String) { LogOutput.emit(.status, s) }
}
