#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import StageCore

/// The delay's per-sample DSP: the saturator and guards, the grouped low-pass, the steady
/// SIMD loop and the per-sample loop. Pure functions over pointers. Thread: render.
extension DelayUnit {
    /// Bends the recirculated signal: identity within ±1, a quadratic knee up to ±3 where it
    /// reaches ±2 with zero slope, flat beyond. Branch-free so that it vectorizes.
    @inline(__always)
    static func saturate(_ v: Float) -> Float {
        let m = min(abs(v), 3)
        let k = max(m - 1, 0)
        return Float(signOf: v, magnitudeOf: m - 0.25 * (k * k))
    }

    /// The smallest level the loop keeps: one 24-bit step (2⁻²⁴, −144.5 dBFS). Anything
    /// quieter written to the line becomes 0, so repeats end in true silence.
    static let loopFloor: Float = 5.960_464_5e-8

    /// Zero for subnormal, infinite and NaN values, the value otherwise (output samples).
    @inline(__always)
    static func flush(_ v: Float) -> Float {
        let m = abs(v)
        return m >= Float.leastNormalMagnitude && m < Float.infinity ? v : 0
    }

    /// Zero for values under `loopFloor`, infinite or NaN (what is written to the line, so
    /// a bad input sample cannot stay in the loop).
    @inline(__always)
    static func gate(_ v: Float) -> Float {
        let m = abs(v)
        return m >= loopFloor && m < Float.infinity ? v : 0
    }

    /// A channel's low-pass state between samples (see the type's doc): lp before the
    /// current group, the value carried to the next group, and a·y of the group's previous
    /// samples (newest first). Stored as 5 floats per channel between blocks.
    struct Lowpass {
        var base: Float
        var carry: Float
        var h1: Float
        var h2: Float
        var h3: Float

        @inline(__always)
        init(_ p: UnsafeMutablePointer<Float>) {
            base = p[0]
            carry = p[1]
            h1 = p[2]
            h2 = p[3]
            h3 = p[4]
        }

        @inline(__always)
        func store(_ p: UnsafeMutablePointer<Float>) {
            p[0] = base
            p[1] = carry
            p[2] = h1
            p[3] = h2
            p[4] = h3
        }

        /// One step for the sample at position `j` (0…3) of its group of four, with this
        /// sample's pole `b`; returns lp. The SIMD path computes exactly this, four lanes at
        /// a time. Thread: render.
        @inline(__always)
        mutating func step(_ y: Float, b: Float, j: Int, boundary: Bool) -> Float {
            let h = (1 - b) * y
            if j == 0 {
                base = carry
                h1 = 0
                h2 = 0
                h3 = 0
            }
            let b2 = b * b
            let b3 = b * b2
            let s = ((h + b * h1) + b2 * h2) + b3 * h3
            let p: Float = j == 0 ? b : j == 1 ? b2 : j == 2 ? b3 : b * b3
            let lp = p * base + s
            h3 = h2
            h2 = h1
            h1 = h
            if j == 3 { carry = boundary && abs(lp) < 1e-30 ? 0 : lp }
            return lp
        }
    }

    /// One channel with everything steady and a delay of at least one block: `read` and
    /// `write` point at contiguous runs of the line. Groups of four (aligned on absolute
    /// time) run in SIMD; a group split by the block's edges runs one sample at a time
    /// through `Lowpass.step`, with the same arithmetic. Thread: render.
    @inline(__always)
    static func runSteady(
        src: UnsafeMutablePointer<Float>, dst: UnsafeMutablePointer<Float>, read: UnsafeMutablePointer<Float>,
        write: UnsafeMutablePointer<Float>, b: Float, fb: Float, wet: Float, frames n: Int, start: Int64,
        state: UnsafeMutablePointer<Float>
    ) {
        let dry = 1 - wet
        var i = 0
        var filter = Lowpass(state)
        @inline(__always)
        func single(_ i: Int) {
            let t = start &+ Int64(i)
            let x = src[i]
            let lp = filter.step(read[i], b: b, j: Int(t & 3), boundary: (t &+ 1) & 31 == 0)
            write[i] = gate(x + saturate(fb * lp))
            dst[i] = flush(dry * x + wet * lp)
        }
        while i < n && (start + Int64(i)) & 3 != 0 {
            single(i)
            i += 1
        }
        let groupsEnd = i + ((n - i) & ~3)
        if i < groupsEnd {
            let a = 1 - b
            let b2 = b * b
            let b3 = b * b2
            let powers = SIMD4<Float>(b, b2, b3, b * b3)
            var carry = filter.carry
            let rawRead = UnsafeRawPointer(read)
            let rawSrc = UnsafeRawPointer(src)
            let rawWrite = UnsafeMutableRawPointer(write)
            let rawDst = UnsafeMutableRawPointer(dst)
            while i < groupsEnd {
                let h = a * rawRead.loadUnaligned(fromByteOffset: 4 * i, as: SIMD4<Float>.self)
                // s(j) = ((h(j) + b·h(j−1)) + b²·h(j−2)) + b³·h(j−3), zeros before the group.
                let h1 = SIMD4<Float>(lowHalf: SIMD2(0, h[0]), highHalf: SIMD2(h[1], h[2]))
                let h2 = SIMD4<Float>(lowHalf: SIMD2(0, 0), highHalf: h.lowHalf)
                let h3 = SIMD4<Float>(lowHalf: SIMD2(0, 0), highHalf: SIMD2(0, h[0]))
                let s = ((h + b * h1) + b2 * h2) + b3 * h3
                let l = powers * carry + s
                let last = l[3]
                carry = (start &+ Int64(i) &+ 4) & 31 == 0 && abs(last) < 1e-30 ? 0 : last
                let x = rawSrc.loadUnaligned(fromByteOffset: 4 * i, as: SIMD4<Float>.self)
                let u = fb * l
                // The saturator is the identity within ±1: skip it when every lane is.
                let sat = any(abs4(u) .> 1) ? saturate4(u) : u
                rawWrite.storeBytes(of: gate4(x + sat), toByteOffset: 4 * i, as: SIMD4<Float>.self)
                rawDst.storeBytes(of: flush4(dry * x + wet * l), toByteOffset: 4 * i, as: SIMD4<Float>.self)
                i += 4
            }
            // What the next group starts from (`step` resets the rest at j = 0).
            filter.carry = carry
        }
        while i < n {
            single(i)
            i += 1
        }
        filter.store(state)
    }

