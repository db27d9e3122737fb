import Synchronization

/// Engines alive in the process (made on the control thread, released there): a leak or a
/// double release shows in this count. Thread: any.
public let renderEnginesAlive = Atomic<Int>(0)

/// Renders a `RenderPlan` block by block: applies the events injected for the block at
/// their frames, smooths parameters, runs each step, and leaves the result in the plan's
/// host output.
///
/// Thread: `render` on the render thread only; `init` on the control thread. The engine has
/// no queue of its own: whoever drives it injects each block's events (`inject`) on the
/// render thread before `render` (live, a `RackPlayer` from its queues; tests and
/// benchmarks, an `EngineDriver`).
public final class RenderEngine: @unchecked Sendable {
    public let plan: RenderPlan
    /// Frames rendered since start: the absolute time of the next block's first frame.
    public private(set) var sampleTime: Int64 = 0
    /// The rack's tempo in BPM: the first of `tempoSources` that gives one.
    public private(set) var tempo: Double
    /// What each tempo source last gave (`.tempo` events; the song's from the rack; the
    /// first loop's from the units that report one). Thread: render.
    public private(set) var tempoSources: TempoSources
    /// Which source decides `tempo` (nil: none; 120 BPM); kept with `tempo`. Thread: render.
    public private(set) var tempoSource: TempoSource?
    /// Beats a frame at `tempo`, kept with it (not worked out per unit per block). Thread: render.
    private(set) var beatsPerFrame: Double
    /// Beats of the rack's grid at the next block's first frame (0 at the rack's first frame).
    public private(set) var beatPosition: Double = 0
    /// Units that can give a tempo (loopers), read after each block. Found once, on the control thread.
    let tempoReporters: [any UnitTempoReporter]
    /// Beats in the rack's bar: its first looper's `beatsPerBar`, else 4. A shared session's
    /// phase is kept to it (Link's quantum). Found once, on the control thread.
    public let beatsPerBar: Double
    /// The rack's `midi.clock` (read once: nothing of the rack description on the render thread).
    let followsClock: Bool
    /// The setlist song's sections on the bar clock (nil: the rack has none). Made with the
    /// engine; `render` moves it. Thread: render.
    public let songClock: SongClock?
    /// The song clock made a jump, held recall or transpose in the last block
    /// (`SongClock.madeSomething`). Thread: render.
    var songClockMadeSomething = false
    /// `songClock` for the render path, with no reference counting (`songClock` keeps it).
    private let songClockRef: Unmanaged<SongClock>?
    /// Talk's one state and its targets (`TalkSwitch`). Thread: render (`talkIsOn`: any).
    let talk: TalkSwitch
    /// Whether Talk is on. Thread: any.
    public var talkIsOn: Bool { talk.isOn }
    /// The song's beats in the block being rendered (the clock's list). Thread: render.
    var songBeats = UnsafeBufferPointer<SongBeat>(start: nil, count: 0)
    /// The song's cue starts in the block being rendered (the clock's list). Thread: render.
    var songCues = UnsafeBufferPointer<SongCue>(start: nil, count: 0)
    /// What the output safety stage fixed so far.
    public var safety: SafetyCounters { safetyCounters.pointee }

