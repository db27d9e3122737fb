#if canImport(Glibc)
import Glibc
#endif

/// Small vector kernels for the pitch unit: dot products and squared differences over
/// contiguous Float memory. Swift does not reassociate float sums, so reductions written as
/// scalar loops do not vectorize; these use `SIMD8` accumulators. Thread: any.
enum PitchKernels {
    /// Σ a[i]·b[i] for i in 0..<count.
    @inline(__always)
    static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
        let ra = UnsafeRawPointer(a)
        let rb = UnsafeRawPointer(b)
        var acc0 = SIMD8<Float>()
        var acc1 = SIMD8<Float>()
        var i = 0
        while i + 16 <= count {
            acc0 += ra.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                * rb.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            acc1 += ra.loadUnaligned(fromByteOffset: i * 4 + 32, as: SIMD8<Float>.self)
                * rb.loadUnaligned(fromByteOffset: i * 4 + 32, as: SIMD8<Float>.self)
            i += 16
        }
        while i + 8 <= count {
            acc0 += ra.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                * rb.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            i += 8
        }
        var s = (acc0 + acc1).sum()
        while i < count {
            s += a[i] * b[i]
            i += 1
        }
        return s
    }

    /// Σ (a[i] − b[i])² for i in 0..<count.
    @inline(__always)
    static func squaredDistance(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
        let ra = UnsafeRawPointer(a)
        let rb = UnsafeRawPointer(b)
        var acc0 = SIMD8<Float>()
        var acc1 = SIMD8<Float>()
        var i = 0
        while i + 16 <= count {
            let d0 = ra.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                - rb.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            let d1 = ra.loadUnaligned(fromByteOffset: i * 4 + 32, as: SIMD8<Float>.self)
                - rb.loadUnaligned(fromByteOffset: i * 4 + 32, as: SIMD8<Float>.self)
            acc0 += d0 * d0
            acc1 += d1 * d1
            i += 16
        }
        while i + 8 <= count {
            let d0 = ra.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                - rb.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            acc0 += d0 * d0
            i += 8
        }
        var s = (acc0 + acc1).sum()
        while i < count {
            let d = a[i] - b[i]
            s += d * d
            i += 1
        }
        return s
    }
}

/// A real-time pitch detector for one channel: YIN (de Cheveigné & Kawahara 2002) on an
/// 8 kHz copy of the input, run every `hop` input samples at fixed absolute sample times.
///
/// The input is read from the channel's history ring (double-written, so any recent window
/// is contiguous). A windowed-sinc FIR (cut-off 1.6 kHz) decimates it to about 8 kHz; the decimated samples
/// are computed lazily at each analysis, only those not computed before, so a detector that
/// was idle (the unit in `any` mode) catches up from the ring in one step. Each analysis
/// computes the difference function over a `window` of decimated samples for lags covering
/// 70–1100 Hz (the tuner: 38–2100 Hz at about 12 kHz), its cumulative-mean normalisation, takes the first dip under 0.2 (else the
/// global minimum), refines it by a parabola, and calls the frame voiced when the dip is
/// deep (aperiodicity < 0.2 to start, < 0.35 to stay) and the level above −60 dBFS.
///
/// The period is only used to predict where the next pitch mark lies (±10 %); the output
/// frequency follows the marks themselves, so sub-sample accuracy is not needed here.
/// Memory is allocated in `init` (control thread); `analyze` allocates nothing. Thread:
/// render.
struct PitchDetector {
    /// Input samples per decimated sample.
    let factor: Int
    /// FIR length in input samples.
    let taps: Int
    let fir: UnsafeMutablePointer<Float>
    /// Decimated history, double-written: element k lives at k & mask and (k & mask) + size.
    let decimated: UnsafeMutablePointer<Float>
    let decimatedMask: Int
    let decimatedSize: Int
    /// Next decimated index not computed yet.
    var nextDecimated: Int64 = 0
    /// Difference function scratch, lags 0...maxLag.
    let difference: UnsafeMutablePointer<Float>
    let window: Int
    let minLag: Int
    let maxLag: Int
    /// Mean square (decimated, low-passed signal) below which a frame is unvoiced.
    let levelFloor: Float = 1e-6

    /// Result of the latest analysis: period in input samples, and the voicing decision.
    private(set) var period: Double = 0
    private(set) var voiced = false
    /// The aperiodicity (CMND value at the chosen dip) of the latest analysis.
    private(set) var aperiodicity: Float = 1

