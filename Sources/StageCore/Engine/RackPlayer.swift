import Synchronization

/// Plays one rack and switches to another at a block boundary without a gap: the new rack
/// fades in over a short crossfade while the old one's input fades out, and the old rack
/// keeps rendering its tails (reverb, echoes, released notes) until they fall below
/// −80 dBFS or a time limit; then it goes back to the control thread to be released.
///
/// Events reach the racks through the player's queues, tagged with the plan generation
/// they were mapped for; events for a rack that is only ringing out are dropped, except
/// that every tailing rack got sustain-off and all-notes-off when it was switched away from
/// (`RenderEngine.releaseAllNotes`: on the channels that hold notes). A rack is best
/// submitted warmed (`RenderEngine.warmUp`, as `PresetSwitcher` does): its first block
/// here then finds its memory warm.
/// The player also owns the stop fade (SIGINT/SIGTERM: no click at the end).
///
/// No event is lost on the way: an event the engine cannot take in this block (its per-block
/// buffer is full) stays in its queue for the next block, counted in `eventsCarried`; one
/// that comes after its frame has passed plays at the block's first frame, counted in
/// `eventsLate`; events for a rack no longer playing are counted in `eventsStale`.
///
/// Threads and queues (see docs/ARCHITECTURE.md): `render` on the render thread; `submit`
/// and `collectRetired` on the one control thread; `requestFadeOut` from any thread. Each
/// queue below names its one producer and one consumer thread; when the render thread is
/// replaced (a device lost and reopened) the control thread calls `handOverRenderThread()`
/// between the old thread's end and the new one's start.
public final class RackPlayer: @unchecked Sendable {
    /// The engine the render thread plays. Thread: render (read it elsewhere only when idle).
    public private(set) var current: RenderEngine
    /// `current`, retained once more so that the render thread never drops a last reference.
    var currentPointer: UnsafeMutableRawPointer
    /// Player time of `current`'s frame 0.
    var currentStart: Int64 = 0
    var fadeInPosition: Int
    /// Frames rendered by the player: the time base of the events in its queues.
    public private(set) var sampleTime: Int64 = 0

    /// Notes, CCs and other mapped events, at their frames. Producer: the MIDI thread (live)
    /// or the offline driver. Consumer: the render thread.
    public let events: SPSCQueue<EngineEvent>
    /// Events from the control side (snapshot recalls). Producer: the control thread.
    /// Consumer: the render thread.
    public let controlEvents: SPSCQueue<EngineEvent>

    /// Engines sent to the render thread (retained, as opaque pointers). Producer: the
    /// control thread (`submit`). Consumer: the render thread.
    let incoming = SPSCQueue<UnsafeMutableRawPointer>(minimumCapacity: 4)
    /// Engines the render thread is done with (retained). Producer: the render thread.
    /// Consumer: the control thread (`collectRetired`, which releases them).
    let retired = SPSCQueue<UnsafeMutableRawPointer>(minimumCapacity: 16)

    /// The audio clock that live MIDI is scheduled on. Written by the audio thread
    /// (`LiveAudio`), read by the MIDI thread.
    public let clock = AudioClock()

    /// The input copied out for a control thread while armed (the page's soundcheck);
    /// nil: none. Set before the render thread starts, then only read. Thread: render
    /// (`take`), the tap's consumer (the rest).
    public var inputTap: InputTap?

    /// A rack ringing out after a switch.
    struct Tail {
        var active: Bool
        var pointer: UnsafeMutableRawPointer
        var start: Int64
        /// Frames since the switch (its input fades over the crossfade, then it hears silence).
        var age: Int
        /// Consecutive frames under the silence threshold.
        var quiet: Int
        /// 1 normally; falls to 0 over 10 ms when the rack must make room for a newer one.
        var gain: Float
        var forced: Bool
    }
    static let maxTails = 4
    /// Fixed slots (no arrays of optionals: their metadata is made lazily, by allocating).
    let tails: UnsafeMutablePointer<Tail>

