/// Plays a song's MIDI-file backing (`SongMIDIBacking`) on the song clock's line: each
/// message goes, as an engine event at the frame of its beat, to every unit of the plan that
/// plays MIDI (`RenderPlan.midiReceivers`; each listens to its own channels). Bar 1 beat 1 of
/// the song is the file's start, so a count-in comes first; the song's tempo (the clock's:
/// MIDI clock, taps, the song's tempo) places the beats. A section jump relocates it to
/// the section's start: the notes it holds end there (note-offs, sustain off) and it plays
/// on from the first message at or after that beat.
///
/// The song's transpose is the synth's (`SongTranspose`): the file's notes are sent as
/// written.
///
/// Everything is sized in `init` (control thread); `advance` and `reset` run on the render
/// thread (or the control thread while the engine is idle) and allocate nothing.
/// Thread: see above.
public final class SongMIDIPlayer: @unchecked Sendable {
    struct Event {
        var beat: Double
        var message: MIDIMessage
    }

    let events: UnsafeMutablePointer<Event>
    let eventCount: Int
    let receivers: UnsafeMutablePointer<Int32>
    let receiverCount: Int
    /// The most events one block can add to the engine's list (two stretches of the
    /// densest window at 400 BPM and a release of every note it can hold, to every receiver).
    public let headroom: Int
    /// Index of the next message to play.
    var next = 0
    /// Sounding notes it started: bit `k % 64` of word `channel * 2 + k / 64`.
    let held: UnsafeMutablePointer<UInt64>
    /// Channels whose sustain pedal it holds down.
    var sustained: UInt16 = 0
    /// Stopped for good (the rack was left: `stop`), until `reset`.
    public private(set) var stopped = false
    /// Messages that waited a block because the engine's list was full (render thread counts).
    public private(set) var eventsDeferred = 0

    /// Prepares `backing` for `plan` with song beats of a `beatUnit` note. Thread: control.
    public init(_ backing: SongMIDIBacking, plan: RenderPlan, beatUnit: Int) {
        let perQuarter = SongMIDIBacking.beatsPerQuarter(beatUnit: beatUnit)
        eventCount = backing.messages.count
        events = .allocate(capacity: max(eventCount, 1))
        for i in 0..<eventCount {
            (events + i).initialize(to: Event(beat: backing.quarterNotes[i] * perQuarter, message: backing.messages[i]))
        }
        receiverCount = plan.midiReceivers.count
        receivers = .allocate(capacity: max(receiverCount, 1))
        for (i, r) in plan.midiReceivers.enumerated() { (receivers + i).initialize(to: Int32(r)) }
        held = .allocate(capacity: 32)
        held.initialize(repeating: 0, count: 32)
        // The densest stretch of beats one block can span at 400 BPM.
        let window = Double(plan.maxFrames) * 400 / (60 * plan.sampleRate)
        var densest = 0
        var first = 0
        for last in 0..<eventCount {
            while events[last].beat - events[first].beat > window { first += 1 }
            densest = max(densest, last - first + 1)
        }
        let keys = Set(backing.messages.filter(\.isNoteOn).map { $0.channel * 128 + $0.note }).count
        headroom = (2 * densest + min(keys * 3, 16 * 128) + 16) * receiverCount
    }

    deinit {
        events.deallocate()
        receivers.deallocate()
        held.deallocate()
    }

    /// Plays the messages of the block `blockStart ..< blockEnd` into `list[count...]`
    /// (below `capacity`), on `clock`'s line: the line before its jump up to the jump's
    /// frame, there a relocation to the section's start, then its line now. Returns the new
    /// count. Thread: render.
    func advance(
        clock: SongClock, blockStart: Int64, blockEnd: Int64, list: UnsafeMutablePointer<EngineEvent>, count: Int,
        capacity: Int
    ) -> Int {
        guard !stopped else { return count }
        var n = count
        let perBeat = clock.framesPerBeat
        if clock.jumpedAt >= 0 {
            let before = clock.lineBeforeJump
            n = play(until: clock.jumpedAt, from: blockStart, anchor: before, framesPerBeat: perBeat, list, n, capacity)
            n = releaseAll(at: clock.jumpedAt, list, n, capacity)
            locate(beat: clock.anchorBeat)
            let after = (frame: clock.anchorFrame, beat: clock.anchorBeat)
            return play(until: blockEnd, from: clock.jumpedAt, anchor: after, framesPerBeat: perBeat, list, n, capacity)
        }
        let line = (frame: clock.anchorFrame, beat: clock.anchorBeat)
        return play(until: blockEnd, from: blockStart, anchor: line, framesPerBeat: perBeat, list, n, capacity)
    }

