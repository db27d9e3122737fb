#if canImport(Glibc)
import Glibc
#endif

/// Timing for tests that check how work grows with its input (linear, not quadratic), made
/// robust to a busy machine: the calling thread's own CPU time (time spent preempted by other
/// processes does not count) and the best of several interleaved runs of each size (a run
/// that was disturbed by cache misses or page faults from others loses to an undisturbed one).
/// Allocates freely; never for real-time use. Thread: any (measures the calling thread).
public enum ScalingMeasure {
    /// CPU seconds the calling thread has used so far (CLOCK_THREAD_CPUTIME_ID).
    public static func threadCPUSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }

    /// The best thread-CPU seconds of each of `work`'s cases over `rounds` rounds, the cases
    /// interleaved within each round. `work(i)` runs case `i` once.
    public static func bestSeconds(cases: Int, rounds: Int = 5, _ work: (Int) throws -> Void) rethrows -> [Double] {
        var best = [Double](repeating: .infinity, count: cases)
        for _ in 0..<rounds {
            for i in 0..<cases {
                let start = threadCPUSeconds()
                try work(i)
                best[i] = min(best[i], threadCPUSeconds() - start)
            }
        }
        return best
    }
}
