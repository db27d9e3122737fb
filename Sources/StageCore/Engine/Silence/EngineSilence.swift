/// The engine's one silence system: why a unit is not rendered, on one grid, with one
/// switch and one way back.
///
/// A unit (whose type opts in, `UnitSilence`) is not rendered while
/// - **nobody hears it** (`skipsWhenUnheard`): every path from it to an output passes a
///   mixer input whose fader (or the master) has settled at −96 dB or whose mute has settled
///   on, with no event for those parameters and no bypass pending (`HearingGraph`); or
/// - **it has nothing to say** (`sleepsWhenSilent`): its inputs and its own output have
///   stayed at or below the silence floor (−120 dBFS) for longer than its hold
///   (`RackUnit.silenceHoldFrames`: its tail, measured on its output), `SignalLevels`.
///
/// Either way the unit stops only at a point of the engine clock's absolute 64-frame
/// `grid` (the same frames are skipped whatever the block size: the engine cuts its blocks
/// at gate events and at grid points while a unit may be about to go unheard; a grid point
/// inside a rendered segment is found afterwards by a scan), its outputs read as zeros
/// flagged silent (`outputSilent`, Apple's "output is silence" render flag, which units
/// downstream read), and its parameters and bypass keep their timelines. It comes back at
/// an exact frame (the event that opens its gate; the first input sample above the floor)
/// through `wake`: `reset()` there, so it starts from silence as a fresh unit would. That
/// reset runs on the render thread, so only units whose reset is real-time safe
/// (`RackUnit.resetsOnRenderThread`: not LV2 plugins) take part. A unit heard again has its
/// inputs faded in over 30 ms (`ResumeFade`; a sleeper's inputs were below the floor, so
/// it needs none). `enabled` false renders every unit always, for comparisons.
///
/// Thread: render (init on control).
final class EngineSilence {
    /// Where units stop: every `grid` frames of the engine clock.
    static let grid: Int64 = 64
    /// At or below this magnitude a sample counts as silence: −120 dBFS.
    static let floor: Float = 1e-6

    let unitCount: Int
    /// Decisions are taken (false: every unit always runs, for comparisons).
    var enabled = true {
        didSet { hearing.clearCandidates() }
    }
    /// Who hears whom (the mixers' gates), for `skipsWhenUnheard`.
    let hearing: HearingGraph
    /// The silence flags' scans and each sleeper's last loud frame, for `sleepsWhenSilent`.
    let signal: SignalLevels

    /// Per unit: nobody hears it now (not rendered).
    let unheard: UnsafeMutablePointer<Bool>
    /// Per unit: asleep on silence now (not rendered).
    let asleep: UnsafeMutablePointer<Bool>
    /// Per unit: its output is silent in the current segment (the flag).
    let outputSilent: UnsafeMutablePointer<Bool>
    /// The frame each unit was last heard again (its inputs fade in from there: ResumeFade),
    /// or `Int64.min`.
    let resumedAt: UnsafeMutablePointer<Int64>
    /// Segments each unit rendered (tests count them: a skipped unit renders none).
    let renders: UnsafeMutablePointer<Int>
    /// Times units went to sleep on silence and woke (tests).
    var sleepCount = 0
    var wakeCount = 0

    init(plan: RenderPlan) {
        let n = max(plan.units.count, 1)
        unitCount = n
        // Every way back resets the unit on the render thread: only units whose reset may run there.
        let resetsHere = plan.units.map(\.resetsOnRenderThread)
        hearing = HearingGraph(plan: plan, resetsHere: resetsHere)
        signal = SignalLevels(plan: plan, resetsHere: resetsHere)
        unheard = .allocate(capacity: n)
        unheard.initialize(repeating: false, count: n)
        asleep = .allocate(capacity: n)
        asleep.initialize(repeating: false, count: n)
        outputSilent = .allocate(capacity: n)
        outputSilent.initialize(repeating: false, count: n)
        resumedAt = .allocate(capacity: n)
        resumedAt.initialize(repeating: .min, count: n)
        renders = .allocate(capacity: n)
        renders.initialize(repeating: 0, count: n)
    }

