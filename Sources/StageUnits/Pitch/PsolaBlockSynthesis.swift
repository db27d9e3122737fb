/// Block rendering of a `PsolaSynthesis` voice (the harmony unit's four voices): the
/// decisions per sample, the audio per grain.
///
/// `process` does both for each sample: places grains, then sums every playing grain's
/// windowed sample. Here the block is done in two passes with the same result:
/// 1. `control`, for each sample (after the tracker's `advance` for it): starts, places
///    and resolves grains exactly as `process` does at that sample, so the decisions see
///    the marks known then (block-size invariance). Finished grains stay in the list.
/// 2. `renderBlock`, once per block: each grain adds its window times the input over the
///    part of the block it covers, in up to three runs (rise, flat top, fall), each a
///    simple loop over contiguous samples (the ring is mirrored) that the compiler
///    vectorizes; then the grains that ended are dropped.
/// A grain's window is a pure function of its final `rise`, `right` and `fall`: before its
/// `right` is resolved the window is flat (1), and resolving never moves the fall before
/// the sample where it happened, so rendering after the decisions is exact.
///
/// The rises and falls are sin²(πx/2) from a polynomial (odd, degree 9: within 2·10⁻⁶ of
/// the table `process` reads, and a rise plus the mirrored fall is still 1). Each grain
/// carries the density compensation (`gain`) it was placed with.
/// Thread: render; allocates nothing.
extension PsolaSynthesis {
    /// The per-sample half at absolute time `now`. Thread: render.
    @inline(__always)
    mutating func control(marks m: UnsafePointer<PitchMarkTracker>, now: Int64, ratio: Float, period: Double, gain: Float) {
        if !active && m.pointee.tracking && m.pointee.markCount > m.pointee.segmentFirst { tryActivate(m, now: now) }
        if active && now >= decideAt { schedule(m, now: now, ratio: ratio, period: period, gain: gain) }
        if unresolved > 0 { resolvePending(m, now: now) }
    }

    /// Resolves the `right` of grains past their centre, as `process` does. Thread: render.
    mutating func resolvePending(_ m: UnsafePointer<PitchMarkTracker>, now: Int64) {
        for g in 0..<grainCount {
            let grain = grains + g
            if grain.pointee.right == 0 && grain.pointee.stop == .max && now >= grain.pointee.center {
                resolveRight(m, grain, j: Int(now - grain.pointee.center))
            }
        }
    }

    /// The voice goes silent at `now` (its owner stops calling `control`): the grains stop
    /// there (they are rendered up to it, then dropped) and synthesis starts afresh.
    mutating func cut(at now: Int64) {
        for g in 0..<grainCount { grains[g].stop = min(grains[g].stop, now) }
        active = false
        nextSynthesis = 0
        firstCenter = 0
        decideAt = 0
        unresolved = 0
        fallback = 1
        lastCoverage = 0
    }

    /// Adds the voice over absolute times `start ..< start + n` to `out` (which the caller
    /// cleared), reading `ring` (mirrored: `2 × (mask + 1)` samples); `formant` per sample,
    /// or nil when it is 1 for the whole block. Then drops the grains that ended.
    /// Thread: render.
    mutating func renderBlock(
        into out: UnsafeMutablePointer<Float>, from start: Int64, count n: Int, ring: UnsafePointer<Float>, mask: Int,
        formant: UnsafePointer<Float>?, riseTable: UnsafePointer<Float>
    ) {
        let end = start + Int64(n)
        var g = 0
        while g < grainCount {
            let grain = grains[g]
            if let formant {
                renderShifted(grain, into: out, from: start, count: n, ring: ring, mask: mask, formant: formant, riseTable: riseTable)
            } else {
                render(grain, into: out, from: start, end: end, ring: ring, mask: mask)
            }
            let last = min(grain.stop, grain.right > 0 ? grain.center + Int64(grain.right) : .max)
            if last <= end {
                grainCount -= 1
                grains[g] = grains[grainCount]
            } else {
                g += 1
            }
        }
    }

