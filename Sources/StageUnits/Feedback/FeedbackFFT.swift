#if canImport(Glibc)
import Glibc
#endif

/// A radix-2 complex FFT of one fixed size, in Float, with its twiddles and bit-reversal
/// table made in `init` (the only allocation); `transform` runs in place on two caller
/// buffers and allocates nothing. The `feedback` unit's spectrum (StageUnits is pure Swift,
/// with no C library to call; the size is one power of two, so the textbook iterative
/// Cooley–Tukey form is enough). Thread: made on the control thread; `transform` on the
/// render thread.
struct FeedbackFFT {
    let size: Int
    private let cosTable: UnsafeMutablePointer<Float>
    private let sinTable: UnsafeMutablePointer<Float>
    private let reversed: UnsafeMutablePointer<Int32>

    /// `size`: a power of two, 4 or more.
    init(size: Int) {
        precondition(size >= 4 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        cosTable = .allocate(capacity: size / 2)
        sinTable = .allocate(capacity: size / 2)
        reversed = .allocate(capacity: size)
        for i in 0..<(size / 2) {
            let a = -2 * Double.pi * Double(i) / Double(size)
            cosTable[i] = Float(cos(a))
            sinTable[i] = Float(sin(a))
        }
        var bits = 0
        while 1 << bits < size { bits += 1 }
        for i in 0..<size {
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            reversed[i] = Int32(r)
        }
    }

    /// Frees the tables. Thread: control.
    func deallocate() {
        cosTable.deallocate()
        sinTable.deallocate()
        reversed.deallocate()
    }

    /// The forward transform (e^−iωt) of (re, im), in place. Thread: render.
    func transform(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        for i in 0..<size {
            let j = Int(reversed[i])
            if j > i {
                swap(&re[i], &re[j])
                swap(&im[i], &im[j])
            }
        }
        var half = 1
        while half < size {
            let stride = size / (2 * half)
            var start = 0
            while start < size {
                var t = 0
                for k in 0..<half {
                    let c = cosTable[t], s = sinTable[t]
                    t &+= stride
                    let a = start &+ k, b = a &+ half
                    let tr = re[b] * c - im[b] * s
                    let ti = re[b] * s + im[b] * c
                    re[b] = re[a] - tr
                    im[b] = im[a] - ti
                    re[a] += tr
                    im[a] += ti
                }
                start += 2 * half
            }
            half *= 2
        }
    }
}

/// The spectrum of `size` real samples through a complex FFT of half the size (the even
/// samples as the real part, the odd ones as the imaginary part, then split): half the
/// work of a complex FFT of the full size. Memory is allocated in `init`; `transform`
/// allocates nothing. Thread: made on the control thread; `transform` on the render thread.
struct FeedbackRealFFT {
    let size: Int
    private let half: FeedbackFFT
    private let zr: UnsafeMutablePointer<Float>
    private let zi: UnsafeMutablePointer<Float>
    private let cosTable: UnsafeMutablePointer<Float>
    private let sinTable: UnsafeMutablePointer<Float>

    /// `size`: a power of two, 8 or more.
    init(size: Int) {
        self.size = size
        half = FeedbackFFT(size: size / 2)
        zr = .allocate(capacity: size / 2)
        zi = .allocate(capacity: size / 2)
        cosTable = .allocate(capacity: size / 2)
        sinTable = .allocate(capacity: size / 2)
        for k in 0..<(size / 2) {
            let a = -2 * Double.pi * Double(k) / Double(size)
            cosTable[k] = Float(cos(a))
            sinTable[k] = Float(sin(a))
        }
    }

    /// Frees the tables. Thread: control.
    func deallocate() {
        half.deallocate()
        for p in [zr, zi, cosTable, sinTable] { p.deallocate() }
    }

    /// Bins 0…size/2 of the forward transform of `x` (`size` samples) into `re`, `im`
    /// (`size / 2 + 1` each). Thread: render.
    func transform(_ x: UnsafePointer<Float>, _ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        let m = size / 2
        for n in 0..<m {
            zr[n] = x[2 * n]
            zi[n] = x[2 * n + 1]
        }
        half.transform(zr, zi)
        // Bins 0 and m (Nyquist) from Z[0] alone.
        re[0] = zr[0] + zi[0]
        im[0] = 0
        re[m] = zr[0] - zi[0]
        im[m] = 0
        for k in 1..<m {
            let b = m &- k
            // Even part E = (Z[k] + conj Z[m−k]) / 2, odd part O = (Z[k] − conj Z[m−k]) / 2i.
            let er = 0.5 * (zr[k] + zr[b]), ei = 0.5 * (zi[k] - zi[b])
            let or = 0.5 * (zi[k] + zi[b]), oi = -0.5 * (zr[k] - zr[b])
            let c = cosTable[k], s = sinTable[k]
            re[k] = er + c * or - s * oi
            im[k] = ei + c * oi + s * or
        }
    }
}
