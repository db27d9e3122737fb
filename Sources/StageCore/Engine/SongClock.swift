import Synchronization

/// Which way a section jump goes (`EngineEvent.section`): on to the next section, or the
/// current one again (a vamp). Thread: any (a value).
public enum SectionJump: Int32, Sendable, BitwiseCopyable {
    case next = 1
    case repeatCurrent = 2
}

/// One beat of the song's bar clock, for the click (`RenderContext.songBeats`). Thread:
/// any (a value).
@frozen
public struct SongBeat: Sendable, BitwiseCopyable {
    /// The absolute engine frame it starts on.
    public var frame: Int64
    /// Beats from bar 1 beat 1 (negative in the count-in).
    public var beat: Int32
    public var isDownbeat: Bool
    public var isCountIn: Bool
}

/// Plays a setlist song's sections (`SongTimeline`) on the render thread: the song's bar
/// clock follows the rack's tempo (`RenderEngine.tempo`, the documented precedence: MIDI
/// clock, taps, the song's tempo, the first loop) from bar 1 beat 1 at the rack's first
/// frame; each section's actions (snapshot recalls, unit commands, Talk) are engine events
/// made once on the control thread and stamped with the frame of the section's start.
///
/// The clock is a line through an anchor (a frame and the song beat there) at the current
/// tempo: the frame of beat b is the anchor's frame + ⌈(b − anchor beat) × frames a beat⌉,
/// so a section lands on the same frame whatever the block size. A tempo change moves the
/// anchor to the block's first frame; a jump (`EngineEvent.section`, from a MIDI button,
/// the page or OSC) waits for the next bar line after its frame and moves the anchor there,
/// to the start of the section it goes to. It also lists the block's beats (`beats`, for
/// the click) and the spoken cues that start in it (`cues`: when, `SongClock+Cues`).
///
/// Thread: `init` on the control thread; `advance` and `reset` on the render thread (or
/// the control thread while the engine is idle); the published section (`published`) any.
public final class SongClock: @unchecked Sendable {
    struct Section {
        var startBeat: Double
        /// Placed by time: its frame in the song's track (`SongSection.seconds`); −1 by bar.
        var trackFrame: Double
        var firstAction: Int
        var actionCount: Int
    }

    let sections: UnsafeMutablePointer<Section>
    public let sectionCount: Int
    /// Every section's actions, back to back, with no frame yet.
    let actions: UnsafeMutablePointer<EngineEvent>
    let actionTotal: Int
    /// The most events one section fires (the headroom the engine keeps for it).
    public let largestSection: Int
    let beatsPerBar: Double
    let sampleRate: Double
    /// Song beat at the rack's first frame: minus the count-in's beats (0 without one).
    let firstBeat: Double
    /// The block's beats (`SongBeat`), made by `advance`. Thread: render writes, the
    /// block's units read.
    public let beats: UnsafeMutablePointer<SongBeat>
    public private(set) var beatCount = 0
    let beatCapacity: Int
    /// The next song beat (whole) not yet listed.
    var nextBeat: Double
    /// The sections' names, in order (for `--status` and the meters). Thread: any (immutable).
    public let names: [String]
    /// The song's MIDI-file backing, played on this clock's line (nil: none).
    public let backing: SongMIDIPlayer?
    /// The song's transpose while it plays (nil: it neither has one nor maps the actions).
    public let transposer: SongTranspose?
    /// The rack's snapshots, recalled on a bar line (a band's boxes in step; nil: none).
    public let heldSnapshots: HeldSnapshots?
    /// The player of the song's track: the clock of sections placed by time (nil: none).
    let track: (any UnitTransport)?
    /// The track's position at the block's first frame (frames), whether it moved since
    /// the last block (it plays), and its position then. Render thread.
    var trackPosition = 0.0
    var trackMoving = false
    var lastTrackPosition = -1.0