    let safetyCounters: UnsafeMutablePointer<SafetyCounters>
    /// The next block's events, as its driver adds them (a rack player routing events from
    /// its queues, notes-off at a switch); consumed by the next `render`. As large as the
    /// per-block list.
    let injected: UnsafeMutablePointer<EngineEvent>
    let injectedCapacity: Int
    var injectedCount = 0
    let blockEvents: UnsafeMutablePointer<EngineEvent>
    let blockEventCapacity: Int
    let unitEvents: UnsafeMutablePointer<UnitEvent>
    let unitEventCapacity: Int
    /// The block's events grouped by unit (built once a block, after every event is in).
    let unitEventLists: UnitEventLists
    /// `unit.bypass`: crossfades of each unit's output toward its input.
    let bypass: UnitBypass
    /// Units not rendered because nobody hears them or they have nothing to say; the
    /// silence flags (EngineSilence).
    let silence: EngineSilence
    /// The inputs of a unit heard again, faded in (30 ms).
    let resumeFade: ResumeFade
    /// A panic's reset of the units that cannot be reset here (LV2), done by the control thread.
    let parking: PanicParking
    /// Channel pointers of the host buses at an offset within the block (input, then output).
    let hostPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// `plan.units` and `plan.parameters` as references the render thread reads without
    /// retaining them (the plan keeps them alive for the engine's life). Thread: render.
    let unitRefs: UnsafeMutablePointer<UnitRef>
    /// The silence system's signal side, read without a retain. Thread: render.
    unowned(unsafe) let signal: SignalLevels
    /// Units with a transport (players, loopers) and the command that stops each: sent
    /// with `releaseAllNotes` when the rack is left. Found once, on the control thread.
    let transportStops: [(unit: Int, command: Int)]
    /// The MIDI receivers that say which channels hold notes (`UnitHeldNotes`), with their
    /// unit indices, and the others (told on all 16 channels): for `releaseAllNotes`.
    /// Found once, on the control thread.
    let noteHolders: [any UnitHeldNotes]
    let noteHolderUnits: [Int]
    let otherMIDIReceivers: [Int]
    /// Per-step duration of the last instrumented blocks, in nanoseconds (benchmarks).
    public let stepNanoseconds: UnsafeMutablePointer<UInt64>
    public var measuresSteps = false

    public init(plan: RenderPlan, eventsPerBlock: Int = 1024) {
        self.plan = plan
        tempoSources = TempoSources(song: plan.rack.songTempo)
        tempo = tempoSources.tempo
        tempoSource = tempoSources.winner
        beatsPerFrame = tempo / (60 * plan.sampleRate)
        tempoReporters = plan.units.compactMap { $0 as? any UnitTempoReporter }
        beatsPerBar = Double(tempoReporters.first?.beatsPerBar ?? 4)
        followsClock = plan.rack.midi.clock
        safetyCounters = .allocate(capacity: 1)
        safetyCounters.initialize(to: SafetyCounters())
        let clock = SongClock(plan: plan)
        songClock = clock
        songClockRef = clock.map { Unmanaged.passUnretained($0) }
        // Room for a section's actions and the MIDI-file backing beside a full block of
        // injected events, and for two Talk changes.
        talk = TalkSwitch(targets: Talk.targets(in: plan))
        blockEventCapacity = eventsPerBlock + (clock?.eventHeadroom ?? 0) + 2 * talk.count
        blockEvents = .allocate(capacity: blockEventCapacity)
        injectedCapacity = eventsPerBlock
        injected = .allocate(capacity: eventsPerBlock)
        unitEventCapacity = eventsPerBlock
        unitEvents = .allocate(capacity: eventsPerBlock)
        unitEventLists = UnitEventLists(unitCount: plan.units.count, eventCapacity: blockEventCapacity)
        bypass = UnitBypass(unitCount: plan.units.count, sampleRate: plan.sampleRate, maxFrames: plan.maxFrames)
        let silence = EngineSilence(plan: plan)
        self.silence = silence
        signal = silence.signal
        resumeFade = ResumeFade(plan: plan)
        parking = PanicParking(plan: plan)
        hostPointers = .allocate(capacity: plan.hostInput.channelCount + plan.hostOutput.channelCount)
        hostPointers.initialize(repeating: plan.hostOutput[0], count: plan.hostInput.channelCount + plan.hostOutput.channelCount)
        transportStops = plan.units.indices.compactMap { u in
            (plan.units[u] as? any UnitTransport).map { (u, $0.stopCommand) }
        }
        let holders = plan.midiReceivers.compactMap { r in (plan.units[r] as? any UnitHeldNotes).map { (r, $0) } }
        noteHolders = holders.map(\.1)
        noteHolderUnits = holders.map(\.0)
        otherMIDIReceivers = plan.midiReceivers.filter { r in !holders.contains { $0.0 == r } }
        stepNanoseconds = .allocate(capacity: max(plan.steps.count, 1))
        stepNanoseconds.initialize(repeating: 0, count: max(plan.steps.count, 1))
        unitRefs = .allocate(capacity: max(plan.units.count, 1))
        for u in plan.units.indices { (unitRefs + u).initialize(to: UnitRef(unit: plan.units[u], bank: plan.parameters[u])) }
        renderEnginesAlive.add(1, ordering: .relaxed)
    }

