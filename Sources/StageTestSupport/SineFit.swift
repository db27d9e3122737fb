#if canImport(Glibc)
import Glibc
#endif

/// Sine fits for tests: THD+N by the IEEE 1057 four-parameter fit (amplitude, phase,
/// offset and frequency fitted by least squares; everything left over is harmonics and
/// noise), and the phase of a known frequency. Allocates freely. Thread: any.
public enum SineFit {
    /// The fitted sine (frequency in Hz) and THD+N: the residual's RMS over the fitted
    /// sine's, in dB. `frequency` is the starting guess (within a few ppm of the truth).
    public static func thdPlusNoise(_ x: ArraySlice<Float>, frequency: Double, sampleRate: Double)
        -> (decibels: Double, frequency: Double, amplitude: Double)
    {
        let y = x.map(Double.init)
        var omega = 2 * Double.pi * frequency / sampleRate
        var p = (a: 0.0, b: 0.0, c: 0.0)
        for _ in 0..<6 {
            // y ≈ a cos ωn + b sin ωn + c + Δω·n·(−a sin ωn + b cos ωn)
            p = threeParameter(y, omega: omega)
            var m = [[Double]](repeating: [Double](repeating: 0, count: 4), count: 4)
            var v = [Double](repeating: 0, count: 4)
            let mid = Double(y.count) / 2
            for (n, value) in y.enumerated() {
                let t = Double(n) - mid
                let (s, co) = (sin(omega * t), cos(omega * t))
                let row = [co, s, 1, t * (-p.a * s + p.b * co)]
                for i in 0..<4 {
                    v[i] += row[i] * value
                    for j in 0..<4 { m[i][j] += row[i] * row[j] }
                }
            }
            let solution = solve(m, v)
            omega += solution[3]
        }
        p = threeParameter(y, omega: omega)
        let mid = Double(y.count) / 2
        var residual = 0.0
        for (n, value) in y.enumerated() {
            let t = Double(n) - mid
            let r = value - (p.a * cos(omega * t) + p.b * sin(omega * t) + p.c)
            residual += r * r
        }
        let amplitude = (p.a * p.a + p.b * p.b).squareRoot()
        let signalPower = amplitude * amplitude / 2
        let db = 10 * log10(max(residual / Double(y.count), 1e-30) / signalPower)
        return (db, omega * sampleRate / (2 * Double.pi), amplitude)
    }

    /// The phase (radians) of the `frequency` component of `x`, relative to
    /// sin(2π·frequency·(first + n)/sampleRate), by a least-squares fit of a sine, a cosine
    /// and an offset.
    public static func phase(_ x: ArraySlice<Float>, frequency: Double, sampleRate: Double, firstFrame: Int) -> Double {
        var m = [[Double]](repeating: [Double](repeating: 0, count: 3), count: 3)
        var v = [Double](repeating: 0, count: 3)
        let omega = 2 * Double.pi * frequency / sampleRate
        for (n, value) in x.enumerated() {
            let phase = (omega * Double(firstFrame + n)).truncatingRemainder(dividingBy: 2 * Double.pi)
            let row = [sin(phase), cos(phase), 1]
            for i in 0..<3 {
                v[i] += row[i] * Double(value)
                for j in 0..<3 { m[i][j] += row[i] * row[j] }
            }
        }
        let s = solve(m, v)
        return atan2(s[1], s[0])
    }

    static func threeParameter(_ y: [Double], omega: Double) -> (a: Double, b: Double, c: Double) {
        var m = [[Double]](repeating: [Double](repeating: 0, count: 3), count: 3)
        var v = [Double](repeating: 0, count: 3)
        let mid = Double(y.count) / 2
        for (n, value) in y.enumerated() {
            let t = Double(n) - mid
            let row = [cos(omega * t), sin(omega * t), 1]
            for i in 0..<3 {
                v[i] += row[i] * value
                for j in 0..<3 { m[i][j] += row[i] * row[j] }
            }
        }
        let s = solve(m, v)
        return (s[0], s[1], s[2])
    }

    /// Gaussian elimination with partial pivoting.
    static func solve(_ matrix: [[Double]], _ vector: [Double]) -> [Double] {
        var a = matrix
        var b = vector
        let n = b.count
        for col in 0..<n {
            let pivot = (col..<n).max { abs(a[$0][col]) < abs(a[$1][col]) }!
            a.swapAt(col, pivot)
            b.swapAt(col, pivot)
            guard abs(a[col][col]) > 1e-300 else { continue }
            for row in (col + 1)..<n {
                let f = a[row][col] / a[col][col]
                for k in col..<n { a[row][k] -= f * a[col][k] }
                b[row] -= f * b[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var s = b[row]
            for k in (row + 1)..<n { s -= a[row][k] * x[k] }
            x[row] = abs(a[row][row]) > 1e-300 ? s / a[row][row] : 0
        }
        return x
    }
}