    deinit {
        for p in [unheard, asleep, outputSilent] { p.deallocate() }
        resumedAt.deallocate()
        renders.deallocate()
    }

    /// Whether unit `u` is skipped in the current segment because nobody hears it.
    @inline(__always)
    func isUnheard(_ u: Int) -> Bool { unheard[u] }

    /// Whether unit `u` sleeps on silence (its type's choice, and its reset may run here).
    @inline(__always)
    func sleeps(_ u: Int) -> Bool { signal.active && signal.sleeps[u] }

    /// Everything awake and heard, counted loud from `frame` (a reset engine). Thread:
    /// render, or control when idle.
    func wakeAll(at frame: Int64) {
        unheard.update(repeating: false, count: unitCount)
        asleep.update(repeating: false, count: unitCount)
        outputSilent.update(repeating: false, count: unitCount)
        resumedAt.update(repeating: .min, count: unitCount)
        hearing.clearCandidates()
        signal.countLoud(from: frame)
    }

    /// The one way back: unit `u` starts again from here as a fresh unit would.
    @inline(__always)
    private func wake(_ u: Int, plan: RenderPlan) {
        plan.units[u].reset()
        outputSilent[u] = false
    }

    /// Decides at frame `t` (a segment's start) which units nobody hears, waking those
    /// heard again (their inputs fade in from `t`). `pendingFrom`: events at or after it
    /// and not after `t` apply at `t` (the block's first segment takes late ones too).
    func evaluateHearing(
        at t: Int64, pendingFrom: Int64, events: UnsafePointer<EngineEvent>, count: Int, plan: RenderPlan,
        bypass: UnitBypass
    ) {
        guard hearing.mustEvaluate(at: t, pendingFrom: pendingFrom, events: events, count: count) else { return }
        hearing.evaluate(at: t, pendingFrom: pendingFrom, events: events, count: count, plan: plan, bypass: bypass)
        let onGrid = t % Self.grid == 0
        for u in 0..<unitCount where hearing.skippable[u] {
            if unheard[u] {
                if hearing.heard[u] || !enabled {
                    wake(u, plan: plan)
                    unheard[u] = false
                    resumedAt[u] = t
                }
            } else if enabled && !hearing.heard[u] && onGrid {
                unheard[u] = true
            } else if enabled && !hearing.mayBeHeard[u] {
                hearing.markCandidate()
            }
        }
    }

    /// Sleeper `u` goes to sleep (its output zeros from here, flagged).
    @inline(__always)
    func fallAsleep(_ u: Int) {
        asleep[u] = true
        sleepCount &+= 1
    }

    /// Sleeper `u` wakes at frame `t`, where an input came above the floor.
    @inline(__always)
    func wakeSleeper(_ u: Int, at t: Int64, plan: RenderPlan) {
        wake(u, plan: plan)
        asleep[u] = false
        signal.lastLoud[u] = t
        wakeCount &+= 1
    }

    /// Whether sleeper `u` goes to sleep at frame `t`: a grid point, quiet for longer than `hold`.
    @inline(__always)
    func sleepsAt(_ u: Int, frame t: Int64, hold: Int64) -> Bool {
        enabled && t % Self.grid == 0 && t - signal.lastLoud[u] > hold
    }
}

extension EngineSilence {
    /// Fills `signal.inputFlags` with unit `u`'s input buses' flags; true when all are silent.
    @inline(__always)
    func gatherInputFlags(_ u: Int) -> Bool { signal.gatherInputFlags(u, outputSilent: outputSilent) }

    /// Unit `u`'s output flag after it ran (it is not a sleeper): set when a sleeper reads it
    /// and the unit said so (and is not bypassed) or its outputs are silent.
    @inline(__always)
    func flagOutput(_ u: Int, outputs: UnsafeBufferPointer<AudioBus>, frames: Int, bypass: UnitBypass) {
        guard signal.active && !signal.sleeps[u] && signal.flagWanted[u] else { return }
        outputSilent[u] = (signal.saysSilent.pointee && bypass.isIdle(u)) || SignalLevels.isSilent(outputs, frames: frames)
    }
}