    /// Appends the messages whose frame on the line through `anchor` falls before `end`
    /// (none before `from`). Thread: render.
    private func play(
        until end: Int64, from start: Int64, anchor: (frame: Int64, beat: Double), framesPerBeat: Double,
        _ list: UnsafeMutablePointer<EngineEvent>, _ count: Int, _ capacity: Int
    ) -> Int {
        var n = count
        while next < eventCount {
            let e = events[next]
            let f = anchor.frame + Int64(((e.beat - anchor.beat) * framesPerBeat).rounded(.up))
            guard f < end else { break }
            guard n + receiverCount <= capacity else {
                eventsDeferred &+= 1
                break
            }
            next += 1
            note(e.message)
            n = send(e.message, at: max(f, start), list, n)
        }
        return n
    }

    /// Notes the held notes and pedals `message` changes. Thread: render.
    @inline(__always)
    private func note(_ message: MIDIMessage) {
        let c = message.channel
        switch message.kind {
        case .noteOn, .noteOff:
            let key = message.note & 0x7F
            let bit: UInt64 = 1 << UInt64(key % 64)
            if message.isNoteOn { held[c * 2 + key / 64] |= bit } else { held[c * 2 + key / 64] &= ~bit }
        case .controlChange where message.controller == 64:
            if message.value >= 64 { sustained |= 1 << UInt16(c) } else { sustained &= ~(1 << UInt16(c)) }
        default:
            break
        }
    }

    /// Note-offs for every note it holds and sustain off where it holds the pedal, at
    /// `frame`, while they fit below `capacity` (`headroom` leaves room for all of them).
    /// Thread: render.
    func releaseAll(at frame: Int64, _ list: UnsafeMutablePointer<EngineEvent>, _ count: Int, _ capacity: Int) -> Int {
        var n = count
        for c in 0..<16 {
            if sustained & (1 << UInt16(c)) != 0 {
                guard n + receiverCount <= capacity else { return n }
                n = send(.controlChange(channel: c, controller: 64, value: 0), at: frame, list, n)
                sustained &= ~(1 << UInt16(c))
            }
            for w in 0..<2 {
                while held[c * 2 + w] != 0 {
                    guard n + receiverCount <= capacity else { return n }
                    let bit = held[c * 2 + w].trailingZeroBitCount
                    n = send(.noteOff(channel: c, note: w * 64 + bit), at: frame, list, n)
                    held[c * 2 + w] &= ~(UInt64(1) << UInt64(bit))
                }
            }
        }
        return n
    }

    @inline(__always)
    private func send(_ message: MIDIMessage, at frame: Int64, _ list: UnsafeMutablePointer<EngineEvent>, _ count: Int) -> Int {
        for r in 0..<receiverCount { list[count + r] = .midi(message, toUnit: Int(receivers[r]), at: frame) }
        return count + receiverCount
    }

    /// The next message to play is the first at or after song beat `beat`. Thread: render.
    func locate(beat: Double) {
        var lo = 0
        var hi = eventCount
        while lo < hi {
            let mid = (lo + hi) / 2
            if events[mid].beat < beat { lo = mid + 1 } else { hi = mid }
        }
        next = lo
    }

    /// Plays nothing more: the rack is being left (`RenderEngine.releaseAllNotes` ends the
    /// notes it holds), and its tail rings out without the file. Thread: render.
    public func stop() {
        stopped = true
        held.update(repeating: 0, count: 32)
        sustained = 0
    }

    /// Back to the start, holding nothing (the units are reset with it). Thread: render,
    /// or control while the engine is idle.
    public func reset() {
        stopped = false
        next = 0
        held.update(repeating: 0, count: 32)
        sustained = 0
    }
}