    // Four at a time, with the same results as the scalar versions. Sign and magnitude
    // go through the bit pattern (one and/or each); `pointwiseMin`/`pointwiseMax` are
    // avoided: they are not inlined (a generic call per use, 10x slower here).

    @inline(__always)
    static func bits(_ v: SIMD4<Float>) -> SIMD4<UInt32> { unsafeBitCast(v, to: SIMD4<UInt32>.self) }

    @inline(__always)
    static func float(_ v: SIMD4<UInt32>) -> SIMD4<Float> { unsafeBitCast(v, to: SIMD4<Float>.self) }

    @inline(__always)
    static func abs4(_ v: SIMD4<Float>) -> SIMD4<Float> { float(bits(v) & 0x7fff_ffff) }

    /// `saturate`, four at a time.
    @inline(__always)
    static func saturate4(_ v: SIMD4<Float>) -> SIMD4<Float> {
        var m = abs4(v)
        m.replace(with: 3, where: m .> 3)
        var k = m - 1
        k.replace(with: 0, where: k .< 0)
        let r = m - 0.25 * (k * k)
        // r ≥ 0: give it v's sign.
        return float(bits(r) | (bits(v) & 0x8000_0000))
    }

    /// `flush`, four at a time.
    @inline(__always)
    static func flush4(_ v: SIMD4<Float>) -> SIMD4<Float> {
        let m = abs4(v)
        return v.replacing(with: 0, where: .!((m .>= Float.leastNormalMagnitude) .& (m .< Float.infinity)))
    }

    /// `gate`, four at a time.
    @inline(__always)
    static func gate4(_ v: SIMD4<Float>) -> SIMD4<Float> {
        let m = abs4(v)
        return v.replacing(with: 0, where: .!((m .>= loopFloor) .& (m .< Float.infinity)))
    }

    /// One channel with per-sample control values (crossfades, ramps, short delays): the
    /// same arithmetic as the two passes, one sample at a time. Thread: render.
    @inline(__always)
    static func runFused(
        src: UnsafeMutablePointer<Float>, dst: UnsafeMutablePointer<Float>, line: UnsafeMutablePointer<Float>,
        mask: Int, write: Int, state: UnsafeMutablePointer<Float>, control: UnsafeMutablePointer<Float>,
        taps: UnsafeMutablePointer<Int>, stride: Int, frames n: Int, start: Int64
    ) {
        let gB = control
        let pB = control + stride
        let pFb = control + 2 * stride
        let pWet = control + 3 * stride
        let tA = taps
        let tB = taps + stride
        var w = write
        var filter = Lowpass(state)
        for i in 0..<n {
            let t = start &+ Int64(i)
            let x = src[i]
            let ya = line[(w &- tA[i]) & mask]
            let g = gB[i]
            var y = ya
            if g != 0 {
                let yb = line[(w &- tB[i]) & mask]
                y = (1 - g) * ya + g * yb
            }
            let lp = filter.step(y, b: pB[i], j: Int(t & 3), boundary: (t &+ 1) & 31 == 0)
            let wet = pWet[i]
            line[w] = gate(x + saturate(pFb[i] * lp))
            dst[i] = flush((1 - wet) * x + wet * lp)
            w = (w &+ 1) & mask
        }
        filter.store(state)
    }
}