    /// The first rack's largest block: every rack submitted later takes blocks at least this
    /// large (read by the control thread, so not `current`'s, which the render thread swaps).
    public let maxFrames: Int
    public let crossfadeFrames: Int
    /// A tailing rack is released after this long even if it still sounds.
    public let tailLimitFrames: Int
    let quietFramesNeeded: Int
    let forcedFadeStep: Float
    /// −80 dBFS.
    public static let silenceThreshold: Float = 1e-4
    /// Switches started, and racks released from their tails (render thread counts).
    public let switches = Atomic<Int>(0)
    public let tailsEnded = Atomic<Int>(0)
    /// Racks released by `collectRetired` (control thread counts).
    public let racksReleased = Atomic<Int>(0)
    /// Events handed to a rack, events that waited a block because the rack's per-block
    /// buffer was full, events that came after their frame, and events dropped because the
    /// rack they were mapped for no longer plays (render thread counts).
    /// (Of `events`; `controlEventsApplied` and `controlEventsStale` count `controlEvents`.)
    public let eventsApplied = Atomic<Int>(0)
    public let eventsCarried = Atomic<Int>(0)
    public let eventsLate = Atomic<Int>(0)
    public let eventsStale = Atomic<Int>(0)
    public let controlEventsApplied = Atomic<Int>(0)
    public let controlEventsStale = Atomic<Int>(0)

    /// The playing rack's tempo after the last block (a Double's bits) and its source
    /// (`TempoSource.rawValue`, −1: none gives one). Render thread stores, any thread reads.
    let tempoBits = Atomic<UInt64>(TempoSources.fallback.bitPattern)
    let tempoSourceRaw = Atomic<Int32>(-1)
    /// The playing rack's Talk (`RenderEngine.talkIsOn`) after the last block. Render thread
    /// stores, any thread reads.
    let talkOn = Atomic<Bool>(false)

    /// Whether Talk is on in the playing rack, as of the last block rendered. Thread: any.
    public var playingTalk: Bool { talkOn.load(ordering: .relaxed) }

    /// The tempo the playing rack follows and where it comes from (`RenderEngine.tempo`), as
    /// of the last block rendered. Thread: any.
    public var playingTempo: (bpm: Double, source: TempoSource?) {
        (Double(bitPattern: tempoBits.load(ordering: .relaxed)), TempoSource(rawValue: tempoSourceRaw.load(ordering: .relaxed)))
    }

    /// The shared session the playing rack follows (`play --link`), nil: none. Set by the
    /// control thread before the render thread starts; read by the render thread only.
    /// Unowned: whoever sets it keeps it alive while anything renders (no retain a block).
    public unowned(unsafe) var session: (any TempoSession)?
    /// The session as this block read it, and the tap tempo proposed last. Thread: render.
    var sessionState = TempoSessionState(tempo: 0, beat: 0, shared: false)
    var proposedTap = 0.0
    /// A switch held until the session reaches a beat (`holdNextSwitch`, a Double's bits;
    /// NaN: none). Producer: the control thread. Consumer: the render thread.
    let switchGateBits = Atomic<UInt64>(Double.nan.bitPattern)
    /// The session's beat at the block where the last switch began (a Double's bits), then
    /// the count of such switches (`switchOnBeat`). Render thread stores, any thread reads.
    let switchBeatBits = Atomic<UInt64>(0)
    let switchesOnBeat = Atomic<Int>(0)
    /// The same for the song's section jumps (`sectionJumpOnBeat`).
    let jumpBeatBits = Atomic<UInt64>(0)
    let jumpsOnBeat = Atomic<Int>(0)
    /// The same for the snapshot recalls held for a bar line (`snapshotOnBeat`).
    let recallBeatBits = Atomic<UInt64>(0)
    let recallsOnBeat = Atomic<Int>(0)
    /// The same for the song's live transposes (`transposeOnBeat`).
    let transposeBeatBits = Atomic<UInt64>(0)
    let transposesOnBeat = Atomic<Int>(0)

    // Output fade for stopping.
    let fadeOutRequested = Atomic<Bool>(false)
    let fadedOut = Atomic<Bool>(false)
    var fadeGain: Float = 1
    let fadeStep: Float