    deinit {
        renderEnginesAlive.subtract(1, ordering: .relaxed)
        safetyCounters.deallocate()
        blockEvents.deallocate()
        injected.deallocate()
        unitEvents.deallocate()
        stepNanoseconds.deallocate()
        unitRefs.deinitialize(count: plan.units.count)
        unitRefs.deallocate()
        hostPointers.deallocate()
    }

    /// Moves the song clock over the block: its events joined to the block's (sorted), its
    /// beats and cues for the units; returns the new event count. Thread: render.
    @inline(__always)
    private func advance(_ songClock: SongClock, blockStart: Int64, frames: Int, count: Int) -> Int {
        let n = songClock.advance(
            blockStart: blockStart, frames: frames, tempo: tempo, events: blockEvents, count: count, capacity: blockEventCapacity)
        if n > count { sortEvents(n) }
        songBeats = UnsafeBufferPointer(start: songClock.beats, count: songClock.beatCount)
        songCues = UnsafeBufferPointer(start: songClock.cues, count: songClock.cueCount)
        songClockMadeSomething = songClock.madeSomething
        return n
    }

    /// Renders `frameCount` ≤ `plan.maxFrames` frames: reads `plan.hostInput`, writes
    /// `plan.hostOutput`. Never allocates, locks or logs. Thread: render.
    public func render(frameCount: Int) {
        precondition(frameCount > 0 && frameCount <= plan.maxFrames, "block larger than the plan was prepared for")
        let blockStart = sampleTime
        let blockEnd = sampleTime + Int64(frameCount)
        var count = gatherEvents()

        // Global events first (they are not per unit).
        for e in 0..<count where blockEvents[e].kind == .tempo {
            if let source = TempoSource(rawValue: blockEvents[e].parameter) {
                tempoSources.set(source, Double(blockEvents[e].value))
                tempoChanged()
            }
        }
        if let songClockRef {
            count = songClockRef._withUnsafeGuaranteedRef { advance($0, blockStart: blockStart, frames: frameCount, count: count) }
        }
        let beforeTalk = count
        count = talk.apply(events: blockEvents, count: count, capacity: blockEventCapacity) { u, p in
            p == ParameterAddress.bypassIndex ? bypass.targetValue(u) : unitRefs[u].bank { $0.targetValue(p) }
        }
        if count > beforeTalk { sortEvents(count) }
        parking.takeBack()
        for e in 0..<count where blockEvents[e].kind == .resetAll { panic() }
        unitEventLists.build(blockEvents, count: count)
        guard silence.hearing.active else {
            renderSegment(offset: 0, frames: frameCount, blockStart: blockStart)
            sampleTime = blockEnd
            endBlock(frames: frameCount)
            return
        }
        // Cut where units nobody hears stop or start (EngineSilence): the same frames are
        // skipped whatever the block size.
        var t = blockStart
        while t < blockEnd {
            silence.evaluateHearing(
                at: t, pendingFrom: t == blockStart ? .min : t, events: blockEvents, count: count, plan: plan, bypass: bypass)
            let end = silence.hearing.segmentEnd(from: t, blockEnd: blockEnd, events: blockEvents, count: count)
            renderSegment(offset: Int(t - blockStart), frames: Int(end - t), blockStart: blockStart)
            t = end
        }
        sampleTime = blockEnd
        endBlock(frames: frameCount)
    }

