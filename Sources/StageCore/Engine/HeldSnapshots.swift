import Synchronization

/// Snapshot recalls held for a bar line of the song's clock (`SongClock`), so that a band's
/// boxes change sound on the same beat (`StageSync`): a sync leader's own recall waits for
/// the next bar line, and each follower arms the same recall for the same bar line (its song
/// beat, told by the leader). The events of each of the rack's snapshots are made once, on
/// the control thread; a `.snapshot` engine event arms one (the latest armed wins); the
/// clock lists its events at the bar line's frame.
///
/// Thread: `init` on the control thread; `take`, `advance` and `reset` on the render thread;
/// `armedRecall` any.
public final class HeldSnapshots: @unchecked Sendable {
    /// Every snapshot's events, back to back, with no frame yet: snapshot i's are
    /// `first[i] ..< first[i + 1]`.
    let events: UnsafeMutablePointer<EngineEvent>
    let first: UnsafeMutablePointer<Int>
    /// How many snapshots the rack has, and the most events one of them sets.
    public let count: Int
    /// The snapshots' names, in the rack's order. Thread: any (immutable).
    public let names: [String]
    public let largest: Int

    // Render-thread state.
    var armedIndex = -1
    var armedBeat = 0.0
    /// The frame a held recall was made on in the last block (−1: none).
    public private(set) var recalledAt: Int64 = -1
    /// The last recall armed for the next bar line (a leader's own), for a sync leader to
    /// tell (`armedRecall`): how many so far << 40 | the snapshot's index << 32 | the song
    /// beat of its bar line (32 bits). Render thread stores, any thread reads.
    let armedBits = Atomic<Int>(0)
    var armCount = 0

    /// The held form of `plan`'s snapshots (nil: the rack has none). Thread: control.
    init?(plan: RenderPlan) {
        let snapshots = plan.rack.snapshots
        guard !snapshots.isEmpty, snapshots.count < 256 else { return nil }
        var list: [EngineEvent] = []
        var starts: [Int] = []
        for snapshot in snapshots {
            starts.append(list.count)
            list += SongClock.events(for: .snapshot(snapshot.name), in: plan, talk: [])
        }
        starts.append(list.count)
        count = snapshots.count
        names = snapshots.map(\.name)
        largest = zip(starts.dropFirst(), starts).map { $0 - $1 }.max() ?? 0
        events = .allocate(capacity: max(list.count, 1))
        events.initialize(from: list, count: list.count)
        first = .allocate(capacity: starts.count)
        first.initialize(from: starts, count: starts.count)
    }

    deinit {
        events.deallocate()
        first.deallocate()
    }

    /// Arms the recalls among the block's events: for the bar line at the song beat an
    /// event names (a follower's, or the first bar line after it if that has passed), else
    /// for the first bar line at or after the event's frame (a leader's own, published).
    /// Thread: render.
    @inline(__always)
    func take(_ list: UnsafeMutablePointer<EngineEvent>, count n: Int, blockStart: Int64, clock: SongClock) {
        for e in 0..<n where list[e].kind == .snapshot {
            let index = Int(list[e].parameter)
            guard index >= 0 && index < count else { continue }
            let at = max(list[e].sampleTime, blockStart)
            armedIndex = index
            if list[e].unit == EngineEvent.sectionAtBeat {
                let bar = Double(list[e].value)
                armedBeat = clock.frame(ofBeat: bar) >= at ? bar : clock.barLine(atOrAfter: at)
                continue
            }
            armedBeat = clock.barLine(atOrAfter: at)
            armCount &+= 1
            let beat = Int(UInt32(bitPattern: Int32(clamping: Int(armedBeat.rounded()))))
            armedBits.store((armCount & 0xFF_FFFF) << 40 | index << 32 | beat, ordering: .relaxed)
        }
    }

    /// Lists the armed recall's events at its bar line's frame when that falls in the block
    /// `blockStart ..< blockEnd` (or has passed) and they fit below `capacity` (else it waits
    /// a block); returns the new count. Allocates nothing. Thread: render.
    @inline(__always)
    func advance(
        clock: SongClock, blockStart: Int64, blockEnd: Int64, list: UnsafeMutablePointer<EngineEvent>, count n: Int, capacity: Int
    ) -> Int {
        recalledAt = -1
        guard armedIndex >= 0 else { return n }
        let at = max(clock.frame(ofBeat: armedBeat), blockStart)
        let range = first[armedIndex]..<first[armedIndex + 1]
        guard at < blockEnd, n + range.count <= capacity else { return n }
        var m = n
        for k in range {
            var e = events[k]
            e.sampleTime = at
            list[m] = e
            m += 1
        }
        armedIndex = -1
        recalledAt = at
        return m
    }

    /// Whether a recall waits for its bar line. Thread: render.
    var isArmed: Bool { armedIndex >= 0 }

    /// Nothing held. Thread: render, or control while the engine is idle.
    func reset() {
        armedIndex = -1
        recalledAt = -1
    }

    /// The last recall armed for the next bar line on this clock (a leader's own): its
    /// count (0: none yet), the snapshot's index in the rack and the song beat of its bar
    /// line. Thread: any.
    public var armedRecall: (count: Int, snapshot: Int, bar: Int)? {
        let bits = armedBits.load(ordering: .relaxed)
        guard bits >> 40 > 0 else { return nil }
        return (bits >> 40, (bits >> 32) & 0xFF, Int(Int32(bitPattern: UInt32(truncatingIfNeeded: bits))))
    }
}
