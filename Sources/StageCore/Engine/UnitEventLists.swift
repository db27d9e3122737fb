/// The block's events grouped by unit: each unit's events, in the block's time order, as a
/// chain of indices into the block's list (`RenderEngine.blockEvents`), built once a block.
/// Each step walks only its own unit's events (parameters, MIDI, bypass: O(events) a block
/// instead of every step scanning every event), and a step whose unit has none skips that
/// work at once (most steps of most blocks).
///
/// Thread: render (init on control).
final class UnitEventLists {
    let unitCount: Int
    /// Per unit: the index of its first event in the block, or −1.
    let head: UnsafeMutablePointer<Int32>
    /// Per event: the index of the next event of the same unit, or −1.
    let next: UnsafeMutablePointer<Int32>
    let capacity: Int
    /// No event in the block at all: `head` is not read (nor cleared).
    private var empty = true

    init(unitCount: Int, eventCapacity: Int) {
        self.unitCount = max(unitCount, 1)
        capacity = max(eventCapacity, 1)
        head = .allocate(capacity: self.unitCount)
        head.initialize(repeating: -1, count: self.unitCount)
        next = .allocate(capacity: capacity)
        next.initialize(repeating: -1, count: capacity)
    }

    deinit {
        head.deallocate()
        next.deallocate()
    }

    /// Chains `events[0 ..< count]` (time-ordered) by unit; events naming no unit of the plan
    /// belong to none. Thread: render.
    func build(_ events: UnsafePointer<EngineEvent>, count: Int) {
        empty = count == 0
        guard !empty else { return }
        head.update(repeating: -1, count: unitCount)
        var e = min(count, capacity) - 1
        while e >= 0 {
            let u = Int(events[e].unit)
            if u >= 0 && u < unitCount {
                next[e] = head[u]
                head[u] = Int32(e)
            }
            e -= 1
        }
    }

    /// The index of unit `u`'s first event in the block, or −1. Thread: render.
    @inline(__always)
    func first(_ u: Int) -> Int { empty ? -1 : Int(head[u]) }

    /// The index of the event after `e` of the same unit, or −1. Thread: render.
    @inline(__always)
    func after(_ e: Int) -> Int { Int(next[e]) }
}