    /// A panic (`.resetAll`, the remote's panic button): every unit whose reset is
    /// real-time safe is reset now; the others (LV2) are parked, silent, until the control
    /// thread has reset them (`resetParkedUnits`). Thread: render.
    private func panic() {
        for u in 0..<plan.units.count where !parking.isControlReset[u] { plan.units[u].reset() }
        parking.park()
    }

    /// Resets the units a panic parked, if one did (LV2 plugins: `deactivate`/`activate`,
    /// never on the audio thread); the render thread takes them back at its next block.
    /// True when there was something to do. Thread: control (the preset switcher's loop).
    @discardableResult
    public func resetParkedUnits() -> Bool { parking.resetParkedUnits(plan) }

    /// Whether a panic has parked units that wait for the control thread. Thread: render,
    /// or control when idle.
    public var hasParkedUnits: Bool { parking.parked }

    /// The beat grid moves on at this block's tempo; a loop that now gives a tempo (or no
    /// longer does) counts from the next block. Thread: render.
    @inline(__always)
    private func endBlock(frames: Int) {
        beatPosition += Double(frames) * beatsPerFrame
        guard !tempoReporters.isEmpty else { return }
        var loop = 0.0
        for r in tempoReporters where loop == 0 { loop = r.reportedTempo }
        if loop != tempoSources.loop {
            tempoSources.set(.loop, loop)
            tempoChanged()
        }
    }

    /// `tempo`, its source and the beats a frame, after `tempoSources` changed. Thread: render.
    @inline(__always)
    private func tempoChanged() {
        tempo = tempoSources.tempo
        tempoSource = tempoSources.winner
        beatsPerFrame = tempo / (60 * plan.sampleRate)
    }

    /// Follows a shared session (`TempoSession`) at the block about to render: its tempo
    /// as the `.link` source while a peer shares it (`nil` withdraws it), and its beat as
    /// the rack's beat grid. Thread: render, before `render`.
    public func followSession(tempo sessionTempo: Double?, beat: Double) {
        let link = TempoSources.valid(sessionTempo ?? 0)
        if link != tempoSources.link {
            tempoSources.set(.link, link)
            tempoChanged()
        }
        beatPosition = beat
    }

    /// Takes over the MIDI clock's tempo of the rack played before a switch (the clock
    /// runs on; taps, song and loop belong to the rack). Thread: render.
    public func continueClock(from previous: RenderEngine) {
        guard followsClock else { return }
        tempoSources.set(.clock, previous.tempoSources.clock)
        tempoChanged()
    }

    /// Adds an event for the next block (times before it apply at its first frame); false
    /// when the block's list is full (the caller keeps the event for the next block).
    /// Thread: render (the thread that calls `render`).
    @inline(__always)
    @discardableResult
    public func inject(_ event: EngineEvent) -> Bool {
        guard injectedCount < injectedCapacity else { return false }
        injected[injectedCount] = event
        injectedCount += 1
        return true
    }

    /// Sends sustain-off, sostenuto-off and all-notes-off to every unit that plays MIDI, so
    /// held notes end with their own release (all-notes-off alone leaves the notes a pedal
    /// holds), and stops players, loopers and the song's MIDI file (a 10 ms fade). A unit that tracks its held
    /// notes (`UnitHeldNotes`: the synth) gets them only on the channels with a key or a
    /// pedal down (sostenuto-off only where that pedal is), none when nothing is held; the
    /// others on all 16. Returns the messages sent. Thread: render.
    @discardableResult
    public func releaseAllNotes() -> Int {
        songClock?.backing?.stop()  // the song's MIDI file too: the tail rings out without it
        for t in transportStops { inject(.midi(UnitCommand.message(t.command, pressed: true), toUnit: t.unit)) }
        var sent = 0
        for k in 0..<noteHolders.count {
            let holder = noteHolders[k]
            sent += releaseNotes(unit: noteHolderUnits[k], channels: holder.channelsHoldingNotes, sostenuto: holder.channelsWithSostenutoDown)
        }
        for r in otherMIDIReceivers { sent += releaseNotes(unit: r, channels: 0xFFFF, sostenuto: 0xFFFF) }
        return sent
    }

