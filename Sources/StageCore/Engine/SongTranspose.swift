import Synchronization

/// A unit whose notes can be moved by whole semitones while it plays (the synth: notes that
/// start from then on; sounding notes keep theirs). Thread: `transpose` any.
public protocol UnitTransposing: AnyObject {
    var transpose: Int { get set }
}

/// The song's transpose while the show runs (racks/README.md, "One song key"): the song's
/// own (`"transpose"`, already in the rack's settings) plus what the `transpose-up` and
/// `transpose-down` actions asked, −12…12 in all, applied at the next section's first
/// frame (`"transposeAt": "section"`, the default when the song has sections) or at once
/// (`"now"`): every synth's `transpose` (from that block on), every `key` parameter
/// (harmony, tune; at the frame) and every player's `transpose` (the backing track's audio,
/// at the frame; the player's disk thread re-renders it, so it is heard ~0.1 s later). Made with the song's clock (`SongClock`), which calls
/// `take` and `advance` each block.
///
/// Thread: `init` control; `take`, `advance`, `reset` render (or control while the engine
/// is idle); `published` any.
public final class SongTranspose: @unchecked Sendable {
    struct KeyTarget {
        var address: ParameterAddress
        /// The key (0 = C … 11 = B) the song starts in.
        var base: Int
    }

    /// The song's own transpose (the setlist's), in the rack's settings already.
    public let song: Int
    let atSection: Bool
    let synths: [any UnitTransposing]
    let synthBases: [Int]
    let keys: [KeyTarget]
    /// The backing tracks' players' `transpose` parameters (semitones, −12…12), each from
    /// its value when the song loaded (the song's own transpose already in it).
    let shifts: [KeyTarget]
    /// Semitones beyond the song's own: applied, and asked.
    var applied = 0
    var asked = 0
    var askedAt: Int64 = 0
    /// What was asked lands at once, whatever `atSection` says (`EngineEvent.transpose(to:)`).
    var askedNow = false
    /// A band leader's song (`SongTimeline.leadsBand`): what is asked is published with the
    /// song beat it lands on (`armedTranspose`), and asked `"now"` waits for that bar line.
    let leads: Bool
    /// What was asked waits for the bar line at this song beat (NaN: none).
    var askedBeat = Double.nan
    /// The frame the last block applied a transpose on (−1: none). Render thread.
    public private(set) var appliedAt: Int64 = -1
    let publishedValue: Atomic<Int>
    /// The last transpose a leader asked, for it to tell (`armedTranspose`): how many so far
    /// << 40 | its total + 128 << 32 | the song beat it lands on (32 bits). Render thread
    /// stores, any thread reads.
    let armedBits = Atomic<Int>(0)
    var armCount = 0

    /// The transposable parts of `plan`; nil when the song neither has a transpose nor maps
    /// `transpose-up`/`transpose-down`. Thread: control.
    public init?(plan: RenderPlan) {
        let actions = plan.rack.midi.map.compactMap(\.action)
        let timeline = plan.rack.timeline
        guard timeline.transpose != 0 || actions.contains(.transposeUp) || actions.contains(.transposeDown) || timeline.transposable
        else { return nil }
        song = timeline.transpose
        // At a section only when there is one to wait for.
        atSection = (timeline.transposeAtSection ?? true) && !timeline.sections.isEmpty
        leads = timeline.leadsBand
        let found = plan.units.compactMap { $0 as? any UnitTransposing }
        synths = found
        synthBases = found.map(\.transpose)
        var keys: [KeyTarget] = []
        for u in plan.units.indices {
            let specs = plan.parameters[u].specs
            for p in specs.indices where specs[p].isMusicalKey {
                keys.append(KeyTarget(address: ParameterAddress(unit: u, parameter: p), base: Int(specs[p].defaultValue)))
            }
        }
        self.keys = keys
        shifts = plan.units.indices.compactMap { u -> KeyTarget? in
            guard plan.unitTypes[u] == "player", let p = plan.parameters[u].specs.firstIndex(where: { $0.id == "transpose" }) else { return nil }
            return KeyTarget(address: ParameterAddress(unit: u, parameter: p), base: Int(plan.parameters[u].targetValue(p)))
        }
        publishedValue = Atomic(timeline.transpose)
    }

    /// The song's transpose now (its own and the actions'). Thread: any.
    public var published: Int { publishedValue.load(ordering: .relaxed) }

