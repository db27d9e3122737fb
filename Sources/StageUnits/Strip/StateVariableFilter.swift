/// One band of the trapezoidal state-variable filter (Simper's "linear trap optimised 2"),
/// in Float, as the `eq` and `deesser` units run it.
///
/// Per sample, with state (s1, s2):
/// ```
/// v3 = x − s2
/// v1 = a1·s1 + a2·v3          band
/// v2 = s2 + a2·s1 + a3·v3     low
/// s1 = 2·v1 − s1,  s2 = 2·v2 − s2
/// y  = m0·x + m1·v1 + m2·v2
/// ```
/// with a1 = 1/(1 + g(g + k)), a2 = g·a1, a3 = g·a2. The structure stays stable for any
/// positive g and k however fast they change (its state is the capacitors' charge, not
/// past outputs), which is why the EQ can take new coefficients every few samples while a
/// knob turns. Thread: any (value type).
struct SVFCoefficients: Equatable {
    var a1: Float = 1, a2: Float = 0, a3: Float = 0
    var m0: Float = 1, m1: Float = 0, m2: Float = 0

    init() {}

    init(_ d: SVFDesign) {
        let a1d = 1 / (1 + d.g * (d.g + d.k))
        a1 = Float(a1d)
        a2 = Float(d.g * a1d)
        a3 = Float(d.g * d.g * a1d)
        m0 = Float(d.m0)
        m1 = Float(d.m1)
        m2 = Float(d.m2)
    }

    /// The per-sample increment that takes `self` to `target` in `steps` samples.
    func step(to target: SVFCoefficients, steps: Int) -> SVFCoefficients {
        let r = 1 / Float(steps)
        var s = SVFCoefficients()
        s.a1 = (target.a1 - a1) * r
        s.a2 = (target.a2 - a2) * r
        s.a3 = (target.a3 - a3) * r
        s.m0 = (target.m0 - m0) * r
        s.m1 = (target.m1 - m1) * r
        s.m2 = (target.m2 - m2) * r
        return s
    }

    /// As `run`, with every coefficient moving by `step` before each sample (a linear ramp).
    /// Returns the coefficients after the last sample. Thread: render.
    @inline(__always)
    func runRamp(
        _ buffer: UnsafeMutablePointer<Float>, frames: Int, state: UnsafeMutablePointer<Float>,
        step: SVFCoefficients, bypass: UnsafePointer<Float>?
    ) -> SVFCoefficients {
        process(buffer, frames: frames, state: state, step: step, bypass: bypass)
    }

    /// True when y = x exactly (a peak or shelf at 0 dB): the band can be skipped.
    var isIdentity: Bool { m0 == 1 && m1 == 0 && m2 == 0 }

    /// Filters `frames` samples of `buffer` in place; `state` holds (s1, s2).
    /// Thread: render.
    @inline(__always)
    func run(_ buffer: UnsafeMutablePointer<Float>, frames: Int, state: UnsafeMutablePointer<Float>) {
        _ = process(buffer, frames: frames, state: state, step: nil, bypass: nil)
    }

    /// As `run`, crossfaded with the unfiltered signal: y = x + (1 − bypass[i])·(filtered − x).
    /// Thread: render.
    @inline(__always)
    func run(
        _ buffer: UnsafeMutablePointer<Float>, frames: Int, state: UnsafeMutablePointer<Float>,
        bypass: UnsafePointer<Float>
    ) {
        _ = process(buffer, frames: frames, state: state, step: nil, bypass: bypass)
    }

    /// The one loop behind `run` and `runRamp`: with a `step`, every coefficient moves by
    /// it before each sample; with `bypass`, the output is crossfaded with the input, and a
    /// fully bypassed sample (1) leaves the state cleared, exactly as a skipped band does,
    /// so the result does not depend on where blocks begin. Inlined with `step` and
    /// `bypass` known at each call, so each caller gets its own loop with nothing to decide
    /// per sample (the instruction counts of `Benchmarks/strip` are unchanged by sharing
    /// it). Returns the coefficients after the last sample. Thread: render.
    @inline(__always)
    func process(
        _ buffer: UnsafeMutablePointer<Float>, frames: Int, state: UnsafeMutablePointer<Float>,
        step: SVFCoefficients?, bypass: UnsafePointer<Float>?
    ) -> SVFCoefficients {
        var s1 = state[0], s2 = state[1]
        var c = self
        for i in 0..<frames {
            if let step {
                c.a1 += step.a1
                c.a2 += step.a2
                c.a3 += step.a3
                c.m0 += step.m0
                c.m1 += step.m1
                c.m2 += step.m2
            }
            let x = buffer[i]
            if let bypass, bypass[i] == 1 {
                s1 = 0
                s2 = 0
                continue
            }
            let (v1, v2) = c.tick(x, &s1, &s2)
            let y = c.m0 * x + c.m1 * v1 + c.m2 * v2
            if let bypass { buffer[i] = x + (1 - bypass[i]) * (y - x) } else { buffer[i] = y }
        }
        state[0] = s1
        state[1] = s2
        return c
    }

    /// One sample; returns (band, low) and updates the state. Thread: render.
    @inline(__always)
    func tick(_ x: Float, _ s1: inout Float, _ s2: inout Float) -> (band: Float, low: Float) {
        let v3 = x - s2
        let v1 = a1 * s1 + a2 * v3
        let v2 = s2 + a2 * s1 + a3 * v3
        s1 = 2 * v1 - s1
        s2 = 2 * v2 - s2
        return (v1, v2)
    }
}

/// Sets `value` to 0 when it is below `floor` in magnitude (denormal guard). Thread: any.
@inline(__always)
func flushTiny(_ value: inout Float, below floor: Float = 1e-20) {
    if abs(value) < floor { value = 0 }
}