    /// A detector for fundamentals from `low` to `high` Hz on a copy of the input decimated
    /// to about `rate` Hz (its low-pass cut-off is at 0.2 × the decimated rate, so `rate`
    /// must be at least 5 × `high`). The defaults are the pitch and tune units' voice range.
    /// Thread: control.
    init(sampleRate: Double, low: Double = 70, high: Double = 1100, rate analysisRate: Double = 8000) {
        factor = Self.factor(sampleRate: sampleRate, rate: analysisRate)
        let rate = sampleRate / Double(factor)
        taps = factor == 1 ? 1 : 12 * factor
        fir = .allocate(capacity: taps)
        if factor == 1 {
            fir[0] = 1
        } else {
            // Windowed sinc (Blackman), cut-off at 0.2 × the decimated rate, unity DC gain.
            let cutoff = 0.2 * rate / sampleRate
            var sum = 0.0
            var h = [Double](repeating: 0, count: taps)
            let mid = Double(taps - 1) / 2
            for i in 0..<taps {
                let t = Double(i) - mid
                let sinc = t == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * t) / (Double.pi * t)
                let w = 0.42 - 0.5 * cos(2 * Double.pi * Double(i) / Double(taps - 1))
                    + 0.08 * cos(4 * Double.pi * Double(i) / Double(taps - 1))
                h[i] = sinc * w
                sum += h[i]
            }
            for i in 0..<taps { fir[i] = Float(h[i] / sum) }
        }
        minLag = max(2, Int(rate / high))
        maxLag = Int((rate / low).rounded(.up))
        window = (maxLag + 7) / 8 * 8
        var size = 1
        while size < window + maxLag + 16 { size <<= 1 }
        decimatedSize = size
        decimatedMask = size - 1
        decimated = .allocate(capacity: 2 * size)
        decimated.initialize(repeating: 0, count: 2 * size)
        difference = .allocate(capacity: maxLag + 2)
        difference.initialize(repeating: 0, count: maxLag + 2)
    }

    /// Input samples per decimated sample for an analysis at about `rate` Hz. Thread: any.
    static func factor(sampleRate: Double, rate: Double) -> Int { max(1, Int((sampleRate / rate).rounded())) }

    /// Input samples of history an analysis at `sampleRate` reads (the same `low` and `rate`
    /// as `init`). Thread: any.
    static func historyNeeded(sampleRate: Double, low: Double = 70, rate: Double = 8000) -> Int {
        let factor = Self.factor(sampleRate: sampleRate, rate: rate)
        let maxLag = Int((sampleRate / Double(factor) / low).rounded(.up))
        let window = (maxLag + 7) / 8 * 8
        return (window + maxLag + 2) * factor + 12 * factor
    }

    /// Frees the memory. Thread: control.
    func deallocate() {
        fir.deallocate()
        decimated.deallocate()
        difference.deallocate()
    }

    /// Thread: render (or control while idle). Allocates nothing.
    mutating func reset() {
        decimated.update(repeating: 0, count: 2 * decimatedSize)
        nextDecimated = 0
        period = 0
        voiced = false
        aperiodicity = 1
    }

    /// Analyses the input up to and including absolute sample `now`, read from `ring`
    /// (double-written, `mask` = size − 1). Thread: render.
    mutating func analyze(ring: UnsafePointer<Float>, mask: Int, now: Int64) {
        let last = now / Int64(factor)
        let span = Int64(window + maxLag)
        var k = max(nextDecimated, last - span + 1)
        while k <= last {
            let start = Int((k * Int64(factor) - Int64(taps) + 1) & Int64(mask))
            let v = PitchKernels.dot(ring + start, fir, taps)
            let slot = Int(k & Int64(decimatedMask))
            decimated[slot] = v
            decimated[slot + decimatedSize] = v
            k += 1
        }
        nextDecimated = last + 1

        let base = decimated + Int((last - span + 1) & Int64(decimatedMask))
        let current = UnsafePointer(base + maxLag)
        let meanSquare = PitchKernels.dot(current, current, window) / Float(window)
        if !(meanSquare > levelFloor) {
            voiced = false
            aperiodicity = 1
            return
        }
        // Difference function and its cumulative-mean normalisation.
        var running: Float = 0
        difference[0] = 1
        for lag in 1...maxLag {
            let d = PitchKernels.squaredDistance(current, current - lag, window)
            running += d
            difference[lag] = running > 0 ? d * Float(lag) / running : 1
        }
        // First dip under the threshold, followed to its bottom; else the global minimum.
        var best = -1
        var lag = minLag
        while lag <= maxLag {
            if difference[lag] < 0.2 {
                while lag + 1 <= maxLag && difference[lag + 1] < difference[lag] { lag += 1 }
                best = lag
                break
            }
            lag += 1
        }
        if best < 0 {
            best = minLag
            for l in minLag...maxLag where difference[l] < difference[best] { best = l }
        }
        var offset: Float = 0
        if best > minLag && best < maxLag {
            let a = difference[best - 1]
            let b = difference[best]
            let c = difference[best + 1]
            let denominator = a - 2 * b + c
            if denominator > 1e-9 { offset = min(max(0.5 * (a - c) / denominator, -1), 1) }
        }
        aperiodicity = difference[best]
        voiced = aperiodicity < (voiced ? 0.35 : 0.2)
        period = (Double(best) + Double(offset)) * Double(factor)
    }
}
