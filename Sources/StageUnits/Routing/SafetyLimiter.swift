#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import StageCore

/// The last stage before the speakers: replaces NaN/Inf with silence and keeps every
/// sample at or under `ceiling`. Thread: render (after prepare).
///
/// A bug or a bad preset must never blast the PA, so this stage is not optional.
///
/// Per frame (stereo-linked, so the image does not shift):
/// 1. a non-finite sample becomes 0 and is counted (`nonFiniteSamples`); it never reaches
///    the gain state, so a NaN cannot poison the limiter;
/// 2. peak = max(|left|, |right|); the gain needed is ceiling/peak above the ceiling, else 1;
/// 3. the gain drops to what is needed at once (instant attack, no look-ahead, so no
///    latency) and recovers toward 1 exponentially (time constant `releaseSeconds`,
///    50 ms); within 1e-5 of 1 (−0.0001 dB) it snaps to exactly 1 (about 0.6 s after a
///    deep reduction);
/// 4. a hard clip at ±ceiling guarantees the bound whatever rounding did.
/// Samples whose level changed are counted (`limitedSamples`).
///
/// Transparent: while the gain is 1 and every sample of a block is within ±ceiling the
/// block passes bit-exact (a quick scan skips the per-frame work). A peak over the
/// ceiling costs a short dip in level, not a clipped waveform.
public final class SafetyLimiter {
    public let ceiling: Float
    /// Release time constant.
    public let releaseSeconds: Double
    /// The current gain reduction, 1 − gain: 0 when not limiting. Kept as the reduction
    /// (not the gain) because near unity a Float gain cannot move by the release's tiny
    /// steps, while the reduction keeps full relative precision.
    var reduction: Float = 0
    /// The current gain, 1 when not limiting.
    public var gain: Float { 1 - reduction }
    var releaseFactor: Float = 0.999_583

    public init(ceiling: Float, releaseSeconds: Double = 0.05) {
        self.ceiling = ceiling
        self.releaseSeconds = releaseSeconds
        prepare(sampleRate: 48000)
    }

    /// Sets the release for `sampleRate`. Thread: control.
    public func prepare(sampleRate: Double) {
        releaseFactor = Float(exp(-1 / (releaseSeconds * max(sampleRate, 1))))
        reduction = 0
    }

    /// Back to unity gain. Thread: render, or control while not rendering.
    public func reset() { reduction = 0 }

    /// Processes a stereo pair in place (one gain for both). Thread: render.
    @inline(__always)
    public func process(
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int,
        counters: UnsafeMutablePointer<SafetyCounters>
    ) {
        if reduction == 0 && Self.within(left, frames, ceiling) && Self.within(right, frames, ceiling) { return }
        run(left, right, frames, counters)
    }

    /// Processes one channel in place. Thread: render.
    @inline(__always)
    public func process(mono: UnsafeMutablePointer<Float>, frames: Int, counters: UnsafeMutablePointer<SafetyCounters>) {
        if reduction == 0 && Self.within(mono, frames, ceiling) { return }
        run(mono, nil, frames, counters)
    }

    /// True when every sample is finite and within ±c (NaN and ±Inf fail both compares).
    /// Eight at a time: the scalar loop did not vectorise (9 instructions a sample).
    @inline(__always)
    static func within(_ x: UnsafeMutablePointer<Float>, _ n: Int, _ c: Float) -> Bool {
        let high = SIMD8<Float>(repeating: c)
        let low = -high
        var inside = SIMDMask<SIMD8<Int32>>(repeating: true)
        var i = 0
        while i + 8 <= n {
            let v = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD8<Float>.self)
            inside = inside .& (v .<= high) .& (v .>= low)
            i += 8
        }
        guard all(inside) else { return false }
        while i < n {
            if !(abs(x[i]) <= c) { return false }
            i += 1
        }
        return true
    }

    @inline(__always)
    func run(
        _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, _ frames: Int,
        _ counters: UnsafeMutablePointer<SafetyCounters>
    ) {
        let c = ceiling
        var nonFinite = 0
        var limited = 0
        var reduction = self.reduction
        let k = releaseFactor
        for i in 0..<frames {
            var l = left[i]
            var r = right?[i] ?? 0
            if !l.isFinite {
                l = 0
                nonFinite += 1
            }
            if !r.isFinite {
                r = 0
                nonFinite += 1
            }
            let peak = max(abs(l), abs(r))
            let needed: Float = peak > c ? c / peak : 1
            // Release toward no reduction, then attack at once to what this frame needs.
            reduction *= k
            if reduction < 1e-5 { reduction = 0 }
            let released = 1 - reduction
            let g = min(needed, released)
            if g < released { reduction = 1 - g }
            let ol = min(max(l * g, -c), c)
            let or = min(max(r * g, -c), c)
            limited += (ol != l ? 1 : 0) + (or != r ? 1 : 0)
            left[i] = ol
            right?[i] = or
        }
        self.reduction = reduction
        counters.pointee.nonFiniteSamples &+= nonFinite
        counters.pointee.limitedSamples &+= limited
    }
}
