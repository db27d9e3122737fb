/// What each kind of control does to its parameter: absolute knobs (with soft takeover),
/// relative encoders, buttons and triggers; and the feedback that follows every change.
/// Thread: the mapper's thread (the MIDI thread). Never allocates.
extension MIDIMapper {
    /// An absolute control at `position` (0…1) moves mapping `i`'s parameter, subject to
    /// soft takeover.
    func absolute(_ i: Int, position x: Float, at t: Int64, emit: (EngineEvent) -> Void) {
        let m = mappings[i]
        let ti = m.target
        guard ti >= 0 else { return }
        var position = x
        if !synced[i] && m.takeover != .jump {
            // Out of step: an explicit pickup/scale rule, or pickup after a preset change.
            let rule = m.takeover ?? .pickup
            let current = targetValues[ti]
            let step = SoftTakeover.step(
                rule, from: lastKnob[i].isNaN ? nil : lastKnob[i], to: x, parameter: m.position(ofValue: current),
                tolerance: m.takeoverTolerance)
            lastKnob[i] = x
            if step.caughtUp { synced[i] = true }
            guard let p = step.position else {
                record(.waiting, mapping: i, value: current)
                return
            }
            position = p
        }
        synced[i] = synced[i] || m.takeover == .jump
        lastKnob[i] = x
        setTarget(ti, m.value(atPosition: position), by: i, at: t, emit: emit)
    }

    /// A relative encoder (or NRPN increment) moves mapping `i` by `steps` steps of
    /// `sensitivity / 127` of the knob's travel, from where the parameter is now.
    func relative(_ i: Int, steps: Int, at t: Int64, emit: (EngineEvent) -> Void) {
        let m = mappings[i]
        let ti = m.target
        guard ti >= 0 else { return }
        if seenVersion[i] != targetVersions[ti] {
            // Someone else moved it: continue from its value.
            relativePosition[i] = m.position(ofValue: targetValues[ti])
        }
        let p = relativePosition[i] + Float(steps) * m.sensitivity / 127
        relativePosition[i] = min(max(p, 0), 1)
        setTarget(ti, m.value(atPosition: relativePosition[i]), by: i, at: t, emit: emit)
        seenVersion[i] = targetVersions[ti]
    }

    /// A note in mapping `i`'s key range: a note on sets its key parameter to the note's
    /// pitch class (at the note's frame); a note off is taken.
    func keyNote(_ i: Int, _ message: MIDIMessage, at t: Int64, emit: (EngineEvent) -> Void) {
        let ti = mappings[i].target
        guard message.isNoteOn, ti >= 0 else { return record(.consumed, mapping: i) }
        setTarget(ti, Float(message.note % 12), by: i, at: t, emit: emit)
    }

    /// A button (a CC ≥ 64 is pressed, < 64 released; a note on/off) of mapping `i`.
    func button(_ i: Int, isPressed: Bool, at t: Int64, seconds: Double, emit: (EngineEvent) -> Void) {
        let m = mappings[i]
        if isPressed == pressed[i] {
            record(.consumed, mapping: i)  // a repeat of the same state
            return
        }
        pressed[i] = isPressed
        if m.commandUnit >= 0 { return sendCommand(i, isPressed: isPressed, at: t, emit: emit) }
        switch m.button ?? .trigger {
        case .toggle:
            guard isPressed, m.target >= 0 else { return record(.consumed, mapping: i) }
            let current = targetValues[m.target]
            let isOn = abs(current - m.upper) < abs(current - m.lower)
            setTarget(m.target, isOn ? m.lower : m.upper, by: i, at: t, emit: emit)
        case .momentary:
            guard m.target >= 0 else { return record(.consumed, mapping: i) }
            setTarget(m.target, isPressed ? m.upper : m.lower, by: i, at: t, emit: emit)
        case .trigger:
            guard isPressed else { return record(.consumed, mapping: i) }
            if let action = m.action {
                perform(action, mapping: i, at: t, seconds: seconds, emit: emit)
            } else if m.target >= 0 {
                setTarget(m.target, m.upper, by: i, at: t, emit: emit)
            }
        }
    }

