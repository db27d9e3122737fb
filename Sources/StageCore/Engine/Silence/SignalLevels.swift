/// The signal side of `EngineSilence`, for the units that sleep while they have nothing to
/// say (`UnitSilence.sleepsWhenSilent`): the silence flags' scans and each sleeper's last
/// loud frame.
///
/// **The flag.** A bus is *silent* when every sample is at or below the floor (−120 dBFS)
/// in magnitude. A skipped unit's output is zeros, flagged. A unit may flag its own output
/// (`RenderContext.markOutputSilent`: the synth with no voice sounding); any other output
/// that feeds a sleeper is checked by the engine, from its last sample backwards (a
/// sounding bus costs one comparison per channel). Unconnected inputs are silent.
///
/// **Last loud frame.** The last frame at which one of a sleeper's inputs or its output
/// was above the floor (its tail measured on its own output, so a reverb sleeps when its
/// tail has really fallen below −120 dBFS, whatever its settings). At a grid point g it
/// sleeps when g − lastLoud > its hold (`RackUnit.silenceHoldFrames`, at least one grid
/// step: a delay's longest tap, so that an echo still travelling through the line is not
/// lost in the silent gap before it). A grid point inside a rendered segment is found
/// afterwards (`sleepPoint`): the unit's output from there is replaced by zeros, and if an
/// input comes back before the segment ends, the unit is reset and rendered again from
/// that frame (`offset`), so no block is cut for it.
///
/// Thread: render (init on control).
final class SignalLevels {
    let unitCount: Int
    /// False when no unit sleeps on silence: the engine does none of this.
    let active: Bool
    /// Per unit: sleeps on silence (its type's choice, and its reset may run here).
    let sleeps: UnsafeMutablePointer<Bool>
    /// Per unit: a sleeper reads its flag, so an always-running unit's output is checked.
    let flagWanted: UnsafeMutablePointer<Bool>
    /// Per unit: the last absolute frame at which an input or its output was above the floor.
    let lastLoud: UnsafeMutablePointer<Int64>
    /// Input bus sources: `source[sourceStart[u] ..< sourceStart[u + 1]]`, −1 unconnected.
    let sourceStart: UnsafeMutablePointer<Int>
    let source: UnsafeMutablePointer<Int>
    /// Scratch for one unit's render: its input buses' flags, and its own say.
    let inputFlags: UnsafeMutablePointer<Bool>
    let saysSilent: UnsafeMutablePointer<Bool>
    /// Scratch buses for a render that starts inside the segment.
    let offsetPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let offsetBuses: UnsafeMutablePointer<AudioBus>
    init(plan: RenderPlan, resetsHere: [Bool]) {
        let silence = plan.silence
        let n = max(plan.units.count, 1)
        unitCount = n
        let valid = silence.sleeps.count == plan.units.count && silence.sources.count == plan.units.count
        active = valid && silence.sleeps.contains(true)
        sleeps = .allocate(capacity: n)
        sleeps.initialize(repeating: false, count: n)
        if active { for u in 0..<plan.units.count { sleeps[u] = silence.sleeps[u] && resetsHere[u] } }
        flagWanted = .allocate(capacity: n)
        flagWanted.initialize(repeating: false, count: n)
        lastLoud = .allocate(capacity: n)
        lastLoud.initialize(repeating: 0, count: n)
        sourceStart = .allocate(capacity: n + 1)
        let sources = valid ? silence.sources : []
        let total = sources.reduce(0) { $0 + $1.count }
        source = .allocate(capacity: max(total, 1))
        var k = 0
        for u in 0..<n {
            sourceStart[u] = k
            for s in (u < sources.count ? sources[u] : []) {
                source[k] = s
                if s >= 0 && sleeps[u] { flagWanted[s] = true }
                k += 1
            }
        }
        sourceStart[n] = k
        var buses = 1
        var channels = 1
        for step in plan.steps {
            buses = max(buses, step.inputs.count + step.outputs.count)
            channels = max(channels, (step.inputs.reduce(0) { $0 + $1.channelCount }) + step.outputs.reduce(0) { $0 + $1.channelCount })
        }
        inputFlags = .allocate(capacity: buses)
        inputFlags.initialize(repeating: false, count: buses)
        saysSilent = .allocate(capacity: 1)
        saysSilent.initialize(to: false)
        offsetPointers = .allocate(capacity: channels)
        offsetBuses = .allocate(capacity: buses)
    }

    deinit {
        for p in [sleeps, flagWanted, inputFlags, saysSilent] { p.deallocate() }
        lastLoud.deallocate()
        sourceStart.deallocate()
        source.deallocate()
        offsetPointers.deallocate()
        offsetBuses.deallocate()
    }

    /// Every unit counted loud from `frame` (a reset engine). Thread: render, or control
    /// when idle.
    func countLoud(from frame: Int64) {
        lastLoud.update(repeating: frame, count: unitCount)
    }

    /// Fills `inputFlags` with unit `u`'s input buses' flags (`outputSilent`: the engine's,
    /// per unit); true when all are silent.
    @inline(__always)
    func gatherInputFlags(_ u: Int, outputSilent: UnsafeMutablePointer<Bool>) -> Bool {
        var all = true
        var k = sourceStart[u]
        let end = sourceStart[u + 1]
        var flag = inputFlags
        while k < end {
            let s = source[k]
            let silent = s < 0 || outputSilent[s]
            flag.pointee = silent
            all = all && silent
            flag += 1
            k += 1
        }
        return all
    }