    /// Every engine submitted later must have the same sample rate and take blocks at least
    /// as large as this one.
    public init(
        engine: RenderEngine, crossfadeSeconds: Double = 0.02, fadeOutSeconds: Double = 0.01, tailLimitSeconds: Double = 15,
        queueCapacity: Int = 4096
    ) {
        current = engine
        currentPointer = Unmanaged.passRetained(engine).toOpaque()
        let rate = engine.plan.sampleRate
        maxFrames = engine.plan.maxFrames
        crossfadeFrames = max(1, Int(crossfadeSeconds * rate))
        fadeInPosition = crossfadeFrames  // the first rack plays at once
        tailLimitFrames = Int(tailLimitSeconds * rate)
        quietFramesNeeded = Int(0.05 * rate)
        forcedFadeStep = 1 / Float(max(1, Int(0.01 * rate)))
        fadeStep = 1 / Float(max(1, Int(fadeOutSeconds * rate)))
        events = SPSCQueue(minimumCapacity: queueCapacity)
        controlEvents = SPSCQueue(minimumCapacity: 1024)
        tails = .allocate(capacity: Self.maxTails)
        tails.initialize(
            repeating: Tail(active: false, pointer: currentPointer, start: 0, age: 0, quiet: 0, gain: 0, forced: false),
            count: Self.maxTails)
    }

    deinit {
        // Every other thread has stopped: this one takes both queues over.
        incoming.handOverConsumer()
        retired.handOverConsumer()
        while let p = incoming.pop() { Unmanaged<RenderEngine>.fromOpaque(p).release() }
        while let p = retired.pop() { Unmanaged<RenderEngine>.fromOpaque(p).release() }
        for k in 0..<Self.maxTails where tails[k].active { Unmanaged<RenderEngine>.fromOpaque(tails[k].pointer).release() }
        tails.deallocate()
        Unmanaged<RenderEngine>.fromOpaque(currentPointer).release()
    }

    /// Hands a new engine to the render thread; false if two switches are already waiting.
    /// Thread: control.
    @discardableResult
    public func submit(_ engine: RenderEngine) -> Bool {
        precondition(engine.plan.maxFrames >= maxFrames, "a new rack must take blocks as large as the first one")
        let p = Unmanaged.passRetained(engine).toOpaque()
        if incoming.push(p) { return true }
        Unmanaged<RenderEngine>.fromOpaque(p).release()
        return false
    }

    /// Releases engines the render thread has finished with; returns how many.
    /// Thread: control (the one consumer of the return queue).
    @discardableResult
    public func collectRetired() -> Int {
        var n = 0
        while let p = retired.pop() {
            Unmanaged<RenderEngine>.fromOpaque(p).release()
            n += 1
        }
        if n > 0 { racksReleased.add(n, ordering: .relaxed) }
        return n
    }

    /// The render thread is being replaced: the next thread to render owns the render
    /// side of every queue: the player's own, and those of the playing rack and of the
    /// racks ringing out (their events, their units' queues: a player's disk queues).
    /// Thread: control, while no render thread runs.
    public func handOverRenderThread() {
        events.handOverConsumer()
        controlEvents.handOverConsumer()
        incoming.handOverConsumer()
        retired.handOverProducer()
        inputTap?.handOverRenderThread()
        current.handOverRenderThread()
        for k in 0..<Self.maxTails where tails[k].active {
            Unmanaged<RenderEngine>.fromOpaque(tails[k].pointer).takeUnretainedValue().handOverRenderThread()
        }
    }

    /// Events waiting in the player's queues (for a final check). Thread: any, as an estimate.
    public var eventsWaiting: Int { events.approximateCount + controlEvents.approximateCount }

    /// Racks still ringing out. Thread: render (or any while no render thread runs).
    public var tailCount: Int { (0..<Self.maxTails).reduce(0) { $0 + (tails[$1].active ? 1 : 0) } }

    /// Starts the fade to silence; `isFadedOut` turns true when it is done. Thread: any.
    public func requestFadeOut() { fadeOutRequested.store(true, ordering: .releasing) }
    public var isFadedOut: Bool { fadedOut.load(ordering: .acquiring) }

    /// Clears the playing engine's state and clock, e.g. after a warm-up block (benchmarks).
    /// Thread: control, while no thread renders (it resets LV2 plugins).
    public func resetCurrent() {
        current.reset()
        currentStart = sampleTime
    }