    func perform(_ action: MappingAction, mapping i: Int, at t: Int64, seconds: Double, emit: (EngineEvent) -> Void) {
        switch action {
        case .tapTempo:
            if let bpm = tempo.tap(at: seconds) {
                emit(.tempo(bpm, source: .tap, at: t))
                record(.tempo, mapping: i, value: Float(bpm))
            } else {
                record(.consumed, mapping: i)
            }
        case .nextPreset: fire(ControlAction(kind: .nextPreset))
        case .previousPreset: fire(ControlAction(kind: .previousPreset))
        case .talk:
            // The engine's one Talk state decides (`TalkSwitch`): a section may have turned it on.
            if !talkTargets.isEmpty { emit(.talk(.toggle, at: t)) }
            record(.consumed, mapping: i)
        case .nextSection, .repeatSection:
            emit(.section(action == .nextSection ? .next : .repeatCurrent, at: t))
            record(.consumed, mapping: i)
        case .transposeUp, .transposeDown:
            emit(.transpose(action == .transposeUp ? 1 : -1, at: t))
            record(.consumed, mapping: i)
        }
    }

    /// Sets target `ti` to `value` because mapping `i` moved: one engine event, takeover
    /// bookkeeping for the other mappings of the same parameter, feedback.
    func setTarget(_ ti: Int, _ value: Float, by i: Int, at t: Int64, emit: (EngineEvent) -> Void) {
        if value == targetValues[ti] {
            record(.unchanged, mapping: i, value: value)
            return
        }
        targetValues[ti] = value
        targetVersions[ti] &+= 1
        emit(.setParameter(targetAddresses[ti], value, at: t))
        record(.parameter, mapping: i, value: value)
        for n in targetMappings[ti] where n != i {
            let rule = mappings[n].takeover
            if rule == .pickup || rule == .scale { synced[n] = false }
        }
        // The knob that moved knows where it is; everything else shows the new value.
        feedback(target: ti, except: mappings[i].isAbsoluteKnob ? i : -1)
    }

    /// Takes in the changes made outside the mapper.
    func drainNotices() {
        while let notice = notices.pop() {
            for ti in targetAddresses.indices where targetAddresses[ti] == notice.address {
                let list = targetMappings[ti]
                let value = mappings[list[0]].spec.clamped(notice.value)
                if value == targetValues[ti] { continue }
                targetValues[ti] = value
                targetVersions[ti] &+= 1
                for n in list {
                    let rule = mappings[n].takeover
                    if notice.byPreset ? rule != .jump : (rule == .pickup || rule == .scale) { synced[n] = false }
                }
                feedback(target: ti, except: -1)
            }
        }
    }

    func feedback(target ti: Int, except: Int) {
        for n in targetMappings[ti] where n != except && mappings[n].feedback { sendFeedback(n) }
    }

    /// Queues the messages that show mapping `n`'s value on its control (when it changed
    /// since the last time): the CC (both halves of a 14-bit pair), the NRPN/RPN number
    /// and data, or a note on with velocity 127/0 for a button's light.
    func sendFeedback(_ n: Int) {
        let m = mappings[n]
        guard m.target >= 0 else { return }
        let cv = m.controlValue(ofValue: targetValues[m.target])
        if cv == lastFeedback[n] { return }
        lastFeedback[n] = cv
        let ch = m.channel ?? 0
        switch m.source {
        case .cc(let c):
            if m.hires {
                push(.controlChange(channel: ch, controller: c, value: cv >> 7))
                push(.controlChange(channel: ch, controller: c + 32, value: cv & 127))
            } else {
                push(.controlChange(channel: ch, controller: c, value: cv))
            }
        case .note(let k):
            push(.noteOn(channel: ch, note: k, velocity: cv))
        case .keys:
            return  // a key range shows nothing
        case .nrpn(let number), .rpn(let number):
            let isNRPN = { if case .nrpn = m.source { return true } else { return false } }()
            push(.controlChange(channel: ch, controller: isNRPN ? 99 : 101, value: number >> 7))
            push(.controlChange(channel: ch, controller: isNRPN ? 98 : 100, value: number & 127))
            if m.hires {
                push(.controlChange(channel: ch, controller: 6, value: cv >> 7))
                push(.controlChange(channel: ch, controller: 38, value: cv & 127))
            } else {
                push(.controlChange(channel: ch, controller: 6, value: cv))
            }
        }
    }

    func push(_ message: MIDIMessage) {
        if !feedback.push(message) { droppedOutputs &+= 1 }
    }
}
