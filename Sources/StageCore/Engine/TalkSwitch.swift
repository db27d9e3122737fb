import Synchronization

/// Talk's one state, owned by the render thread of a `RenderEngine`: the MIDI toggle, the
/// remote, OSC and a section's `talk on|off` all send `.talk` events (on, off or toggle),
/// and only here is the state changed, so they never disagree (a section turns Talk on, the
/// MIDI toggle then turns it off). Talk on saves each target's value as it is then (a
/// delay's `feed` at 40) and sets the Talk value; Talk off puts the saved values back. The
/// changes are ordinary parameter and bypass events added to the block's list.
/// `isOn` publishes the state for other threads (the page, the meters).
/// Thread: render for `apply`; any for `isOn`; made on the control thread.
final class TalkSwitch {
    let count: Int
    let units: UnsafeMutablePointer<Int32>
    let parameters: UnsafeMutablePointer<Int32>
    let onValues: UnsafeMutablePointer<Float>
    let saved: UnsafeMutablePointer<Float>
    /// Per target: `onValues` is added to the saved value (a dip); the ramp in frames.
    let relative: UnsafeMutablePointer<Bool>
    let ramps: UnsafeMutablePointer<Int32>
    var on = false
    let published = Atomic<Bool>(false)

    init(targets: [TalkTarget]) {
        count = targets.count
        units = .allocate(capacity: max(count, 1))
        parameters = .allocate(capacity: max(count, 1))
        onValues = .allocate(capacity: max(count, 1))
        saved = .allocate(capacity: max(count, 1))
        relative = .allocate(capacity: max(count, 1))
        ramps = .allocate(capacity: max(count, 1))
        for (i, t) in targets.enumerated() {
            relative[i] = t.relative
            ramps[i] = Int32(clamping: t.rampFrames)
            units[i] = Int32(t.address.unit)
            parameters[i] = Int32(t.address.parameter)
            onValues[i] = t.on
            saved[i] = t.off
        }
    }

    deinit {
        units.deallocate()
        parameters.deallocate()
        onValues.deallocate()
        saved.deallocate()
        relative.deallocate()
        ramps.deallocate()
    }

    var isOn: Bool { published.load(ordering: .relaxed) }

    /// Applies the `.talk` events among `events[0..<count]` in order, appending the
    /// targets' changes at each one's time while there is room (a change that finds no room
    /// waits: it is not applied, the state stays). Returns the new count. `current(u, p)`
    /// reads a target's value now (a parameter's target, or a unit's bypass).
    /// Thread: render.
    @inline(__always)
    func apply(
        events: UnsafeMutablePointer<EngineEvent>, count total: Int, capacity: Int, current: (Int, Int) -> Float
    ) -> Int {
        var n = total
        for e in 0..<total where events[e].kind == .talk {
            let change = events[e].parameter
            let wanted = change == TalkChange.toggle.rawValue ? !on : change == TalkChange.on.rawValue
            guard wanted != on, n + count <= capacity else { continue }
            on = wanted
            for i in 0..<count {
                let address = ParameterAddress(unit: Int(units[i]), parameter: Int(parameters[i]))
                if wanted { saved[i] = current(address.unit, address.parameter) }
                let value = !wanted ? saved[i] : relative[i] ? saved[i] + onValues[i] : onValues[i]
                var event = EngineEvent.setParameter(address, value, at: events[e].sampleTime)
                if event.kind == .parameter && ramps[i] > 0 { event.rampFrames = ramps[i] }
                events[n] = event
                n += 1
            }
        }
        published.store(on, ordering: .relaxed)
        return n
    }
}

/// What a `.talk` event asks (its `parameter`).
public enum TalkChange: Int32, Sendable {
    case off = 0, on = 1, toggle = 2
}