    // Render-thread state.
    var anchorFrame: Int64 = 0
    var anchorBeat: Double = 0
    var tempo: Double = 0
    var framesPerBeat: Double = 1
    /// Index of the section playing (−1: before the first).
    public private(set) var current = -1
    /// A jump waiting for its bar line: which way, and the song beat of that bar line.
    var armed: SectionJump?
    var armedBeat: Double = 0
    /// Sections that waited a block because the engine's list was full (render thread counts).
    public private(set) var sectionsDeferred = 0
    /// The frame of the jump taken in the last block (−1: none) and the line before it,
    /// for the MIDI-file backing (`SongMIDIPlayer`). Render thread.
    var jumpedAt: Int64 = -1
    var lineBeforeJump: (frame: Int64, beat: Double) = (0, 0)
    /// The frame a section started on in the last block (−1: none), for `SongTranspose`.
    var sectionStartedAt: Int64 = -1
    /// The block's spoken cues (`SongCue`, in frame order), made by `advance`
    /// (`SongClock+Cues`). Thread: render writes, the block's units read.
    public let cues: UnsafeMutablePointer<SongCue>
    public internal(set) var cueCount = 0
    let cueCapacity: Int
    /// The section whose cue was spoken last (−1: none): a jump to it before it starts
    /// does not speak it twice. Render thread.
    var lastCued = -1
    /// The armed jump speaks its cue on its bar line (armed under a beat before it).
    var cueOnLanding = false
    /// The frame the armed jump was armed at: cues of the way it leaves are not spoken from
    /// there on. Render thread.
    var armedFrame: Int64 = 0
    /// The block's frames up to here have had their cues by time listed. Render thread.
    var timeCuesFrom: Int64 = 0

    /// The section playing and the next (−1: none), packed for one relaxed atomic:
    /// (current + 1) << 16 | (next + 1). Render thread stores, any thread reads.
    let publishedBits = Atomic<Int>(0)
    /// The last jump armed, for a sync leader to tell (`armedJump`): how many so far << 34
    /// | its way << 32 | the song beat of its bar line (32 bits). Render thread stores, any
    /// thread reads.
    let armedBits = Atomic<Int>(0)
    var armCount = 0
    /// No sections, count-in, click or MIDI-file backing: the clock only keeps the line for a
    /// live transpose or a held snapshot recall (a song under sync), and lists no beats.
    let isBare: Bool
    /// Nothing is asked, armed or made on a bare clock (no jump, recall or transpose waits
    /// for its bar line): a block with no events only follows the tempo. Render thread.
    var settled = true
    /// A section jump, held recall or transpose was made in the last block (see `jumpedAt`,
    /// `HeldSnapshots.recalledAt`, `SongTranspose.appliedAt`). Render thread.
    public private(set) var madeSomething = false

    /// Builds the clock for `plan`'s song (nil when it has no sections): each action
    /// resolved against the plan (an action whose unit is not in it, one nobody hears, is
    /// left out). Thread: control.
    public init?(plan: RenderPlan) {
        let timeline = plan.rack.timeline
        let transposer = SongTranspose(plan: plan)
        guard !timeline.sections.isEmpty || timeline.countInBars > 0 || plan.unitTypes.contains("click") || timeline.backing != nil
            || transposer != nil
        else { return nil }
        self.transposer = transposer
        heldSnapshots = HeldSnapshots(plan: plan)
        backing = timeline.backing.map { SongMIDIPlayer($0, plan: plan, beatUnit: timeline.beatUnit) }
        beatsPerBar = Double(timeline.beatsPerBar)
        firstBeat = -Double(timeline.countInBars * timeline.beatsPerBar)
        anchorBeat = firstBeat
        nextBeat = firstBeat
        isBare = timeline.sections.isEmpty && timeline.countInBars == 0 && !plan.unitTypes.contains("click") && backing == nil
        // At most 400 BPM: a beat every 0.15 s; one more for a jump inside the block. None
        // on a bare clock: only the click hears the beats.
        beatCapacity = isBare ? 0 : Int(Double(plan.maxFrames) * 400 / (60 * plan.sampleRate)) + 3
        beats = .allocate(capacity: max(beatCapacity, 1))
        // A cue a beat at most, the sections placed by time, and a jump's.
        cueCapacity = beatCapacity + timeline.sections.count + 2
        cues = .allocate(capacity: cueCapacity)
        names = timeline.sections.map(\.name)
        sampleRate = plan.sampleRate
        track = timeline.trackPlayer.flatMap { plan.unitIndex($0) }.flatMap { plan.units[$0] as? any UnitTransport }
        var events: [EngineEvent] = []
        var list: [Section] = []
        let talk = Talk.targets(in: plan)
        for section in timeline.sections {
            let first = events.count
            for action in section.actions { events += Self.events(for: action.kind, in: plan, talk: talk) }
            list.append(
                Section(
                    startBeat: Double(section.startBeat(beatsPerBar: timeline.beatsPerBar)),
                    trackFrame: section.seconds.map { $0 * plan.sampleRate } ?? -1, firstAction: first,
                    actionCount: events.count - first))
        }
        sectionCount = list.count
        sections = .allocate(capacity: max(list.count, 1))
        sections.initialize(from: list, count: list.count)
        actionTotal = events.count
        actions = .allocate(capacity: max(events.count, 1))
        actions.initialize(from: events, count: events.count)
        largestSection = list.map(\.actionCount).max() ?? 0
        publish()
    }

