/// The engine's bypass of every unit (`unit.bypass` in mappings): a value 0…1 per unit,
/// ramped over 10 ms from the sample its event applies at, that crossfades the unit's
/// output toward its input bus 1 (channel c takes input channel c mod the input's
/// channels) or toward silence for a unit with no input. The unit keeps rendering, so its
/// parameters and state keep moving while bypassed (DESIGN.md rule 6) and it comes back
/// without a click. A unit at bypass 0 with no event costs one comparison.
///
/// Per-sample and from absolute event times, so block-size invariant.
/// Thread: render (init on control).
final class UnitBypass {
    let count: Int
    let rampFrames: Int
    let current: UnsafeMutablePointer<Float>
    let target: UnsafeMutablePointer<Float>
    let step: UnsafeMutablePointer<Float>
    let remaining: UnsafeMutablePointer<Int>
    let ramp: UnsafeMutablePointer<Float>

    init(unitCount: Int, sampleRate: Double, maxFrames: Int) {
        count = max(unitCount, 1)
        rampFrames = max(1, Int((0.01 * sampleRate).rounded()))
        current = .allocate(capacity: count)
        current.initialize(repeating: 0, count: count)
        target = .allocate(capacity: count)
        target.initialize(repeating: 0, count: count)
        step = .allocate(capacity: count)
        step.initialize(repeating: 0, count: count)
        remaining = .allocate(capacity: count)
        remaining.initialize(repeating: 0, count: count)
        ramp = .allocate(capacity: max(maxFrames, 1))
        ramp.initialize(repeating: 0, count: max(maxFrames, 1))
    }

    deinit {
        current.deallocate()
        target.deallocate()
        step.deallocate()
        remaining.deallocate()
        ramp.deallocate()
    }

    /// The bypass value unit `u` is heading to.
    func targetValue(_ u: Int) -> Float { target[u] }

    /// Crossfades unit `u`'s output after it rendered, applying its `.bypass` events among
    /// `events` (time-ordered; unit `u`'s chain in `lists` from `firstEvent`) at their
    /// frames. `blockStart` is the first frame of the stretch rendered (`frames` long);
    /// events before it apply at its first frame when `takesLate`, else they belonged to an
    /// earlier stretch. A unit not bypassed with no event costs two comparisons. Thread: render.
    @inline(__always)
    func apply(
        unit u: Int, step s: PlanStep, frames: Int, events: UnsafePointer<EngineEvent>, firstEvent: Int,
        lists: UnitEventLists, blockStart: Int64, takesLate: Bool = true
    ) {
        var any = current[u] != 0 || remaining[u] != 0
        guard any || firstEvent >= 0 else { return }
        var start = 0
        let end = blockStart + Int64(frames)
        var e = firstEvent
        while e >= 0 {
            let event = events[e]
            e = lists.after(e)
            // `EngineEvent.now` (Int64.min) and anything late apply at frame 0.
            let t = event.sampleTime
            guard event.kind == .bypass && t < end && (takesLate || t >= blockStart) else { continue }
            let offset = t <= blockStart ? 0 : min(Int(t - blockStart), frames)
            if any { mix(u, s, from: start, to: offset) }
            start = offset
            setTarget(u, event.value)
            any = true
        }
        if any { mix(u, s, from: start, to: frames) }
    }

    @inline(__always)
    func setTarget(_ u: Int, _ value: Float) {
        let v = value.isNaN ? 0 : min(max(value, 0), 1)
        if v == target[u] { return }
        target[u] = v
        remaining[u] = rampFrames
        step[u] = (v - current[u]) / Float(rampFrames)
    }

    /// Frames `from..<to`: out = out + (in − out) · bypass.
    func mix(_ u: Int, _ s: PlanStep, from: Int, to: Int) {
        guard to > from, s.outputs.count > 0 else { return }
        let n = to - from
        if remaining[u] == 0 && current[u] == 0 { return }
        // The ramp for this stretch.
        var cur = current[u]
        var left = remaining[u]
        let inc = step[u]
        let tgt = target[u]
        for f in 0..<n {
            if left > 0 {
                left -= 1
                cur = left == 0 ? tgt : cur + inc
            }
            ramp[f] = cur
        }
        current[u] = cur
        remaining[u] = left
        let out = s.outputs[0]
        let input: AudioBus? = s.inputs.count > 0 && s.inputs[0].channelCount > 0 ? s.inputs[0] : nil
        let steadyFull = ramp[0] == 1 && cur == 1
        for c in 0..<out.channelCount {
            let o = out[c] + from
            if let input {
                let i = input[c % input.channelCount] + from
                if steadyFull {
                    o.update(from: i, count: n)
                } else {
                    for f in 0..<n { o[f] += (i[f] - o[f]) * ramp[f] }
                }
            } else {
                if steadyFull {
                    o.update(repeating: 0, count: n)
                } else {
                    for f in 0..<n { o[f] -= o[f] * ramp[f] }
                }
            }
        }
    }
}
