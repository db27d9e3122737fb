/// The steps of a segment (`RenderEngine.render` cuts each block where units stop or start
/// hearing): each unit's parameters and MIDI, its channel adapters, its inputs faded in
/// after a pause, the unit itself asleep or awake on silence, its bypass and its output's
/// silence flag. Thread: render.
extension RenderEngine {
    /// Renders frames `offset ..< offset + frames` of the block (all of it, unless units
    /// stop or start hearing within it): each step from its buffers' frame 0, the host
    /// buses at `offset`, the events of that stretch (`unitEventLists`, built for the
    /// block). Thread: render.
    func renderSegment(offset: Int, frames frameCount: Int, blockStart: Int64) {
        let steps = plan.steps
        guard steps.count > 0 else { return }
        let start = blockStart + Int64(offset)
        let first = offset == 0
        let hostInput = offset == 0 ? plan.hostInput : hostInputAt(offset)
        let shared = segmentContext(
            start: start, frames: frameCount, hostInput: hostInput, parameters: unitRefs[steps[0].unit].parameters)
        for s in 0..<steps.count {
            let step = steps[s]
            let u = step.unit
            let firstEvent = unitEventLists.first(u)
            // A unit with no event whose bank has settled needs nothing (most steps of a show).
            let unitEventCount =
                firstEvent < 0 && unitRefs[u].bankIsSettled
                ? 0 : prepareParameters(unit: u, firstEvent: firstEvent, start: start, frames: frameCount, takesLate: first)
            let skipped = silence.isUnheard(u)
            if skipped || parking.isParked(u) {
                // Nobody hears it (EngineSilence), or a panic parked it until the control
                // thread has reset it (PanicParking): its outputs read as silence.
                for o in step.outputs { o.clear(frames: frameCount) }
                silence.outputSilent[u] = true
            } else {
                renderStep(step, index: s, shared: shared, eventCount: unitEventCount, offset: offset)
            }
            bypass.apply(
                unit: u, step: step, frames: frameCount, events: blockEvents, firstEvent: firstEvent, lists: unitEventLists,
                blockStart: start, takesLate: first)
            if !skipped { silence.flagOutput(u, outputs: step.outputs, frames: frameCount, bypass: bypass) }
        }
    }

    /// What every step of a segment shares in its `RenderContext` (frames, time, tempo,
    /// beats, the host input, the silence flags' scratch), made once a segment; each step
    /// sets its own buses, parameters, MIDI and host output (`renderStep`). `parameters`
    /// holds a place. Thread: render.
    @inline(__always)
    fileprivate func segmentContext(start: Int64, frames: Int, hostInput: AudioBus, parameters: ParameterValues) -> RenderContext {
        var context = RenderContext(
            frameCount: frames, sampleTime: start, sampleRate: plan.sampleRate, tempo: tempo,
            inputs: UnsafeBufferPointer(start: nil, count: 0), outputs: UnsafeBufferPointer(start: nil, count: 0),
            parameters: parameters, events: UnsafeBufferPointer(start: unitEvents, count: 0), hostInput: hostInput,
            hostOutput: plan.hostOutput, safety: safetyCounters, tempoSource: tempoSource,
            beatPosition: beatPosition + Double(start - sampleTime) * beatsPerFrame)
        context.songBeats = songBeats
        context.songCues = songCues
        if signal.active {
            context.inputSilence = UnsafePointer(signal.inputFlags)
            context.outputSilence = signal.saysSilent
        }
        return context
    }

    /// Unit `u`'s parameter values for the segment `start ..< start + frames`: its events
    /// (from `firstEvent`, `unitEventLists`) applied to its bank at their frames, the values
    /// filled, its MIDI gathered into `unitEvents`; returns how many MIDI events. Thread: render.
    fileprivate func prepareParameters(unit u: Int, firstEvent: Int, start: Int64, frames: Int, takesLate: Bool) -> Int {
        unitRefs[u].bank { bank in
            bank.beginBlock()
            let n = applyUnitEvents(bank: bank, firstEvent: firstEvent, start: start, frames: frames, takesLate: takesLate)
            bank.fill(upTo: frames)
            return n
        }
    }

