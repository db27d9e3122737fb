import StageCore

/// The last stage before the speakers: replaces NaN/Inf with silence and keeps every
/// sample at or under `ceiling`. Thread: render (after prepare).
///
/// A bug or a bad preset must never blast the PA, so this stage is not optional.
public final class SafetyLimiter {
    public let ceiling: Float

    public init(ceiling: Float) { self.ceiling = ceiling }

    public func prepare(sampleRate: Double) {}
    public func reset() {}

    /// Processes a stereo pair in place.
    @inline(__always)
    public func process(
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int,
        counters: UnsafeMutablePointer<SafetyCounters>
    ) {
        var nonFinite = 0
        var limited = 0
        let c = ceiling
        for ch in 0..<2 {
            let p = ch == 0 ? left : right
            for i in 0..<frames {
                var x = p[i]
                if !x.isFinite {
                    x = 0
                    nonFinite += 1
                }
                if x > c {
                    x = c
                    limited += 1
                } else if x < -c {
                    x = -c
                    limited += 1
                }
                p[i] = x
            }
        }
        counters.pointee.nonFiniteSamples &+= nonFinite
        counters.pointee.limitedSamples &+= limited
    }
}