    /// Sustain-off and all-notes-off to `unit` on the channels set in `channels`, and
    /// sostenuto-off on those set in `sostenuto`; returns the messages sent. Thread: render.
    private func releaseNotes(unit r: Int, channels: UInt16, sostenuto: UInt16) -> Int {
        var sent = 0
        for channel in 0..<16 where channels & (1 << UInt16(channel)) != 0 {
            inject(.midi(.controlChange(channel: channel, controller: 64, value: 0), toUnit: r))
            if sostenuto & (1 << UInt16(channel)) != 0 {
                inject(.midi(.controlChange(channel: channel, controller: 66, value: 0), toUnit: r))
                sent += 1
            }
            inject(.midi(.controlChange(channel: channel, controller: 123, value: 0), toUnit: r))
            sent += 2
        }
        return sent
    }

    /// Moves the injected events into `blockEvents` in time order; returns how many.
    /// Thread: render.
    @inline(__always)
    private func gatherEvents() -> Int {
        var count = 0
        var k = 0
        while k < injectedCount {
            blockEvents[count] = injected[k]
            count += 1
            k += 1
        }
        injectedCount = 0
        sortEvents(count)
        return count
    }

    /// Insertion sort of `blockEvents[0..<count]` by time: keeps each source's own order
    /// (stable), linear when sorted. Thread: render.
    @inline(__always)
    private func sortEvents(_ count: Int) {
        var i = 1
        while i < count {
            let e = blockEvents[i]
            var j = i
            while j > 0 && blockEvents[j - 1].sampleTime > e.sampleTime {
                blockEvents[j] = blockEvents[j - 1]
                j -= 1
            }
            blockEvents[j] = e
            i += 1
        }
    }

    /// The bypass value (0…1) unit `u` is heading to. Thread: render (or control when idle).
    public func bypassTarget(unit u: Int) -> Float { bypass.targetValue(u) }

    /// Renders one block of silence (`plan.maxFrames` frames) and clears every trace of it
    /// (`reset`: levels, delay lines, tails, sample time), then lets the next thread that
    /// renders take over the render side of its units' queues. The engine's
    /// memory is warm for its first block on the render thread, as `LiveAudio`'s warm-up
    /// block makes it at start: `PresetSwitcher` calls this before `RackPlayer.submit`
    /// (which hands the engine over through a queue: everything here happens before the
    /// render thread's first block). LV2 units are reset here, not on the render thread
    /// (their reset deactivates and activates the plugin; a panic on the render thread
    /// leaves them to `resetParkedUnits`). Thread: control, while no other
    /// thread renders the engine.
    public func warmUp() {
        let host = plan.hostInput
        for c in 0..<host.channelCount { host[c].update(repeating: 0, count: plan.maxFrames) }
        render(frameCount: plan.maxFrames)
        reset()
        handOverRenderThread()
        warmedUp = true
    }

    /// Whether `warmUp` ran. Thread: any while the engine is idle.
    public private(set) var warmedUp = false

    /// The next thread to render takes over the render side of every unit's queues
    /// (`RackUnit.handOverRenderThread`). Thread: control, while no thread renders the engine.
    public func handOverRenderThread() {
        for unit in plan.units { unit.handOverRenderThread() }
    }

    /// Starts again from time 0 with every unit's state cleared. Thread: control while not
    /// rendering.
    public func reset() {
        plan.resetUnits()
        parking.clear()
        silence.wakeAll(at: 0)
        sampleTime = 0
        tempoSources = TempoSources(song: plan.rack.songTempo)
        tempoChanged()
        beatPosition = 0
        songClock?.reset()
        songClockMadeSomething = false
        safetyCounters.pointee = SafetyCounters()
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// CLOCK_MONOTONIC in nanoseconds. Thread: any (no allocation).
@inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}
