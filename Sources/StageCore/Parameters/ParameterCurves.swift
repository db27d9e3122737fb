#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Conversions shared by units and the MIDI layer. Thread: any (pure functions).
public enum Curves {
    /// dB to linear gain; −96 dB and below is treated as silence by callers that want it.
    @inline(__always)
    public static func decibelsToGain(_ db: Float) -> Float {
        // 10^(db/20) = e^(db * ln10/20)
        expf(db * 0.115_129_25)
    }

    /// Linear gain to dB, with −200 dB for silence.
    public static func gainToDecibels(_ gain: Float) -> Float {
        gain > 1e-10 ? 20 * log10f(gain) : -200
    }

    /// Maps a normalized 0…1 position onto `lower…upper` along `curve`.
    /// `lower > upper` inverts the direction.
    public static func denormalize(_ x: Float, lower: Float, upper: Float, curve: ParameterCurve) -> Float {
        let t = min(max(x, 0), 1)
        switch curve {
        case .linear:
            return lower + (upper - lower) * t
        case .log:
            guard lower > 0, upper > 0 else { return lower + (upper - lower) * t }
            return lower * powf(upper / lower, t)
        case .exp:
            return lower + (upper - lower) * t * t
        }
    }

    /// The inverse of `denormalize`: where `value` sits between `lower` and `upper`.
    public static func normalize(_ value: Float, lower: Float, upper: Float, curve: ParameterCurve) -> Float {
        guard lower != upper else { return 0 }
        switch curve {
        case .linear:
            return min(max((value - lower) / (upper - lower), 0), 1)
        case .log:
            guard lower > 0, upper > 0, value > 0 else {
                return min(max((value - lower) / (upper - lower), 0), 1)
            }
            let t = logf(value / lower) / logf(upper / lower)
            return t.isNaN ? 0 : min(max(t, 0), 1)  // NaN: a ratio beyond Float's range (inf / inf)
        case .exp:
            let lin = min(max((value - lower) / (upper - lower), 0), 1)
            return lin.squareRoot()
        }
    }
}