    /// Applies a unit's events of the segment `start ..< start + frames` (its chain from
    /// `firstEvent`) to its parameter bank at their frames, and gathers its MIDI into
    /// `unitEvents`; returns how many MIDI events. Late events (and `EngineEvent.now`) apply
    /// at the segment's first frame when it `takesLate` (it begins the block). Thread: render.
    @inline(__always)
    fileprivate func applyUnitEvents(bank: ParameterBank, firstEvent: Int, start: Int64, frames: Int, takesLate: Bool) -> Int {
        let end = start + Int64(frames)
        var unitEventCount = 0
        var e = firstEvent
        while e >= 0 {
            let event = blockEvents[e]
            e = unitEventLists.after(e)
            guard event.sampleTime < end && (takesLate || event.sampleTime >= start) else { continue }
            let offset = event.sampleTime <= start ? 0 : Int(event.sampleTime - start)
            switch event.kind {
            case .parameter:
                bank.fill(upTo: offset)
                bank.setTarget(Int(event.parameter), event.value, rampFrames: Int(event.rampFrames))
            case .midi where unitEventCount < unitEventCapacity:
                unitEvents[unitEventCount] = UnitEvent(frameOffset: Int32(offset), message: event.message)
                unitEventCount += 1
            default:
                break
            }
        }
        return unitEventCount
    }

    /// Renders a step's unit that is heard and not parked: its channel adapters, then the
    /// unit with the segment's `shared` context and its own buses, parameters, MIDI
    /// (`eventCount` in `unitEvents`) and host output, asleep or awake on silence
    /// (EngineSilence). Thread: render.
    @inline(__always)
    fileprivate func renderStep(_ step: PlanStep, index s: Int, shared: RenderContext, eventCount: Int, offset: Int) {
        let u = step.unit
        for a in step.adapters { adapt(a, frames: shared.frameCount) }
        var context = shared
        context.inputs = stepInputs(step, unit: u, start: shared.sampleTime, frames: shared.frameCount)
        context.outputs = step.outputs
        context.parameters = unitRefs[u].parameters
        context.events = UnsafeBufferPointer(start: unitEvents, count: eventCount)
        context.hostOutput = offset == 0 ? step.hostOutput : hostOutputAt(offset, of: step.hostOutput)
        if silence.sleeps(u) {
            renderSleeper(context, unit: u, step: s)
        } else {
            if signal.active { _ = silence.gatherInputFlags(u) }
            renderUnit(context, unit: u, step: s)
        }
    }

    /// The step's inputs, faded in if its unit was just heard again (ResumeFade). Thread: render.
    @inline(__always)
    fileprivate func stepInputs(_ step: PlanStep, unit u: Int, start: Int64, frames: Int) -> UnsafeBufferPointer<AudioBus> {
        let resumedAt = silence.resumedAt[u]
        guard resumedAt != .min else { return step.inputs }
        if resumeFade.isFading(resumedAt: resumedAt, start: start) {
            return resumeFade.fadedInputs(step.inputs, resumedAt: resumedAt, start: start, count: frames)
        }
        silence.resumedAt[u] = .min
        return step.inputs
    }

    /// Renders unit `u` (plan step `s`) with `context`. Thread: render.
    @inline(__always)
    fileprivate func renderUnit(_ context: RenderContext, unit u: Int, step s: Int) {
        if signal.active { signal.saysSilent.pointee = false }
        if measuresSteps {
            let t0 = monotonicNanoseconds()
            unitRefs[u].render(context)
            stepNanoseconds[s] &+= monotonicNanoseconds() &- t0
        } else {
            unitRefs[u].render(context)
        }
        silence.renders[u] &+= 1
    }

    /// `context` from its frame `k` > 0 on, for a sleeper woken inside the segment: later
    /// and shorter, its buses and parameters offset, no MIDI (the host buses as they were).
    /// Thread: render.
    fileprivate func startingLater(_ context: RenderContext, by k: Int) -> RenderContext {
        var later = context
        (later.inputs, later.outputs) = signal.offset(context.inputs, context.outputs, by: k)
        later.parameters = context.parameters.offset(by: k)
        later.frameCount = context.frameCount - k
        later.sampleTime = context.sampleTime + Int64(k)
        later.events = UnsafeBufferPointer(start: unitEvents, count: 0)
        later.beatPosition = beatPosition + Double(later.sampleTime - sampleTime) * beatsPerFrame
        return later
    }

