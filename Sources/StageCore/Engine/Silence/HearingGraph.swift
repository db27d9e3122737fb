/// Who hears whom in a rack, for the units that may be skipped while nobody hears them
/// (`UnitSilence.skipsWhenUnheard`, decided by `EngineSilence`).
///
/// A unit is *heard* when some path from it reaches a unit with no consumer (an output)
/// without passing a closed gate: a mixer input whose fader (or the master) has settled at
/// −96 dB or whose mute has settled on, with no event for those parameters and no bypass
/// pending. Gates move only at events, so the engine cuts its blocks at the events on gate
/// parameters (`segmentEnd`), and at grid points while a unit may be about to go unheard
/// (`candidates`).
///
/// Thread: render (init on control).
final class HearingGraph {
    let unitCount: Int
    /// False when the plan has no skippable unit behind a gate: the engine skips all this.
    let active: Bool
    /// Per unit: may be skipped while unheard (its type's choice, and its reset may run here).
    let skippable: UnsafeMutablePointer<Bool>
    /// Scratch: heard now; heard unless closing gates close (candidates for the next grid point).
    let heard: UnsafeMutablePointer<Bool>
    let mayBeHeard: UnsafeMutablePointer<Bool>
    /// Render order, reversed (consumers before their sources).
    let reverseOrder: UnsafeMutablePointer<Int>
    /// Edges grouped by source unit: `edgeStart[u] ..< edgeStart[u + 1]`.
    let edgeStart: UnsafeMutablePointer<Int>
    let edgeTo: UnsafeMutablePointer<Int>
    /// Index of the edge's gate, or −1.
    let edgeGate: UnsafeMutablePointer<Int>
    /// Gate parameters, grouped by gate: `gateStart[g] ..< gateStart[g + 1]`; mutes flagged.
    let gateStart: UnsafeMutablePointer<Int>
    let gateParameter: UnsafeMutablePointer<Int>
    let gateIsMute: UnsafeMutablePointer<Bool>
    /// Per unit: whether some input of it is gated; per (unit, parameter): a gate's parameter.
    let gating: UnsafeMutablePointer<Bool>
    let parameterStart: UnsafeMutablePointer<Int>
    let isGateParameter: UnsafeMutablePointer<Bool>
    /// True after an evaluation found a unit that may go unheard at the next grid point.
    private(set) var candidates = false
    /// True when the last evaluation may not hold at the next segment even with no event:
    /// a gate's bypass or a fader heading to silence was still moving, or an event moved a
    /// gate (its value lands after the evaluation). Also after a reset or a switch.
    private(set) var stale = true

    init(plan: RenderPlan, resetsHere: [Bool]) {
        let silence = plan.silence
        unitCount = max(plan.units.count, 1)
        active = !silence.isEmpty && silence.skippable.count == plan.units.count
        let n = unitCount
        skippable = .allocate(capacity: n)
        skippable.initialize(repeating: false, count: n)
        if active { for u in 0..<plan.units.count { skippable[u] = silence.skippable[u] && resetsHere[u] } }
        heard = .allocate(capacity: n)
        heard.initialize(repeating: true, count: n)
        mayBeHeard = .allocate(capacity: n)
        mayBeHeard.initialize(repeating: true, count: n)
        reverseOrder = .allocate(capacity: max(plan.steps.count, 1))
        for (i, s) in plan.steps.reversed().enumerated() { (reverseOrder + i).initialize(to: s.unit) }

        let edges = active ? silence.edges.sorted { $0.from < $1.from } : []
        edgeStart = .allocate(capacity: n + 1)
        edgeTo = .allocate(capacity: max(edges.count, 1))
        edgeGate = .allocate(capacity: max(edges.count, 1))
        var gates: [InputGate] = []
        var k = 0
        for u in 0...n {
            edgeStart[u] = k
            while k < edges.count && edges[k].from == u {
                edgeTo[k] = edges[k].to
                if let g = edges[k].gate {
                    edgeGate[k] = gates.count
                    gates.append(g)
                } else {
                    edgeGate[k] = -1
                }
                k += 1
            }
        }
        let gateParameters = gates.reduce(0) { $0 + $1.levels.count + $1.mutes.count }
        gateStart = .allocate(capacity: gates.count + 1)
        gateParameter = .allocate(capacity: max(gateParameters, 1))
        gateIsMute = .allocate(capacity: max(gateParameters, 1))
        var p = 0
        for (g, gate) in gates.enumerated() {
            gateStart[g] = p
            for (list, mute) in [(gate.levels, false), (gate.mutes, true)] {
                for index in list {
                    gateParameter[p] = index
                    gateIsMute[p] = mute
                    p += 1
                }
            }
        }
        gateStart[gates.count] = p

        gating = .allocate(capacity: n)
        gating.initialize(repeating: false, count: n)
        parameterStart = .allocate(capacity: n + 1)
        var total = 0
        for u in 0..<n {
            parameterStart[u] = total
            total += u < plan.parameters.count ? plan.parameters[u].count : 0
        }
        parameterStart[n] = total
        isGateParameter = .allocate(capacity: max(total, 1))
        isGateParameter.initialize(repeating: false, count: max(total, 1))
        for e in 0..<edges.count where edgeGate[e] >= 0 {
            let to = edgeTo[e]
            gating[to] = true
            let g = edgeGate[e]
            for q in gateStart[g]..<gateStart[g + 1] where gateParameter[q] < plan.parameters[to].count {
                isGateParameter[parameterStart[to] + gateParameter[q]] = true
            }
        }
    }

