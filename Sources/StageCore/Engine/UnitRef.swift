/// A unit and its parameter bank held without reference counting, for the render thread's
/// per-block calls (`RenderEngine.unitRefs`); the plan owns both. Thread: render.
///
/// The unit is kept as its object and its concrete type, not as an `any RackUnit`: a call
/// through an existential loaded from memory retains and releases the unit around every
/// call (~40 instructions each, ~480 a block for the baseline rack, callgrind); opening the
/// stored type and calling on the unretained object dispatches through the same witness
/// table with no reference counting.
struct UnitRef {
    let object: Unmanaged<AnyObject>
    /// `object`'s dynamic type, with its `RackUnit` conformance.
    let type: any RackUnit.Type
    let bankRef: Unmanaged<ParameterBank>
    /// The bank's values as the unit reads them (`ParameterBank.renderValues`: fixed pointers).
    let parameters: ParameterValues

    init(unit: any RackUnit, bank: ParameterBank) {
        object = .passUnretained(unit as AnyObject)
        type = Swift.type(of: unit)
        bankRef = .passUnretained(bank)
        parameters = bank.renderValues
    }

    /// Calls `body` with the bank, not retained for the call.
    @inline(__always)
    func bank<R>(_ body: (ParameterBank) -> R) -> R { bankRef._withUnsafeGuaranteedRef(body) }

    /// Whether the bank has nothing to do in a block with no event for it
    /// (`ParameterBank.settled`). Thread: render.
    @inline(__always)
    var bankIsSettled: Bool { bankRef._withUnsafeGuaranteedRef { $0.settled } }

    /// The unit's `render`, without retaining it. Thread: render.
    @inline(__always)
    func render(_ context: RenderContext) {
        let type = type
        object._withUnsafeGuaranteedRef { (unit: AnyObject) in renderOpened(type, unit, context) }
    }

    /// The unit's `silenceHoldFrames`, without retaining it. Thread: render.
    @inline(__always)
    func silenceHoldFrames(sampleRate: Double) -> Int {
        let type = type
        return object._withUnsafeGuaranteedRef { (unit: AnyObject) in holdOpened(type, unit, sampleRate) }
    }
}

/// `unit` (of type `U`, unretained) renders. Thread: render.
@inline(__always)
private func renderOpened<U: RackUnit>(_ type: U.Type, _ unit: AnyObject, _ context: RenderContext) {
    unsafeDowncast(unit, to: U.self).render(context)
}

/// `unit`'s (of type `U`, unretained) silence hold. Thread: render.
@inline(__always)
private func holdOpened<U: RackUnit>(_ type: U.Type, _ unit: AnyObject, _ sampleRate: Double) -> Int {
    unsafeDowncast(unit, to: U.self).silenceHoldFrames(sampleRate: sampleRate)
}