    /// Room the engine keeps in its block list for the clock: a section's actions and the
    /// backing's messages. Thread: any (immutable).
    public var eventHeadroom: Int {
        largestSection + (backing?.headroom ?? 0) + (transposer?.headroom ?? 0) + (heldSnapshots?.largest ?? 0)
    }

    deinit {
        sections.deallocate()
        actions.deallocate()
        beats.deallocate()
        cues.deallocate()
    }

    /// The engine events of one action in `plan`. Thread: control (allocates).
    static func events(for kind: SectionAction.Kind, in plan: RenderPlan, talk: [TalkTarget]) -> [EngineEvent] {
        switch kind {
        case .snapshot(let name):
            guard let snapshot = plan.rack.snapshots.first(where: { $0.name == name }) else { return [] }
            let ramp = Int32(snapshot.morphSeconds * plan.sampleRate)
            return snapshot.values.compactMap { target, value in
                guard let address = plan.address(of: target) else { return nil }
                var e = EngineEvent.setParameter(address, value, at: 0)
                if e.kind == .parameter { e.rampFrames = ramp }
                return e
            }
        case .command(let unitID, let command):
            guard let u = plan.unitIndex(unitID), let index = plan.rack.unit(unitID)?.commands.firstIndex(of: command) else { return [] }
            return [
                .midi(UnitCommand.message(index, pressed: true), toUnit: u, at: 0),
                .midi(UnitCommand.message(index, pressed: false), toUnit: u, at: 0),
            ]
        case .talk(let on):
            // The engine's one Talk state turns the targets (`TalkSwitch`).
            return talk.isEmpty ? [] : [.talk(on ? .on : .off, at: 0)]
        }
    }

    /// The song beat at `frame` on the current line. Thread: render.
    @inline(__always)
    func beat(at frame: Int64) -> Double { anchorBeat + Double(frame - anchorFrame) / framesPerBeat }

    /// The first frame at or after song beat `b`. Thread: render.
    @inline(__always)
    func frame(ofBeat b: Double) -> Int64 { anchorFrame + Int64(((b - anchorBeat) * framesPerBeat).rounded(.up)) }

    /// Moves the clock over the block `blockStart ..< blockStart + frames` at `tempo`: takes
    /// the jumps among `events[0..<count]`, and appends the actions of every section that
    /// starts in the block (at its frame) while they fit below `capacity`; returns the new
    /// count. The block is played in frame order, up to each jump's frame and then from it
    /// (so a cue listed before a jump counts for it as at any block size). A bare clock
    /// with nothing asked only follows the tempo. Allocates nothing. Thread: render.
    public func advance(
        blockStart: Int64, frames: Int, tempo newTempo: Double, events: UnsafeMutablePointer<EngineEvent>, count: Int,
        capacity: Int
    ) -> Int {
        follow(tempo: newTempo, at: blockStart)
        if isBare && settled && count == 0 { return count }
        let n = advanceAll(blockStart: blockStart, frames: frames, events: events, count: count, capacity: capacity)
        madeSomething = jumpedAt >= 0 || (heldSnapshots?.recalledAt ?? -1) >= 0 || (transposer?.appliedAt ?? -1) >= 0
        settled = !madeSomething && armed == nil && (heldSnapshots?.isArmed != true) && (transposer?.isWaiting != true)
        return n
    }

    /// `advance` past the tempo: every step of the block. Thread: render.
    private func advanceAll(
        blockStart: Int64, frames: Int, events: UnsafeMutablePointer<EngineEvent>, count: Int, capacity: Int
    ) -> Int {
        let blockEnd = blockStart + Int64(frames)
        beatCount = 0
        cueCount = 0
        jumpedAt = -1
        sectionStartedAt = -1
        timeCuesFrom = blockStart
        readTrack()
        transposer?.take(events, count: count, blockStart: blockStart, clock: self)
        heldSnapshots?.take(events, count: count, blockStart: blockStart, clock: self)
        var n = count
        for e in 0..<count where events[e].kind == .section {
            guard let jump = SectionJump(rawValue: events[e].parameter) else { continue }
            let at = min(max(events[e].sampleTime, blockStart), blockEnd)
            n = play(until: at, blockStart: blockStart, list: events, count: n, capacity: capacity)
            if events[e].unit == EngineEvent.sectionAtBeat {
                arm(jump, atBar: Double(events[e].value), from: at)
            } else {
                arm(jump, at: at)
            }
            cueJump(armedAt: at, blockStart: blockStart)
        }
        n = play(until: blockEnd, blockStart: blockStart, list: events, count: n, capacity: capacity)
        publish()
        if let heldSnapshots {
            n = heldSnapshots.advance(clock: self, blockStart: blockStart, blockEnd: blockEnd, list: events, count: n, capacity: capacity)
        }
        if let transposer {
            n = transposer.advance(
                sectionStart: sectionStartedAt, blockStart: blockStart, blockEnd: blockEnd, clock: self, list: events, count: n,
                capacity: capacity)
        }
        if let backing { n = backing.advance(clock: self, blockStart: blockStart, blockEnd: blockEnd, list: events, count: n, capacity: capacity) }
        return n
    }

