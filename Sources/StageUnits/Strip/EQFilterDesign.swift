#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The eleven band types of the `eq` unit, in Apple's NBandEQ order (the parameter value).
public enum EQFilterType: Int, Sendable, CaseIterable {
    case parametric, lowPass, highPass, resonantLowPass, resonantHighPass, bandPass, bandStop
    case lowShelf, highShelf, resonantLowShelf, resonantHighShelf

    /// The names used in rack files, in parameter-value order.
    public static let names = [
        "parametric", "lowPass", "highPass", "resonantLowPass", "resonantHighPass", "bandPass", "bandStop",
        "lowShelf", "highShelf", "resonantLowShelf", "resonantHighShelf",
    ]

    /// Whether `gainN` acts on this type (the pass and stop types ignore it).
    public var usesGain: Bool {
        switch self {
        case .parametric, .lowShelf, .highShelf, .resonantLowShelf, .resonantHighShelf: return true
        default: return false
        }
    }
}

/// A second-order section in the cookbook's form: H(z) = (b0 + b1 z⁻¹ + b2 z⁻²) / (a0 + a1 z⁻¹ + a2 z⁻²).
public struct Biquad: Sendable, Equatable {
    public var b0, b1, b2, a0, a1, a2: Double

    /// |H(e^jω)| at `frequency` Hz. Thread: any.
    public func magnitude(at frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        let c1 = cos(w), s1 = sin(w), c2 = cos(2 * w), s2 = sin(2 * w)
        let nr = b0 + b1 * c1 + b2 * c2, ni = -(b1 * s1 + b2 * s2)
        let dr = a0 + a1 * c1 + a2 * c2, di = -(a1 * s1 + a2 * s2)
        return ((nr * nr + ni * ni) / (dr * dr + di * di)).squareRoot()
    }
}

/// The coefficients of one band as the topology-preserving state-variable filter runs it
/// (Simper's trapezoidal SVF): g = tan(π·f/fs) (divided by √A for a low shelf, times √A
/// for a high shelf), k = 1/Q, and the output mix y = m0·x + m1·band + m2·low.
public struct SVFDesign: Sendable, Equatable {
    public var g, k, m0, m1, m2: Double
}

/// One band's design, in Double: the RBJ "Audio EQ Cookbook" biquad it stands for, and the
/// state-variable filter with exactly the same transfer function (both are the bilinear
/// transform, prewarped at the band's frequency, of the same analog prototype).
///
/// How `bandwidth` (octaves) becomes Q (see racks/README.md for the table):
/// - parametric, bandPass, bandStop: the cookbook's digital bandwidth,
///   1/Q = 2·sinh(ln 2 / 2 · BW · ω0 / sin ω0) (the bandwidth between the −3 dB points of
///   the band pass and notch, between the half-gain points of the peak);
/// - lowPass, highPass: Butterworth, Q = 1/√2 (bandwidth ignored);
/// - resonantLowPass/HighPass: Q = Qbw = 1 / (2·sinh(ln 2 / 2 · BW)), the analog octave formula;
/// - lowShelf, highShelf: the cookbook shelf with Q = min(Qbw, 1/√2): the classic S = 1
///   shelf at 0.5 octave and below, gentler (a longer slope) for wider bandwidths;
/// - resonantLowShelf/HighShelf: the same shelf with Q = max(Qbw, 1/√2): a bump and dip
///   around the corner that grows as the bandwidth narrows.
/// Frequencies are clamped to 10 Hz…0.49·fs and Q to 0.001…1000. Thread: any.
public struct EQBandDesign: Sendable, Equatable {
    public var type: EQFilterType
    public var frequency: Double
    public var gain: Double
    public var bandwidth: Double

    public init(type: EQFilterType, frequency: Double, gain: Double, bandwidth: Double) {
        self.type = type
        self.frequency = frequency
        self.gain = gain
        self.bandwidth = bandwidth
    }

    static let butterworthQ = 1 / 2.0.squareRoot()

    /// The band's frequency as used, clamped to 10 Hz…0.49·fs.
    public func clampedFrequency(_ sampleRate: Double) -> Double {
        min(max(frequency, 10), 0.49 * sampleRate)
    }

    /// ω0 = 2π·f/fs.
    func omega(_ sampleRate: Double) -> Double { 2 * Double.pi * clampedFrequency(sampleRate) / sampleRate }

    /// The cookbook's A = 10^(gain/40), 1 for the types that ignore the gain.
    var amplitude: Double { type.usesGain ? pow(10, min(max(gain, -96), 24) / 40) : 1 }