    /// A unit that sleeps on silence (EngineSilence): asleep, zeros until an input is
    /// above the floor (then woken and rendered from that frame); awake, rendered, then
    /// put to sleep at the first grid point at which it has been quiet for its hold.
    /// (Inlined, as `renderUnit` is: `context` is then stored once, for the unit's call.)
    @inline(__always)
    fileprivate func renderSleeper(_ context: RenderContext, unit u: Int, step s: Int) {
        let allSilent = silence.gatherInputFlags(u)
        let start = context.sampleTime
        let n = context.frameCount
        let hold = sleepHold(u, end: start + Int64(n))
        let enabled = silence.enabled
        var x = 0
        var rendered = false
        while x < n {
            if silence.asleep[u] {
                let f = allSilent && enabled ? n : (enabled ? signal.firstLoudInput(context.inputs, from: x, to: n) : x)
                for o in context.outputs {
                    for c in 0..<o.channelCount { (o[c] + x).update(repeating: 0, count: f - x) }
                }
                if f == n { break }
                silence.wakeSleeper(u, at: start + Int64(f), plan: plan)
                x = f
            } else if silence.sleepsAt(u, frame: start + Int64(x), hold: hold) {
                silence.fallAsleep(u)
                continue
            }
            if x == 0 {
                renderUnit(context, unit: u, step: s)
            } else {
                renderUnit(startingLater(context, by: x), unit: u, step: s)
            }
            rendered = true
            guard
                let g = signal.sleepPoint(
                    u, inputs: context.inputs, outputs: context.outputs, start: start, from: x, to: n, hold: hold,
                    enabled: enabled)
            else { break }
            silence.fallAsleep(u)
            x = g
        }
        silence.outputSilent[u] = !rendered
    }

    /// Sleeper `u`'s hold (`RackUnit.silenceHoldFrames`, at least one grid step) for a call
    /// ending before `end`. The unit is asked (a protocol call, worked out anew by delay and
    /// reverb) only when its hold can decide something in the call: it is asleep, or it has
    /// been quiet for more than a grid step. Otherwise one grid step decides the same: no
    /// frame of the call is quiet for longer than that, so none is quiet for longer than its
    /// hold either. Thread: render.
    @inline(__always)
    fileprivate func sleepHold(_ u: Int, end: Int64) -> Int64 {
        guard silence.asleep[u] || end - 1 - signal.lastLoud[u] > EngineSilence.grid else { return EngineSilence.grid }
        return Int64(max(unitRefs[u].silenceHoldFrames(sampleRate: plan.sampleRate), Int(EngineSilence.grid)))
    }

    /// The host input from frame `offset` of the block on. Thread: render.
    fileprivate func hostInputAt(_ offset: Int) -> AudioBus {
        let host = plan.hostInput
        for c in 0..<host.channelCount { hostPointers[c] = host[c] + offset }
        return AudioBus(channelPointers: UnsafePointer(hostPointers), channelCount: host.channelCount)
    }

    /// An output unit's host channels (`host`, a part of `plan.hostOutput`) from frame
    /// `offset` of the block on; valid until the next call. Thread: render.
    fileprivate func hostOutputAt(_ offset: Int, of host: AudioBus) -> AudioBus {
        let pointers = hostPointers + plan.hostInput.channelCount
        for c in 0..<host.channelCount { pointers[c] = host[c] + offset }
        return AudioBus(channelPointers: UnsafePointer(pointers), channelCount: host.channelCount)
    }

    /// A step's channel adapter (mono to stereo, stereo to mono) over `frames`. Thread: render.
    @inline(__always)
    fileprivate func adapt(_ a: AdapterStep, frames: Int) {
        switch a.kind {
        case .monoToStereo:
            let src = a.source[0]
            a.destination[0].update(from: src, count: frames)
            a.destination[1].update(from: src, count: frames)
        case .stereoToMono:
            let l = a.source[0]
            let r = a.source[1]
            let out = a.destination[0]
            for i in 0..<frames { out[i] = 0.5 * (l[i] + r[i]) }
        }
    }
}
