/// Level conversions for the dynamics units' per-sample detectors, without libm calls.
///
/// `log2` splits the float into exponent and mantissa, maps the mantissa into
/// [√½, √2) and sums the odd series of atanh: log2(m) = (2/ln 2)·(t + t³/3 + t⁵/5 + t⁷/7),
/// t = (m − 1)/(m + 1), |t| ≤ 0.172; the error is under 2e-7 in log2 (1e-6 dB).
/// `exp2` splits x into n + f (f in [−½, ½]) and evaluates 2^f by a degree-6 Taylor
/// polynomial of e^(f·ln 2) (relative error under 3e-8), then sets the exponent to n.
/// Thread: any (pure functions).
enum FastDecibels {
    /// dB per log2 unit of power: 10·log10(2).
    static let powerDecibelsPerOctave: Float = 3.010_299_956_6
    /// log2 units per dB of amplitude: log2(10)/20.
    static let log2PerAmplitudeDecibel: Float = 0.166_096_404_7

    /// log2(x) for a positive normal float. Thread: any.
    ///
    /// The split into exponent and mantissa in [√½, √2) is done in integers: subtracting
    /// the bits of the first mantissa above √2 (0x3f3504f4, exponent −1) moves the exponent
    /// up by one exactly when the mantissa is past √2, and subtracting that exponent back
    /// leaves the mantissa, halved when it was past √2. Bit for bit what "m > √2: m /= 2,
    /// e += 1" gives (checked over every positive normal float), without the compare,
    /// branch and flag juggling (about 6 instructions fewer per call on x86-64).
    @inline(__always)
    static func log2(_ x: Float) -> Float {
        let bits = Int32(bitPattern: x.bitPattern)
        let exponent = (bits &- 0x3f35_04f4) >> 23
        let mantissa = Float(bitPattern: UInt32(bitPattern: bits &- (exponent << 23)))
        let t = (mantissa - 1) / (mantissa + 1)
        let t2 = t * t
        let series = t * (1 + t2 * (0.333_333_33 + t2 * (0.2 + t2 * 0.142_857_14)))
        return Float(exponent) + 2.885_390_08 * series
    }

    /// 2^x, x clamped to −126…126. Thread: any.
    @inline(__always)
    static func exp2(_ x: Float) -> Float {
        exp2InRange(min(max(x, -126), 126))
    }

    /// 2^x for x already within −126…126 (no clamp: outside it the exponent bits wrap).
    /// The dynamics units' gains are bounded far inside it (see `decibelsToGain`), and the
    /// clamp cost 6 instructions a call (a min and a compare-and-blend). Thread: any.
    @inline(__always)
    static func exp2InRange(_ c: Float) -> Float {
        assert(!(abs(c) > 126), "exp2InRange: \(c) is outside −126…126")
        // Round to nearest without libm: the float's own rounding after adding 1.5·2^23.
        let n = (c + 12_582_912) - 12_582_912
        let f = (c - n) * 0.693_147_18
        let p = 1 + f * (1 + f * (0.5 + f * (0.166_666_67 + f * (0.041_666_668 + f * (0.008_333_334 + f * 0.001_388_889)))))
        // n is a whole number in −126…126, so the conversions cannot trap.
        let scale = Float(bitPattern: UInt32(truncatingIfNeeded: Int32(unsafeBitCastRange(n)) &+ 127) << 23)
        return p * scale
    }

    /// Float to Int32 for a value known to lie in −126…126 (no range check).
    @inline(__always)
    static func unsafeBitCastRange(_ x: Float) -> Int32 {
        // Adding 1.5·2^23 puts the integer in the low mantissa bits.
        Int32(truncatingIfNeeded: (x + 12_582_912).bitPattern & 0x007f_ffff) &- 0x0040_0000
    }

    /// The level in dB of a mean square `power` (10·log10), −300 dB for zero and below.
    @inline(__always)
    static func powerToDecibels(_ power: Float) -> Float {
        power >= 1e-30 ? powerDecibelsPerOctave * log2(power) : -300
    }

    /// The amplitude factor of `db` (10^(db/20)) for |db| ≤ 758 dB, which every caller
    /// stays far inside: the compressor's change is at least −(385 − threshold) dB (a
    /// level cannot pass 385 dBFS, 10·log10 of the largest float), make-up is ±40 dB, the
    /// expander's reduction is at most 120 dB and the de-esser's 24 dB; NaN stays NaN.
    /// Thread: any.
    @inline(__always)
    static func decibelsToGain(_ db: Float) -> Float { exp2InRange(db * log2PerAmplitudeDecibel) }
}