    /// The most events `advance` adds in a block.
    public var headroom: Int { keys.count + shifts.count }

    /// Takes the block's `.transpose` events: `parameter` +1 or −1, or (`value` 1) the
    /// transpose in all, at once, or (`unit` `sectionAtBeat`) in all on the bar line at song
    /// beat `value` (the next one if it has passed). A leader's +1/−1 is published with the
    /// song beat it lands on, and waits for it when asked `"now"`. Thread: render.
    public func take(_ events: UnsafeMutablePointer<EngineEvent>, count: Int, blockStart: Int64, clock: SongClock) {
        let range = SetlistSong.transposeRange
        for e in 0..<count where events[e].kind == .transpose {
            let atBeat = events[e].unit == EngineEvent.sectionAtBeat
            let absolute = atBeat || events[e].value == 1
            let wanted = absolute ? Int(events[e].parameter) : song + asked + Int(events[e].parameter)
            asked = min(max(wanted, range.lowerBound), range.upperBound) - song
            askedAt = max(events[e].sampleTime, blockStart)
            askedNow = absolute
            askedBeat = .nan
            if atBeat {
                let bar = Double(events[e].value)
                askedBeat = clock.frame(ofBeat: bar) >= askedAt ? bar : clock.barLine(atOrAfter: askedAt)
            } else if leads && !absolute, let landing = atSection ? clock.nextSectionBeat : clock.barLine(atOrAfter: askedAt) {
                if !atSection { askedBeat = landing }
                armCount &+= 1
                let beat = Int(UInt32(bitPattern: Int32(clamping: Int(landing.rounded()))))
                armedBits.store((armCount & 0xFF_FFFF) << 40 | (song + asked + 128) << 32 | beat, ordering: .relaxed)
            }
        }
    }

    /// The last transpose this leader asked (`leads`): its count (0: none yet), its total
    /// (the song's own counted) and the song beat it lands on. Thread: any.
    public var armedTranspose: (count: Int, total: Int, bar: Int)? {
        let bits = armedBits.load(ordering: .relaxed)
        guard bits >> 40 > 0 else { return nil }
        return (bits >> 40, ((bits >> 32) & 0xFF) - 128, Int(Int32(bitPattern: UInt32(truncatingIfNeeded: bits))))
    }

    /// Whether what was asked lands at the next section (else at once or on its bar line).
    /// Thread: any (immutable).
    public var landsAtSection: Bool { atSection }

    /// Applies what was asked, at `sectionStart` (the frame a section starts in the block
    /// `blockStart ..< blockEnd`, −1: none), on its bar line, or at once, into
    /// `list[count...]` below `capacity`; returns the new count. Thread: render.
    public func advance(
        sectionStart: Int64, blockStart: Int64, blockEnd: Int64, clock: SongClock, list: UnsafeMutablePointer<EngineEvent>,
        count: Int, capacity: Int
    ) -> Int {
        appliedAt = -1
        let waitsForSection = atSection && !askedNow
        guard asked != applied, !waitsForSection || sectionStart >= 0, count + headroom <= capacity else { return count }
        var frame = waitsForSection ? sectionStart : askedAt
        if !askedBeat.isNaN {
            frame = max(clock.frame(ofBeat: askedBeat), blockStart)
            guard frame < blockEnd else { return count }
            askedBeat = .nan
        }
        appliedAt = frame
        applied = asked
        askedNow = false
        for i in synths.indices { synths[i].transpose = synthBases[i] + applied }
        var n = count
        for k in keys {
            list[n] = .setParameter(k.address, Float(((k.base + applied) % 12 + 12) % 12), at: frame)
            n += 1
        }
        let range = SetlistSong.transposeRange
        for t in shifts {
            list[n] = .setParameter(t.address, Float(min(max(t.base + applied, range.lowerBound), range.upperBound)), at: frame)
            n += 1
        }
        publishedValue.store(song + applied, ordering: .relaxed)
        return n
    }

    /// Whether a transpose was asked and not yet applied. Thread: render.
    var isWaiting: Bool { asked != applied }

    /// Back to the song's own transpose. Thread: render, or control while the engine is idle.
    public func reset() {
        applied = 0
        asked = 0
        askedNow = false
        askedBeat = .nan
        appliedAt = -1
        for i in synths.indices { synths[i].transpose = synthBases[i] }
        publishedValue.store(song, ordering: .relaxed)
    }
}