    /// Q as the table above gives it.
    public func q(_ sampleRate: Double) -> Double {
        let bw = min(max(bandwidth, 0.05), 5)
        let analog = 1 / (2 * sinh(log(2) / 2 * bw))
        let q: Double
        switch type {
        case .parametric, .bandPass, .bandStop:
            let w0 = omega(sampleRate)
            q = 1 / (2 * sinh(log(2) / 2 * bw * w0 / sin(w0)))
        case .lowPass, .highPass: q = Self.butterworthQ
        case .resonantLowPass, .resonantHighPass: q = analog
        case .lowShelf, .highShelf: q = min(analog, Self.butterworthQ)
        case .resonantLowShelf, .resonantHighShelf: q = max(analog, Self.butterworthQ)
        }
        return min(max(q, 0.001), 1000)
    }

    /// The cookbook biquad (R. Bristow-Johnson's formulas, unnormalised).
    public func cookbook(sampleRate: Double) -> Biquad {
        let w0 = omega(sampleRate)
        let cw = cos(w0), sw = sin(w0)
        let alpha = sw / (2 * q(sampleRate))
        let a = amplitude
        switch type {
        case .parametric:
            return Biquad(b0: 1 + alpha * a, b1: -2 * cw, b2: 1 - alpha * a, a0: 1 + alpha / a, a1: -2 * cw, a2: 1 - alpha / a)
        case .lowPass, .resonantLowPass:
            return Biquad(b0: (1 - cw) / 2, b1: 1 - cw, b2: (1 - cw) / 2, a0: 1 + alpha, a1: -2 * cw, a2: 1 - alpha)
        case .highPass, .resonantHighPass:
            return Biquad(b0: (1 + cw) / 2, b1: -(1 + cw), b2: (1 + cw) / 2, a0: 1 + alpha, a1: -2 * cw, a2: 1 - alpha)
        case .bandPass:
            return Biquad(b0: alpha, b1: 0, b2: -alpha, a0: 1 + alpha, a1: -2 * cw, a2: 1 - alpha)
        case .bandStop:
            return Biquad(b0: 1, b1: -2 * cw, b2: 1, a0: 1 + alpha, a1: -2 * cw, a2: 1 - alpha)
        case .lowShelf, .resonantLowShelf:
            let r = 2 * a.squareRoot() * alpha
            return Biquad(
                b0: a * ((a + 1) - (a - 1) * cw + r), b1: 2 * a * ((a - 1) - (a + 1) * cw),
                b2: a * ((a + 1) - (a - 1) * cw - r), a0: (a + 1) + (a - 1) * cw + r,
                a1: -2 * ((a - 1) + (a + 1) * cw), a2: (a + 1) + (a - 1) * cw - r)
        case .highShelf, .resonantHighShelf:
            let r = 2 * a.squareRoot() * alpha
            return Biquad(
                b0: a * ((a + 1) + (a - 1) * cw + r), b1: -2 * a * ((a - 1) + (a + 1) * cw),
                b2: a * ((a + 1) + (a - 1) * cw - r), a0: (a + 1) - (a - 1) * cw + r,
                a1: 2 * ((a - 1) - (a + 1) * cw), a2: (a + 1) - (a - 1) * cw - r)
        }
    }

    /// The state-variable filter with the cookbook biquad's transfer function.
    public func stateVariable(sampleRate: Double) -> SVFDesign {
        let g0 = tan(omega(sampleRate) / 2)
        let k = 1 / q(sampleRate)
        let a = amplitude
        switch type {
        case .parametric:
            let kp = 1 / (q(sampleRate) * a)
            return SVFDesign(g: g0, k: kp, m0: 1, m1: kp * (a * a - 1), m2: 0)
        case .lowPass, .resonantLowPass: return SVFDesign(g: g0, k: k, m0: 0, m1: 0, m2: 1)
        case .highPass, .resonantHighPass: return SVFDesign(g: g0, k: k, m0: 1, m1: -k, m2: -1)
        case .bandPass: return SVFDesign(g: g0, k: k, m0: 0, m1: k, m2: 0)
        case .bandStop: return SVFDesign(g: g0, k: k, m0: 1, m1: -k, m2: 0)
        case .lowShelf, .resonantLowShelf:
            return SVFDesign(g: g0 / a.squareRoot(), k: k, m0: 1, m1: k * (a - 1), m2: a * a - 1)
        case .highShelf, .resonantHighShelf:
            return SVFDesign(g: g0 * a.squareRoot(), k: k, m0: a * a, m1: k * (1 - a) * a, m2: 1 - a * a)
        }
    }
}