    /// Plays the block from where it stands to frame `limit`: the cues of sections placed
    /// by time, every section start (a jump's at its bar line) with its actions appended to
    /// `list[count...]` below `capacity`, and the beats; returns the new count. Thread: render.
    func play(until limit: Int64, blockStart: Int64, list: UnsafeMutablePointer<EngineEvent>, count: Int, capacity: Int) -> Int {
        listTimeCues(from: timeCuesFrom, until: limit, blockStart: blockStart)
        timeCuesFrom = max(timeCuesFrom, limit)
        var n = count
        while true {
            let natural = naturalFrame(blockStart: blockStart)
            let jumping = armed != nil && frame(ofBeat: armedBeat) <= natural
            guard jumping || natural != .max else { break }
            let at = max(jumping ? frame(ofBeat: armedBeat) : natural, blockStart)
            guard at < limit else { break }
            listBeats(before: at, blockStart: blockStart)
            var target = current + 1
            if jumping, let jump = armed {
                target = jump == .next ? current + 1 : max(current, 0)
                armed = nil
                guard target < sectionCount else { continue }
            }
            let section = sections[target]
            guard n + section.actionCount <= capacity else {
                sectionsDeferred &+= 1
                if jumping { armed = SectionJump(rawValue: target == current ? 2 : 1) }
                break
            }
            if jumping {
                jumped(to: section, at: at)
                if cueOnLanding { addCue(at: at, section: target) }
                cueOnLanding = false
            }
            for k in 0..<section.actionCount {
                var e = actions[section.firstAction + k]
                e.sampleTime = at
                list[n] = e
                n += 1
            }
            current = target
            sectionStartedAt = at
        }
        listBeats(before: limit, blockStart: blockStart)
        return n
    }

    /// A new tempo from the block at `blockStart` on: the line turns there. Thread: render.
    @inline(__always)
    func follow(tempo newTempo: Double, at blockStart: Int64) {
        guard newTempo != tempo else { return }
        if tempo > 0 { anchorBeat = beat(at: blockStart) }
        anchorFrame = blockStart
        tempo = newTempo
        framesPerBeat = 60 * sampleRate / newTempo
    }

    /// A jump to `section` taken at frame `at`: the line moves to the section's start, but
    /// for a section placed by time (the bar clock runs on, as the track does). Thread: render.
    @inline(__always)
    func jumped(to section: Section, at: Int64) {
        jumpedAt = at
        lineBeforeJump = (anchorFrame, anchorBeat)
        guard section.trackFrame < 0 else { return }
        anchorFrame = at
        anchorBeat = section.startBeat
        nextBeat = section.startBeat
    }

    /// The frame the next section starts on by itself (`Int64.max`: none in sight): its bar
    /// line's (maybe past), or, placed by time, where the playing track reaches its time
    /// (the block's start if it is past). Thread: render.
    @inline(__always)
    func naturalFrame(blockStart: Int64) -> Int64 {
        guard current + 1 < sectionCount else { return .max }
        return startFrame(of: current + 1, blockStart: blockStart)
    }

    /// The frame section `k` starts on by itself, as in `naturalFrame`. Thread: render.
    @inline(__always)
    func startFrame(of k: Int, blockStart: Int64) -> Int64 {
        let section = sections[k]
        guard section.trackFrame >= 0 else { return frame(ofBeat: section.startBeat) }
        guard trackMoving else { return .max }
        return blockStart + Int64(max(section.trackFrame - trackPosition, 0).rounded(.up))
    }

    /// The track's position at the block's start, and whether it plays (it moved since the
    /// last block: stopped, or held while its disk catches up, it does not). Thread: render.
    @inline(__always)
    func readTrack() {
        guard let track else { return }
        trackPosition = (track.positionSeconds * sampleRate).rounded()
        trackMoving = lastTrackPosition >= 0 && trackPosition != lastTrackPosition
        lastTrackPosition = trackPosition
    }