    /// Renders one block: `input` goes to the racks' host inputs, the sum of the playing
    /// rack and the ringing tails (after the stop fade) to `output`: the playback device's
    /// channels (at least 2); a rack's output channels beyond it are not heard, channels no
    /// output of the rack plays on are silent. Thread: render.
    public func render(frameCount n: Int, input: AudioBus?, output: AudioBus) {
        inputTap?.take(input, frames: n)
        var switched = false
        if canBeginSwitch, switchGateOpen(frames: n), let p = incoming.pop() {
            beginSwitch(to: p)
            switched = true
        }
        routeEvents(before: sampleTime + Int64(n))
        if let session { followSession(session) }
        if switched && session != nil { noteSwitchBeat() }
        renderCurrent(frames: n, input: input, output: output)
        if session != nil { noteClockBeats(frames: n) }
        if let session { proposeTempo(session) }
        tempoBits.store(current.tempo.bitPattern, ordering: .relaxed)
        tempoSourceRaw.store(current.tempoSource?.rawValue ?? -1, ordering: .relaxed)
        talkOn.store(current.talkIsOn, ordering: .relaxed)
        for k in 0..<Self.maxTails where tails[k].active { renderTail(k, frames: n, input: input, output: output) }
        if fadeOutRequested.load(ordering: .relaxed) { applyStopFade(frames: n, output: output) }
        sampleTime += Int64(n)
    }

    /// The playing rack takes the session's beat grid, and its tempo while a peer shares it.
    /// Thread: render.
    @inline(__always)
    private func followSession(_ session: any TempoSession) {
        sessionState = session.read(quantum: current.beatsPerBar)
        current.followSession(tempo: sessionState.shared ? sessionState.tempo : nil, beat: sessionState.beat)
    }

    /// What this box says goes to the session: a running MIDI clock's tempo; a new tap
    /// tempo (taps, the remote's tempo); while no peer shares it, the rack's own tempo (so
    /// the session mirrors the rack until a band joins). Thread: render.
    @inline(__always)
    private func proposeTempo(_ session: any TempoSession) {
        let sources = current.tempoSources
        var proposal = 0.0
        if sources.clock > 0 {
            proposal = sources.clock
        } else if !sessionState.shared {
            proposal = current.tempo
        } else if sources.tap > 0 && sources.tap != proposedTap {
            proposal = sources.tap
        }
        proposedTap = sources.tap
        if proposal > 0 && abs(proposal - sessionState.tempo) > 1e-3 { session.propose(tempo: proposal) }
    }

    /// The playing rack into `output`, fading in after a switch; `output`'s channels it
    /// does not play are cleared. Thread: render.
    @inline(__always)
    private func renderCurrent(frames n: Int, input: AudioBus?, output: AudioBus) {
        renderEngine(current, frames: n, input: input, inputFadeStart: nil)
        let out = current.plan.hostOutput
        let shared = min(out.channelCount, output.channelCount)
        for c in shared..<output.channelCount { output[c].update(repeating: 0, count: n) }
        if fadeInPosition >= crossfadeFrames {
            for c in 0..<shared { output[c].update(from: out[c], count: n) }
        } else {
            let total = Float(crossfadeFrames)
            for c in 0..<shared {
                let dst = output[c]
                let src = out[c]
                for i in 0..<n { dst[i] = src[i] * min(Float(fadeInPosition + i) / total, 1) }
            }
            fadeInPosition += n
        }
    }

    /// Tail `k`: its input fading out over the crossfade, then silence; its output summed
    /// into `output`; handed back to the control thread once quiet, too old, or faded out
    /// (forced). Thread: render.
    @inline(__always)
    private func renderTail(_ k: Int, frames n: Int, input: AudioBus?, output: AudioBus) {
        var t = tails[k]
        let engine = Unmanaged<RenderEngine>.fromOpaque(t.pointer).takeUnretainedValue()
        renderEngine(engine, frames: n, input: input, inputFadeStart: t.age)
        let tailOut = engine.plan.hostOutput
        var peak: Float = 0
        let tailChannels = min(tailOut.channelCount, output.channelCount)
        for c in 0..<tailChannels {
            let dst = output[c]
            let src = tailOut[c]
            var g = t.gain
            for i in 0..<n {
                if t.forced { g = max(0, g - forcedFadeStep) }
                let v = src[i] * g
                dst[i] += v
                peak = max(peak, abs(v))
            }
            if c == tailChannels - 1 { t.gain = g }
        }
        t.age += n
        t.quiet = peak < Self.silenceThreshold && t.age > crossfadeFrames ? t.quiet + n : 0
        if (t.quiet >= quietFramesNeeded || t.age >= tailLimitFrames || (t.forced && t.gain == 0)) && retired.push(t.pointer) {
            tails[k].active = false
            tailsEnded.add(1, ordering: .relaxed)
        } else {
            tails[k] = t
        }
    }

