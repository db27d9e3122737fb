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
                for k in 0..<half {
                    let c = cosTable[k * stride], s = sinTable[k * stride]
                    let a = start + k, b = a + half
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