    /// Lists the song's beats on the current line that start before frame `end`. Thread: render.
    @inline(__always)
    func listBeats(before end: Int64, blockStart: Int64) {
        let perBar = Int(beatsPerBar)
        while beatCount < beatCapacity {
            let f = frame(ofBeat: nextBeat)
            guard f < end else { return }
            let b = Int(nextBeat)
            beats[beatCount] = SongBeat(
                frame: max(f, blockStart), beat: Int32(truncatingIfNeeded: b), isDownbeat: ((b % perBar) + perBar) % perBar == 0,
                isCountIn: b < 0)
            beatCount += 1
            listBarCue(atBeat: nextBeat, frame: max(f, blockStart))
            nextBeat += 1
        }
    }

    /// The song beat the next section starts on, when the bar clock places it: an armed
    /// jump's bar line, else the next section's own (nil: none, or placed by time).
    /// Thread: render.
    var nextSectionBeat: Double? {
        if armed != nil { return armedBeat }
        guard current + 1 < sectionCount, sections[current + 1].trackFrame < 0 else { return nil }
        return sections[current + 1].startBeat
    }

    /// The song beat of the first bar line at or after `frame`. Thread: render.
    func barLine(atOrAfter frame: Int64) -> Double {
        var bar = (beat(at: frame) / beatsPerBar).rounded(.down) * beatsPerBar
        while self.frame(ofBeat: bar) < frame { bar += beatsPerBar }
        return bar
    }

    /// Arms `jump` for the first bar line at or after `frame`. Thread: render.
    func arm(_ jump: SectionJump, at frame: Int64) {
        let bar = barLine(atOrAfter: frame)
        armed = jump
        armedBeat = bar
        armCount &+= 1
        let beat = Int(Int32(clamping: Int(bar.rounded())))
        armedBits.store(
            (armCount & 0x3FFF_FFFF) << 34 | Int(jump.rawValue & 3) << 32 | Int(UInt32(bitPattern: Int32(beat))), ordering: .relaxed)
    }

    /// Arms `jump` for the bar line at song beat `bar` (a sync leader's), or, when that has
    /// passed by `frame`, for the first bar line after `frame` (one bar late, not lost).
    /// Thread: render.
    func arm(_ jump: SectionJump, atBar bar: Double, from frame: Int64) {
        guard self.frame(ofBeat: bar) >= frame else { return arm(jump, at: frame) }
        armed = jump
        armedBeat = bar
    }

    /// The last jump armed on this clock (from a button, the page, OSC): its count (0: none
    /// yet), its way and the song beat of its bar line. Thread: any.
    public var armedJump: (count: Int, jump: SectionJump, bar: Int)? {
        let bits = armedBits.load(ordering: .relaxed)
        guard bits >> 34 > 0, let jump = SectionJump(rawValue: Int32((bits >> 32) & 3)) else { return nil }
        return (bits >> 34, jump, Int(Int32(bitPattern: UInt32(truncatingIfNeeded: bits))))
    }

    /// Back to bar 1 beat 1 at frame 0, before the first section. Thread: render, or control
    /// while the engine is idle.
    public func reset() {
        anchorFrame = 0
        anchorBeat = firstBeat
        nextBeat = firstBeat
        beatCount = 0
        tempo = 0
        current = -1
        armed = nil
        jumpedAt = -1
        cueCount = 0
        lastCued = -1
        cueOnLanding = false
        lastTrackPosition = -1
        trackMoving = false
        settled = true
        madeSomething = false
        backing?.reset()
        transposer?.reset()
        heldSnapshots?.reset()
        publish()
    }

    @inline(__always)
    func publish() {
        let next = current + 1 < sectionCount ? current + 1 : -1
        publishedBits.store((current + 1) << 16 | (next + 1), ordering: .relaxed)
    }

    /// The section playing and the next one (indices into the rack's
    /// `timeline.sections`; nil: none), as of the last block. Thread: any.
    public var published: (current: Int?, next: Int?) {
        let bits = publishedBits.load(ordering: .relaxed)
        let c = (bits >> 16) - 1
        let n = (bits & 0xFFFF) - 1
        return (c >= 0 ? c : nil, n >= 0 ? n : nil)
    }

    /// The names of the section playing and the next, as of the last block. Thread: any.
    public var publishedNames: (current: String?, next: String?) {
        let p = published
        return (p.current.map { names[$0] }, p.next.map { names[$0] })
    }
}
