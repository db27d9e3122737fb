import Synchronization

/// A panic's reset of the units whose reset may not run on the render thread
/// (`RackUnit.resetsOnRenderThread` false: LV2 plugins), handed to the control thread.
///
/// The render thread resets every other unit at once and parks these (`park`): from that
/// block on it does not render them (their outputs read as silence) and bumps `requested`.
/// The control thread sees the request (`resetParkedUnits`, on every turn of the preset
/// switcher's loop: 20 ms at most), resets the parked units (nothing renders them) and
/// publishes `done`; the render thread takes them back at its next block (`takeBack`).
/// A second panic while they are parked asks again; the control thread resets them again.
///
/// Thread: `park`, `takeBack`, `isParked` on the render thread; `resetParkedUnits` on the
/// control thread; the two counters are the only state both touch (release/acquire).
final class PanicParking: @unchecked Sendable {
    /// The units the control thread resets, in plan order. Found once, on the control thread.
    let units: [Int]
    /// Per unit: whether it is one of `units` (render thread: a load, no search).
    let isControlReset: UnsafeMutablePointer<Bool>
    /// Whether `units` are parked now. Thread: render.
    private(set) var parked = false
    /// Resets asked for (written by the render thread only).
    private var asked = 0
    let requested = Atomic<Int>(0)
    let done = Atomic<Int>(0)

    init(plan: RenderPlan) {
        units = plan.units.indices.filter { !plan.units[$0].resetsOnRenderThread }
        isControlReset = .allocate(capacity: max(plan.units.count, 1))
        isControlReset.initialize(repeating: false, count: max(plan.units.count, 1))
        for u in units { isControlReset[u] = true }
    }

    deinit { isControlReset.deallocate() }

    /// Whether unit `u` is parked (not rendered, outputs silent). Thread: render.
    @inline(__always)
    func isParked(_ u: Int) -> Bool { parked && isControlReset[u] }

    /// Parks the control-reset units and asks the control thread to reset them. Thread: render.
    func park() {
        guard !units.isEmpty else { return }
        parked = true
        asked &+= 1
        requested.store(asked, ordering: .releasing)
    }

    /// Takes the parked units back once the control thread has reset them for the last
    /// request. Thread: render, at the start of a block.
    @inline(__always)
    func takeBack() {
        if parked && done.load(ordering: .acquiring) == asked { parked = false }
    }

    /// Resets the parked units if a panic asked for it; true when it did. Thread: control.
    func resetParkedUnits(_ plan: RenderPlan) -> Bool {
        let wanted = requested.load(ordering: .acquiring)
        guard wanted != done.load(ordering: .relaxed) else { return false }
        for u in units { plan.units[u].reset() }
        done.store(wanted, ordering: .releasing)
        return true
    }

    /// Nothing parked, nothing asked (the engine reset on the control thread). Thread:
    /// control, while no thread renders the engine.
    func clear() {
        parked = false
        requested.store(asked, ordering: .relaxed)
        done.store(asked, ordering: .relaxed)
    }
}