    @inline(__always)
    static func isLoud(_ x: Float) -> Bool { x > EngineSilence.floor || x < -EngineSilence.floor }

    /// Whether every channel of `buses` is silent over `0 ..< frames`. Thread: render.
    static func isSilent(_ buses: UnsafeBufferPointer<AudioBus>, frames: Int) -> Bool {
        for bus in buses {
            for c in 0..<bus.channelCount {
                let p = bus[c]
                var i = frames - 1
                while i >= 0 {
                    if isLoud(p[i]) { return false }
                    i -= 1
                }
            }
        }
        return true
    }

    /// The first frame in `from ..< to` at which an input bus not flagged silent is above
    /// the floor, or `to`. Thread: render.
    func firstLoudInput(_ inputs: UnsafeBufferPointer<AudioBus>, from: Int, to: Int) -> Int {
        var first = to
        for (b, bus) in inputs.enumerated() where !inputFlags[b] {
            for c in 0..<bus.channelCount {
                let p = bus[c]
                var i = from
                while i < first {
                    if Self.isLoud(p[i]) {
                        first = i
                        break
                    }
                    i += 1
                }
            }
        }
        return first
    }

    /// The last frame in `from ..< to` at which an input not flagged silent or an output is
    /// above the floor, or nil. Thread: render.
    func lastLoudFrame(inputs: UnsafeBufferPointer<AudioBus>, outputs: UnsafeBufferPointer<AudioBus>, from: Int, to: Int) -> Int? {
        guard to > from else { return nil }
        // An output loud at the last frame answers at once (a sounding unit: most calls).
        if outputs.count > 0 && outputs[0].channelCount > 0 && Self.isLoud(outputs[0][0][to - 1]) { return to - 1 }
        var last = from - 1
        for bus in outputs { Self.scanBack(bus, to: to, last: &last) }
        if last == to - 1 { return last }  // an output loud at its last frame: nothing later to find
        for (b, bus) in inputs.enumerated() where !inputFlags[b] { Self.scanBack(bus, to: to, last: &last) }
        return last >= from ? last : nil
    }

    /// Moves `last` up to the last frame before `to` at which `bus` is above the floor.
    @inline(__always)
    static func scanBack(_ bus: AudioBus, to: Int, last: inout Int) {
        for c in 0..<bus.channelCount {
            let p = bus[c]
            var i = to - 1
            while i > last {
                if isLoud(p[i]) {
                    last = i
                    break
                }
                i -= 1
            }
        }
    }

    /// After unit `u` rendered frames `from ..< to` of a segment starting at absolute frame
    /// `start`: brings its last loud frame up to date and returns the first grid point
    /// strictly inside at which it goes to sleep, or nil. Thread: render.
    func sleepPoint(
        _ u: Int, inputs: UnsafeBufferPointer<AudioBus>, outputs: UnsafeBufferPointer<AudioBus>, start: Int64,
        from: Int, to: Int, hold: Int64, enabled: Bool
    ) -> Int? {
        var last = lastLoud[u]
        if !enabled || last + hold >= start + Int64(to) - 1 {
            // No grid point inside can qualify: only the last loud frame matters.
            if let l = lastLoudFrame(inputs: inputs, outputs: outputs, from: from, to: to) { last = start + Int64(l) }
            lastLoud[u] = last
            return nil
        }
        var c = from
        while c < to {
            let frame = start + Int64(c)
            let phase = Int(frame % EngineSilence.grid)
            if c > from && phase == 0 && frame - last > hold {
                lastLoud[u] = last
                return c
            }
            let end = min(to, c + Int(EngineSilence.grid) - phase)
            if let l = lastLoudFrame(inputs: inputs, outputs: outputs, from: c, to: end) { last = start + Int64(l) }
            c = end
        }
        lastLoud[u] = last
        return nil
    }

    /// `inputs` then `outputs` from frame `k` on, in scratch memory valid until the next
    /// call. Thread: render.
    func offset(_ inputs: UnsafeBufferPointer<AudioBus>, _ outputs: UnsafeBufferPointer<AudioBus>, by k: Int)
        -> (UnsafeBufferPointer<AudioBus>, UnsafeBufferPointer<AudioBus>)
    {
        var channel = 0
        var b = 0
        for bus in inputs { offsetBus(bus, by: k, channel: &channel, bus: &b) }
        for bus in outputs { offsetBus(bus, by: k, channel: &channel, bus: &b) }
        return (
            UnsafeBufferPointer(start: offsetBuses, count: inputs.count),
            UnsafeBufferPointer(start: offsetBuses + inputs.count, count: outputs.count)
        )
    }

    @inline(__always)
    private func offsetBus(_ bus: AudioBus, by k: Int, channel: inout Int, bus b: inout Int) {
        let first = channel
        for c in 0..<bus.channelCount {
            offsetPointers[channel] = bus[c] + k
            channel += 1
        }
        (offsetBuses + b).initialize(to: AudioBus(channelPointers: UnsafePointer(offsetPointers + first), channelCount: bus.channelCount))
        b += 1
    }
}

extension ParameterValues {
    /// The same values from frame `k` of the block on. Thread: render.
    @inline(__always)
    func offset(by k: Int) -> ParameterValues {
        ParameterValues(base: base + k, steady: steady, stride: stride, count: count)
    }
}

extension UnitBypass {
    /// True while unit `u` is not bypassed at all (its output is its own). Thread: render.
    @inline(__always)
    func isIdle(_ u: Int) -> Bool { current[u] == 0 && target[u] == 0 && remaining[u] == 0 }
}
