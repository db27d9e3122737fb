/// A unit and its parameter bank held without reference counting, for the render thread's
/// per-block calls (`RenderEngine.unitRefs`); the plan owns both. Thread: render.
struct UnitRef {
    /// (An existential cannot be `Unmanaged`: loading it may still retain for the call.)
    unowned(unsafe) let unit: any RackUnit
    let bankRef: Unmanaged<ParameterBank>

    init(unit: any RackUnit, bank: ParameterBank) {
        self.unit = unit
        bankRef = .passUnretained(bank)
    }

    /// Calls `body` with the bank, not retained for the call.
    @inline(__always)
    func bank<R>(_ body: (ParameterBank) -> R) -> R { bankRef._withUnsafeGuaranteedRef(body) }
}