    /// The stop fade (`requestFadeOut`) applied to `output`; `isFadedOut` once at 0.
    /// Thread: render.
    @inline(__always)
    private func applyStopFade(frames n: Int, output: AudioBus) {
        var g = fadeGain
        for c in 0..<output.channelCount {
            g = fadeGain
            let dst = output[c]
            for i in 0..<n {
                g = max(0, g - fadeStep)
                dst[i] *= g
            }
        }
        fadeGain = g
        if g == 0 { fadedOut.store(true, ordering: .releasing) }
    }

    private func beginSwitch(to pointer: UnsafeMutableRawPointer) {
        current.releaseAllNotes()
        // Only the rack just left rings at full level; older tails fade out over 10 ms.
        var free = -1
        var oldest = 0
        for k in 0..<Self.maxTails {
            if tails[k].active {
                tails[k].forced = true
                if tails[k].age > tails[oldest].age || !tails[oldest].active { oldest = k }
            } else if free < 0 {
                free = k
            }
        }
        if free < 0 {
            // Every slot taken (switches faster than a 10 ms fade): drop the oldest now
            // (`canBeginSwitch` made sure the return queue has room).
            _ = retired.push(tails[oldest].pointer)
            tailsEnded.add(1, ordering: .relaxed)
            free = oldest
        }
        tails[free] = Tail(active: true, pointer: currentPointer, start: currentStart, age: 0, quiet: 0, gain: 1, forced: false)
        let previous = current
        current = Unmanaged<RenderEngine>.fromOpaque(pointer).takeUnretainedValue()
        current.continueClock(from: previous)
        currentPointer = pointer
        currentStart = sampleTime
        fadeInPosition = 0
        switches.add(1, ordering: .relaxed)
    }

    /// A switch needs a free tail slot, or room in the return queue for the oldest tail.
    /// Otherwise it waits in `incoming` (the control thread is not collecting yet): a rack
    /// is never leaked nor released here. Thread: render.
    private var canBeginSwitch: Bool {
        for k in 0..<Self.maxTails where !tails[k].active { return true }
        return retired.approximateCount < retired.capacity
    }

    /// Hands the events due in this block to the rack their generation names, in the
    /// rack's own time base.
    @inline(__always)
    private func routeEvents(before blockEnd: Int64) {
        route(events, before: blockEnd, applied: eventsApplied, stale: eventsStale)
        route(controlEvents, before: blockEnd, applied: controlEventsApplied, stale: controlEventsStale)
    }

    /// An event is popped only once the rack has taken it: what does not fit in this block
    /// stays first in its queue for the next.
    @inline(__always)
    private func route(
        _ queue: SPSCQueue<EngineEvent>, before blockEnd: Int64, applied appliedCount: borrowing Atomic<Int>,
        stale staleCount: borrowing Atomic<Int>
    ) {
        let blockStart = sampleTime
        var applied = 0
        var late = 0
        var stale = 0
        while let e = queue.peek(), e.sampleTime < blockEnd {
            if e.generation == 0 || e.generation == current.plan.generation {
                var local = e
                local.sampleTime = e.sampleTime == EngineEvent.now ? EngineEvent.now : e.sampleTime - currentStart
                guard current.inject(local) else {
                    eventsCarried.add(1, ordering: .relaxed)
                    break
                }
                applied += 1
                if e.sampleTime != EngineEvent.now && e.sampleTime < blockStart { late += 1 }
            } else {
                stale += 1
            }
            _ = queue.pop()
        }
        if applied > 0 { appliedCount.add(applied, ordering: .relaxed) }
        if late > 0 { eventsLate.add(late, ordering: .relaxed) }
        if stale > 0 { staleCount.add(stale, ordering: .relaxed) }
    }

    @inline(__always)
    private func renderEngine(_ engine: RenderEngine, frames n: Int, input: AudioBus?, inputFadeStart: Int?) {
        let host = engine.plan.hostInput
        for c in 0..<host.channelCount {
            let dst = host[c]
            guard let input, c < input.channelCount else {
                dst.update(repeating: 0, count: n)
                continue
            }
            if let start = inputFadeStart {
                if start >= crossfadeFrames {
                    dst.update(repeating: 0, count: n)
                } else {
                    let src = input[c]
                    let total = Float(crossfadeFrames)
                    for i in 0..<n { dst[i] = src[i] * max(0, 1 - Float(start + i) / total) }
                }
            } else {
                dst.update(from: input[c], count: n)
            }
        }
        engine.render(frameCount: n)
    }
}