    /// One grain read at rate 1 (formants kept): rise, flat top, fall. Thread: render.
    @inline(__always)
    func render(
        _ grain: PsolaGrain, into out: UnsafeMutablePointer<Float>, from start: Int64, end: Int64,
        ring: UnsafePointer<Float>, mask: Int
    ) {
        let center = grain.center
        let riseStart = center - Int64(grain.rise)
        let last = min(grain.stop, grain.right > 0 ? center + Int64(grain.right) : .max)
        let fallStart = grain.right > 0 ? center + Int64(grain.right - grain.fall) : .max
        let g = grain.gain
        func run(_ a: Int64, _ b: Int64) -> (Int64, Int)? {
            let lo = max(a, start)
            let hi = min(b, end, last)
            return hi > lo ? (lo, Int(hi - lo)) : nil
        }
        func source(_ t: Int64) -> UnsafePointer<Float> { ring + Int((t - Int64(grain.delay)) & Int64(mask)) }
        if let (t, count) = run(riseStart, center) {
            let x0 = Float(t - riseStart) * grain.riseScale / 1024
            Self.addWindowed(out + Int(t - start), source(t), count, x0: x0, dx: grain.riseScale / 1024, gain: g)
        }
        if let (t, count) = run(center, fallStart) {
            let o = out + Int(t - start)
            let s = source(t)
            for k in 0..<count { o[k] += g * s[k] }
        }
        if let (t, count) = run(fallStart, last) {
            let x0 = 1 - Float(t - fallStart) * grain.fallScale / 1024
            Self.addWindowed(out + Int(t - start), source(t), count, x0: x0, dx: -grain.fallScale / 1024, gain: g)
        }
    }

    /// `out[k] += gain · sin²(π/2 · (x0 + k·dx)) · x[k]`, for x0 + k·dx within 0…1.
    @inline(__always)
    static func addWindowed(
        _ out: UnsafeMutablePointer<Float>, _ x: UnsafePointer<Float>, _ count: Int, x0: Float, dx: Float, gain: Float
    ) {
        // sin²(πx/2) = ½ + ½·sin(π(x − ½)); sin by its Taylor series to the 9th power.
        let half = 0.5 * gain
        let pi: Float = .pi
        let c0 = pi * (x0 - 0.5)
        let c1 = pi * dx
        for k in 0..<Int(Int32(truncatingIfNeeded: count)) {
            let v = c0 + c1 * Float(Int32(truncatingIfNeeded: k))
            let v2 = v * v
            let s = v * (1 + v2 * (-1.0 / 6 + v2 * (1.0 / 120 + v2 * (-1.0 / 5040 + v2 * (1.0 / 362_880)))))
            out[k] += (half + half * s) * x[k]
        }
    }

    /// One grain read at the per-sample `formant` rate (linear interpolation around its
    /// analysis mark, never ahead of the sample's time), as `process` does. Thread: render.
    func renderShifted(
        _ grain: PsolaGrain, into out: UnsafeMutablePointer<Float>, from start: Int64, count n: Int,
        ring: UnsafePointer<Float>, mask: Int, formant: UnsafePointer<Float>, riseTable: UnsafePointer<Float>
    ) {
        let last = min(grain.stop, grain.right > 0 ? grain.center + Int64(grain.right) : .max)
        let mark = Double(grain.center - Int64(grain.delay))
        for i in 0..<n {
            let now = start + Int64(i)
            let j = Int(now - grain.center)
            if now >= last { break }
            var w: Float
            if j < 0 {
                let r = j + grain.rise
                if r < 0 { continue }
                w = VoicePath.lookup(riseTable, Float(r) * grain.riseScale)
            } else {
                let fallStart = grain.right - grain.fall
                if grain.right == 0 || j < fallStart {
                    w = 1
                } else {
                    w = VoicePath.lookup(riseTable, 1024 - Float(j - fallStart) * grain.fallScale)
                }
            }
            let t = min(mark + Double(formant[i]) * Double(j), Double(now))
            let whole = t.rounded(.down)
            let f = Float(t - whole)
            let i0 = Int64(whole)
            let a = ring[Int(i0 & Int64(mask))]
            let b = ring[Int((i0 + 1) & Int64(mask))]
            out[i] += grain.gain * w * (a + f * (b - a))
        }
    }
}
