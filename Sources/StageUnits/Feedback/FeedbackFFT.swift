import CFFTW
import CLoadOnUse
import StageCore
import Synchronization

/// FFTW's planner is not thread-safe: every plan made or destroyed in the process (by any
/// unit prepared on any control thread) goes through this lock. Never taken on the render
/// thread.
private let fftwPlanner = Mutex<Void>(())

/// The spectrum of `size` real samples through FFTW3 in single precision (Debian's
/// libfftw3-dev, `libfftw3f`): one real-to-complex plan (`FFTW_ESTIMATE`: no timing runs)
/// over an input array and two output arrays from `fftwf_malloc`, all made in `init`.
///
/// `transform` runs the plan on the render thread through FFTW's new-array execute
/// (`fftwf_execute_dft_r2c`, on arrays allocated and aligned alike), which allocates and locks
/// nothing; it alternates between the two outputs, so the last analysis's spectrum stays in
/// `previousSpectrum` with no copy. Plan creation and destruction are not thread-safe and stay
/// off the render thread: `init` and `deallocate` serialise them on one process-wide lock, so
/// units prepared on different threads cannot race in FFTW's planner.
/// FFTW is opened on first use (CLoadOnUse), not at start-up: the unit's `prepare` asks
/// `libraryFailure` first, so `transform` runs through a pointer resolved before the unit
/// reached the render thread.
/// Thread: made and freed on the control thread; `transform` on the render thread.
struct FeedbackFFT {
    /// nil once FFTW is open, else why not (opened on first use, once). Thread: control.
    static let libraryFailure: String? = libraryLoadFailure { stage_load_fftw($0, $1) }

    let size: Int
    /// The `size` real samples to transform, written by the caller.
    let input: UnsafeMutablePointer<Float>
    private let outputs: (UnsafeMutablePointer<fftwf_complex>, UnsafeMutablePointer<fftwf_complex>)
    private let plan: fftwf_plan
    private var current = 0

    /// `size`: 4 or more (FFTW takes any size; a power of two is fastest).
    init(size: Int) {
        precondition(size >= 4, "FFT size must be 4 or more")
        _ = Self.libraryFailure  // opens FFTW if `prepare` has not (a detector made alone, in tests)
        self.size = size
        let bins = size / 2 + 1
        input = fftwf_alloc_real(size)!
        input.initialize(repeating: 0, count: size)
        let a = fftwf_alloc_complex(bins)!, b = fftwf_alloc_complex(bins)!
        a.initialize(repeating: (0, 0), count: bins)
        b.initialize(repeating: (0, 0), count: bins)
        outputs = (a, b)
        let real = input, count = Int32(size)
        // The plan crosses the lock as its address (an OpaquePointer is not Sendable).
        let address: Int = fftwPlanner.withLock { _ in
            Int(bitPattern: fftwf_plan_dft_r2c_1d(count, real, a, UInt32(FFTW_ESTIMATE) | UInt32(FFTW_DESTROY_INPUT)))
        }
        plan = fftwf_plan(bitPattern: address)!
    }

    /// Destroys the plan and frees the arrays. Thread: control.
    func deallocate() {
        fftwPlanner.withLock { _ in fftwf_destroy_plan(plan) }
        fftwf_free(input)
        fftwf_free(outputs.0)
        fftwf_free(outputs.1)
    }

    /// Zeroes both spectra (the next analysis has no previous one). Thread: render, or
    /// control while not rendering.
    func clear() {
        raw(outputs.0).update(repeating: 0, count: size + 2)
        raw(outputs.1).update(repeating: 0, count: size + 2)
    }

    /// The interleaved (re, im) bins 0…size/2 of the last `transform`.
    var spectrum: UnsafeMutablePointer<Float> { raw(current == 0 ? outputs.0 : outputs.1) }
    /// The interleaved (re, im) bins of the `transform` before it (zero before two).
    var previousSpectrum: UnsafeMutablePointer<Float> { raw(current == 0 ? outputs.1 : outputs.0) }

    /// Transforms `input` (which it may overwrite) into the other output, which becomes
    /// `spectrum`. Thread: render.
    mutating func transform() {
        current ^= 1
        fftwf_execute_dft_r2c(plan, input, current == 0 ? outputs.0 : outputs.1)
    }

    @inline(__always)
    private func raw(_ p: UnsafeMutablePointer<fftwf_complex>) -> UnsafeMutablePointer<Float> {
        UnsafeMutableRawPointer(p).assumingMemoryBound(to: Float.self)
    }
}