    deinit {
        for p in [skippable, heard, mayBeHeard, gating, gateIsMute, isGateParameter] { p.deallocate() }
        for p in [reverseOrder, edgeStart, edgeTo, edgeGate, gateStart, gateParameter, parameterStart] { p.deallocate() }
    }

    /// No unit about to go unheard, everything to be evaluated again (a reset engine, or
    /// decisions turned on or off). Thread: render, or control when idle.
    func clearCandidates() {
        candidates = false
        stale = true
    }

    /// Whether an evaluation at `t` can find anything new: the last one is stale, a unit
    /// may go unheard at a grid point, or an event at or before `t` (from `pendingFrom`)
    /// moves a gate. Otherwise gates, bypasses and so who hears whom are as they were
    /// (most segments of a show). Thread: render.
    @inline(__always)
    func mustEvaluate(at t: Int64, pendingFrom: Int64, events: UnsafePointer<EngineEvent>, count: Int) -> Bool {
        if stale || candidates { return true }
        for e in 0..<count where events[e].sampleTime <= t && events[e].sampleTime >= pendingFrom && movesGate(events[e]) {
            return true
        }
        return false
    }

    /// A unit may go unheard at the next grid point: segments end there.
    func markCandidate() { candidates = true }

    /// Whether `event` moves a gate: a gate parameter's change, or any bypass of a gating
    /// unit (a bypassed mixer passes its first input whatever its faders say).
    @inline(__always)
    func movesGate(_ event: EngineEvent) -> Bool {
        let u = Int(event.unit)
        guard u >= 0 && u < unitCount && gating[u] else { return false }
        switch event.kind {
        case .bypass: return true
        case .parameter:
            let p = Int(event.parameter)
            return p >= 0 && parameterStart[u] + p < parameterStart[u + 1] && isGateParameter[parameterStart[u] + p]
        default: return false
        }
    }

    /// The end of the segment starting at `t`: the next gate event after it, or the next
    /// grid point while a unit may be about to go unheard, or `blockEnd`. Thread: render.
    func segmentEnd(from t: Int64, blockEnd: Int64, events: UnsafePointer<EngineEvent>, count: Int) -> Int64 {
        var end = blockEnd
        for e in 0..<count where events[e].sampleTime > t && events[e].sampleTime < end && movesGate(events[e]) {
            end = events[e].sampleTime
        }
        if candidates {
            let next = (t / EngineSilence.grid + 1) * EngineSilence.grid
            if next < end { end = next }
        }
        return end
    }

    /// Finds at frame `t` (a segment's start) which units are heard (`heard`) and which
    /// may be unless closing gates close (`mayBeHeard`); clears `candidates` for the
    /// caller's decisions. `pendingFrom`: events at or after it and not after `t` apply at
    /// `t`. Thread: render.
    func evaluate(
        at t: Int64, pendingFrom: Int64, events: UnsafePointer<EngineEvent>, count: Int, plan: RenderPlan,
        bypass: UnitBypass
    ) {
        stale = false
        for i in 0..<(unitCount == plan.units.count ? unitCount : 0) {
            let u = reverseOrder[i]
            var isHeard = edgeStart[u] == edgeStart[u + 1]  // no consumer: an output
            var may = isHeard
            for k in edgeStart[u]..<edgeStart[u + 1] {
                let c = edgeTo[k]
                let g = edgeGate[k]
                if g < 0 {
                    isHeard = isHeard || heard[c]
                    may = may || mayBeHeard[c]
                    continue
                }
                let (closed, closing) = gateState(g, unit: c, at: t, pendingFrom: pendingFrom, events: events, count: count, plan: plan, bypass: bypass)
                isHeard = isHeard || (heard[c] && !closed)
                may = may || (mayBeHeard[c] && !closing)
            }
            heard[u] = isHeard
            mayBeHeard[u] = may
        }
        candidates = false
    }

    /// Gate `g` of unit `c` at `t`: closed (settled silent, nothing pending) and closing
    /// (silent or heading there, or moved by an event now: it may close).
    private func gateState(
        _ g: Int, unit c: Int, at t: Int64, pendingFrom: Int64, events: UnsafePointer<EngineEvent>, count: Int,
        plan: RenderPlan, bypass: UnitBypass
    ) -> (closed: Bool, closing: Bool) {
        if bypass.current[c] != 0 || bypass.target[c] != 0 || bypass.remaining[c] != 0 {
            if bypass.remaining[c] != 0 { stale = true }
            return (false, false)
        }
        for e in 0..<count where Int(events[e].unit) == c && events[e].sampleTime <= t && events[e].sampleTime >= pendingFrom {
            if movesGate(events[e]) {
                stale = true
                return (false, true)
            }
        }
        let bank = plan.parameters[c]
        var closing = false
        for q in gateStart[g]..<gateStart[g + 1] {
            let p = gateParameter[q]
            guard p < bank.count else { continue }
            let target = bank.target[p]
            let silent = gateIsMute[q] ? target >= 1 : target <= InputGate.silentDecibels
            guard silent else { continue }
            if bank.remaining[p] == 0 { return (true, true) }
            closing = true
            stale = true
        }
        return (false, closing)
    }
}
