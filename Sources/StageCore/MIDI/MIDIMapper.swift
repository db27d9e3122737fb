#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Turns incoming MIDI into engine events for one compiled plan, following the rack's
/// `midi` section: knobs, faders, encoders and buttons move parameters (with curves, soft
/// takeover, 14-bit pairs, NRPN/RPN); triggers fire actions; Program Change selects
/// presets; clock and taps set the tempo; notes and everything unmapped go to the units
/// that play MIDI (which filter channel and key range themselves).
///
/// Outputs, none of which blocks:
/// - engine events, handed to the `emit` closure (live: the MIDI router pushes them into
///   the `RackPlayer`'s `events` queue; offline: the file driver);
/// - `actions`: preset selection and transport for the control thread (SPSC queue);
/// - `feedback`: messages to send back to controllers (SPSC queue, drained by the MIDI
///   thread itself onto the output port).
/// Parameter changes made elsewhere come in through `noteParameterMoved` (control thread).
///
/// Thread: `handle`, `poll`, `flush` and `queueInitialFeedback` on the one thread that
/// feeds the player's `events` queue (the MIDI thread, or the offline driver);
/// `noteParameterMoved` on one control thread; `actions` popped by one control thread.
/// `handle` never allocates.
public final class MIDIMapper: @unchecked Sendable {
    public let mappings: [MIDIMapping]
    public let receivers: [Int]
    public let receiverNames: [String]
    public let sampleRate: Double
    public let followsClock: Bool
    public let programs: ProgramRouting
    /// 0-based, or nil for any channel.
    public let programChannel: Int?
    /// The rack's own tempo (before any clock or tap).
    public let rackTempo: Double
    /// `RenderPlan.generation` of the plan its unit and parameter indices refer to.
    public let generation: UInt32

    /// Preset and transport requests for the control thread. Producer: the mapper's thread.
    /// Consumer: one control thread. Live, the MIDI router's queue (`useQueues`), which
    /// outlives the mappers of the racks played one after another.
    public private(set) var actions = SPSCQueue<ControlAction>(minimumCapacity: 256)
    /// Messages for the controllers (feedback). Producer and consumer: the mapper's thread.
    public let feedback = SPSCQueue<MIDIMessage>(minimumCapacity: 2048)
    /// Changes made outside the mapper. Producer: one control thread. Consumer: the mapper's
    /// thread.
    private(set) var notices = SPSCQueue<ParameterNotice>(minimumCapacity: 4096)

    // Targets: one entry per distinct parameter that some mapping moves.
    let targetAddresses: [ParameterAddress]
    let targetMappings: [[Int]]
    var targetValues: [Float]
    var targetVersions: [Int]
    /// What a `talk` action turns (`Talk.targets`): the mapper sends a toggle when there are any.
    let talkTargets: [TalkTarget]

    // Per-mapping state.
    var synced: [Bool]
    var lastKnob: [Float]
    var relativePosition: [Float]
    var seenVersion: [Int]
    var pressed: [Bool]
    var lastFeedback: [Int]

    // Lookup tables.
    let ccIndex: [[Int]]
    let pairIndex: [[Int]]
    /// Channels (bit mask) with a 14-bit CC mapping on pair n (0…31).
    let pairChannels: [UInt16]
    let noteIndex: [[Int]]
    let parameterNumberMappings: [Int]

    // Decoding state.
    var pairs = FourteenBitPairs(slots: 16 * 33)
    /// Per channel: selected parameter number and kind (0 none, 1 NRPN, 2 RPN).
    var nrpnNumber: [Int]
    var rpnNumber: [Int]
    var selectedKind: [UInt8]
    var bankMSB: [Int]
    var bankLSB: [Int]
    public internal(set) var tempo: TempoTracker
    /// Whether the engine holds a tempo from the clock (sent, not yet withdrawn).
    public internal(set) var clockGivesTempo = false

    // What the last `handle` did (monitors read them right after).
    var outcomeStorage: [MappingOutcome]
    public internal(set) var outcomeCount = 0
    /// Messages dropped because a queue was full (feedback or actions).
    public internal(set) var droppedOutputs = 0

    /// Resolves the rack's `midi` section against `plan`. Mappings whose parameter is not
    /// in the plan (a unit nobody hears) are dropped. `presetsByDefault`: Program Change
    /// selects presets unless the rack says otherwise (`midi.programs`); the preset switcher
    /// passes true, a lone rack false (its program changes reach the synth).
    /// `midi`: a section to use instead of the rack's own (the rack's with mappings learned
    /// from the remote page added). Thread: control.
    public init(plan: RenderPlan, presetsByDefault: Bool = false, midi section: MIDIDescription? = nil) {
        let midi = section ?? plan.rack.midi
        sampleRate = plan.sampleRate
        generation = plan.generation
        receivers = plan.midiReceivers
        receiverNames = plan.midiReceivers.map { plan.unitIDs[$0] }
        followsClock = midi.clock
        programs = midi.programs ?? (presetsByDefault ? .presets : .units)
        programChannel = midi.programChannel.map { $0 - 1 }

        var list: [MIDIMapping] = []
        var addresses: [ParameterAddress] = []
        var values: [Float] = []
        for d in midi.map {
            if d.command != nil {
                if let m = Self.commandMapping(d, in: plan) { list.append(m) }
                continue
            }
            if let action = d.action {
                list.append(MIDIMapping(description: d, address: nil, spec: ParameterSpec.toggle(id: action.rawValue, name: action.rawValue, defaultOn: false)))
                continue
            }
            guard let target = d.target, let (address, spec, value) = Self.resolve(target, in: plan) else { continue }
            var m = MIDIMapping(description: d, address: address, spec: spec)
            if let i = addresses.firstIndex(of: address) {
                m.target = i
            } else {
                m.target = addresses.count
                addresses.append(address)
                values.append(value)
            }
            list.append(m)
        }
        mappings = list
        talkTargets = list.contains { $0.action == .talk } ? Talk.targets(in: plan) : []
        targetAddresses = addresses
        targetValues = values
        targetVersions = Array(repeating: 0, count: addresses.count)
        var byTarget = Array(repeating: [Int](), count: addresses.count)
        for (i, m) in list.enumerated() where m.target >= 0 { byTarget[m.target].append(i) }
        targetMappings = byTarget

        let n = list.count
        synced = list.map { $0.takeover != .pickup && $0.takeover != .scale }
        lastKnob = Array(repeating: .nan, count: n)
        relativePosition = Array(repeating: 0, count: n)
        seenVersion = Array(repeating: -1, count: n)
        pressed = Array(repeating: false, count: n)
        lastFeedback = Array(repeating: -1, count: n)

        var cc = Array(repeating: [Int](), count: 128)
        var pair = Array(repeating: [Int](), count: 32)
        var pairMask = Array(repeating: UInt16(0), count: 32)
        var note = Array(repeating: [Int](), count: 128)
        var numbers: [Int] = []
        for (i, m) in list.enumerated() {
            switch m.source {
            case .cc(let c) where m.hires && c < 32:
                pair[c].append(i)
                pairMask[c] |= m.channel.map { UInt16(1) << UInt16($0) } ?? 0xFFFF
            case .cc(let c): cc[c & 127].append(i)
            case .note(let k): note[k & 127].append(i)
            case .keys(let r): for k in r.clamped(to: 0...127) { note[k].append(i) }
            case .nrpn, .rpn: numbers.append(i)
            }
        }
        ccIndex = cc
        pairIndex = pair
        pairChannels = pairMask
        noteIndex = note
        parameterNumberMappings = numbers

        nrpnNumber = Array(repeating: -1, count: 16)
        rpnNumber = Array(repeating: -1, count: 16)
        selectedKind = Array(repeating: 0, count: 16)
        bankMSB = Array(repeating: -1, count: 16)
        bankLSB = Array(repeating: -1, count: 16)
        tempo = TempoTracker()
        rackTempo = plan.rack.tempo
        tempo.setTempo(plan.rack.tempo)
        outcomeStorage = Array(repeating: .ignored, count: 32)
    }

    /// Resolves `unit.param` (or `unit.bypass`) in `plan`: address, spec and current value.
    public static func resolve(_ target: String, in plan: RenderPlan) -> (ParameterAddress, ParameterSpec, Float)? {
        if let address = plan.address(of: target) {
            return (address, plan.spec(address), plan.parameters[address.unit].targetValue(address.parameter))
        }
        let parts = target.split(separator: ".")
        guard parts.count == 2, parts[1] == ParameterSpec.bypass.id, let u = plan.unitIndex(String(parts[0])) else {
            return nil
        }
        return (ParameterAddress(unit: u, parameter: ParameterAddress.bypassIndex), ParameterSpec.bypass, 0)
    }

    /// Continues where `previous` (the mapper of the rack playing before a preset switch)
    /// left off: the knobs' known positions, held buttons, waiting 14-bit halves, NRPN/RPN
    /// selections, bank selects, clock ticks. A knob whose parameter now sits elsewhere
    /// than the knob waits for pickup, unless its mapping says `jump`: this is "pickup
    /// after a preset change". Mappings match by control (source, channel, resolution).
    /// Thread: the mapper's thread (the MIDI thread, where `previous` lived); it may allocate.
    public func takeOver(from previous: MIDIMapper) {
        pairs = previous.pairs
        nrpnNumber = previous.nrpnNumber
        rpnNumber = previous.rpnNumber
        selectedKind = previous.selectedKind
        bankMSB = previous.bankMSB
        bankLSB = previous.bankLSB
        tempo = previous.tempo
        clockGivesTempo = previous.clockGivesTempo && followsClock
        tempo.setTempo(rackTempo)
        for (i, m) in mappings.enumerated() {
            guard let j = previous.mappings.firstIndex(where: { $0.source == m.source && $0.channel == m.channel && $0.hires == m.hires })
            else { continue }
            let knob = previous.lastKnob[j]
            lastKnob[i] = knob
            pressed[i] = previous.pressed[j]
            guard m.isAbsoluteKnob, m.target >= 0, m.takeover != .jump, !knob.isNaN else { continue }
            if abs(m.position(ofValue: targetValues[m.target]) - knob) > m.takeoverTolerance { synced[i] = false }
        }
    }

    /// Sends actions into, and reads notices from, queues that outlive this mapper (the MIDI
    /// router's), instead of its own. Thread: the mapper's thread, before its first message.
    public func useQueues(actions: SPSCQueue<ControlAction>, notices: SPSCQueue<ParameterNotice>) {
        self.actions = actions
        self.notices = notices
    }

    /// The outcomes of the last `handle` or `poll` call, in order.
    public func outcome(_ i: Int) -> MappingOutcome { outcomeStorage[i] }

    /// The parameter value the mapper believes `mapping`'s target has.
    public func currentValue(mapping: Int) -> Float? {
        let t = mappings[mapping].target
        return t >= 0 ? targetValues[t] : nil
    }

    /// True when an absolute knob has its parameter (no takeover pending).
    public func isSynced(mapping: Int) -> Bool { synced[mapping] }

    // MARK: - Entry points

    /// Maps `message` arriving at engine time `sampleTime` (`EngineEvent.now` live) and at
    /// `seconds` on a steady clock (clock and tap tempo, pairing 14-bit halves; default:
    /// `sampleTime / sampleRate`, or the monotonic clock for `.now`), handing each engine
    /// event to `emit`. Returns the first outcome (`outcome(i)` has them all).
    /// Thread: the mapper's thread. Never allocates.
    @discardableResult
    public func handle(
        _ message: MIDIMessage, at sampleTime: Int64 = EngineEvent.now, seconds: Double? = nil,
        emit: (EngineEvent) -> Void
    ) -> MappingOutcome {
        let now = seconds ?? time(of: sampleTime)
        outcomeCount = 0
        drainNotices()
        if pairs.hasPending { pairs.expire(at: now) { applyPair($0, emit: emit) } }
        let before = outcomeCount
        route(message, at: sampleTime, seconds: now, emit: emit)
        if outcomeCount == before { record(.ignored) }
        return outcomeStorage[before]
    }

    /// Lets time pass with no message: completes 14-bit halves whose partner did not come,
    /// withdraws the tempo of a clock that went quiet, takes in parameter notices (queueing
    /// their feedback). `sampleTime`: the engine time of `seconds` (offline), or
    /// `EngineEvent.now` (live). Returns how many outcomes. Thread: the mapper's thread.
    @discardableResult
    public func poll(seconds: Double? = nil, sampleTime: Int64 = EngineEvent.now, emit: (EngineEvent) -> Void) -> Int {
        outcomeCount = 0
        drainNotices()
        let now = seconds ?? monotonicSeconds()
        if pairs.hasPending { pairs.expire(at: now) { applyPair($0, emit: emit) } }
        expireClock(at: now, sampleTime: sampleTime, emit: emit)
        return outcomeCount
    }

    /// Completes every waiting 14-bit half now (end of a MIDI file). Thread: the mapper's.
    public func flush(emit: (EngineEvent) -> Void) {
        outcomeCount = 0
        pairs.flush { applyPair($0, emit: emit) }
    }

    /// When `poll` next has something to do (a 14-bit half expiring), on the monotonic clock.
    public var nextDeadline: Double? {
        guard clockGivesTempo else { return pairs.nextDeadline }
        let clock = tempo.lastTick + TempoTracker.clockTimeout
        return min(pairs.nextDeadline ?? clock, clock)
    }

    /// Tells the mapper that a parameter changed outside it: a preset load (`byPreset`:
    /// its knobs then wait for pickup unless their mapping says otherwise) or another
    /// control. Takes effect on the mapper's thread at its next `handle`/`poll`; its
    /// feedback goes out then. Never blocks; false if the queue is full.
    /// Thread: one control thread.
    @discardableResult
    public func noteParameterMoved(_ address: ParameterAddress, to value: Float, byPreset: Bool = true) -> Bool {
        notices.push(ParameterNotice(address: address, value: value, byPreset: byPreset))
    }

    /// Queues the current value of every mapping with `feedback` (on load, or when a
    /// controller reconnects). Thread: the mapper's thread.
    public func queueInitialFeedback() {
        for i in mappings.indices where mappings[i].feedback && mappings[i].target >= 0 {
            lastFeedback[i] = -1
            sendFeedback(i)
        }
    }

    // MARK: - Routing

    func route(_ message: MIDIMessage, at t: Int64, seconds: Double, emit: (EngineEvent) -> Void) {
        let ch = message.channel
        switch message.kind {
        case .system:
            system(message, at: t, seconds: seconds, emit: emit)
        case .controlChange:
            controlChange(message, at: t, seconds: seconds, emit: emit)
        case .noteOn, .noteOff:
            var taken = false
            for i in noteIndex[message.note] where mappings[i].listens(to: ch) {
                taken = true
                if case .keys = mappings[i].source {
                    keyNote(i, message, at: t, emit: emit)
                } else {
                    button(i, isPressed: message.isNoteOn, at: t, seconds: seconds, emit: emit)
                }
            }
            if !taken { forward(message, at: t, emit: emit) }
        case .programChange:
            switch programs {
            case .units: forward(message, at: t, emit: emit)
            case .ignore: record(.consumed)
            case .presets:
                if let pc = programChannel, pc != ch {
                    forward(message, at: t, emit: emit)
                    return
                }
                let bank = bankMSB[ch] < 0 ? -1 : bankMSB[ch] << 7 | max(bankLSB[ch], 0)
                fire(ControlAction(kind: .selectPreset, program: Int(message.data1), bank: bank, channel: ch))
            }
        case .pitchBend, .channelPressure, .polyPressure:
            forward(message, at: t, emit: emit)
        }
    }

    func system(_ message: MIDIMessage, at t: Int64, seconds: Double, emit: (EngineEvent) -> Void) {
        guard followsClock else { return }
        switch message.status {
        case 0xF8:
            if let bpm = tempo.clockTick(at: seconds), !tempo.stopped {
                clockGivesTempo = true
                emit(.tempo(bpm, source: .clock, at: t))
                record(.tempo, value: Float(bpm))
            } else {
                record(.consumed)
            }
        case 0xFA:
            tempo.start()
            fire(ControlAction(kind: .transportStart))
        case 0xFB:
            tempo.resume()
            fire(ControlAction(kind: .transportContinue))
        case 0xFC:
            tempo.stop()
            withdrawClock(at: t, emit: emit)
            fire(ControlAction(kind: .transportStop))
        default:
            break
        }
    }

    func controlChange(_ message: MIDIMessage, at t: Int64, seconds: Double, emit: (EngineEvent) -> Void) {
        let ch = message.channel
        let cc = message.controller
        let v = message.value
        let bit = UInt16(1) << UInt16(ch)
        // 14-bit pairs: MSB 0…31, LSB 32…63.
        let isMSB = cc < 32 && pairChannels[cc] & bit != 0
        if isMSB || (cc >= 32 && cc < 64 && pairChannels[cc - 32] & bit != 0) {
            let before = outcomeCount
            pairs.receive(slot: ch * 33 + (cc & 31), isMSB: isMSB, value: v, seconds: seconds, sampleTime: t) {
                applyPair($0, emit: emit)
            }
            if outcomeCount == before { record(.pendingHalf) }
            return
        }

        var taken = false
        for i in ccIndex[cc] where mappings[i].listens(to: ch) {
            taken = true
            let m = mappings[i]
            if m.button != nil || m.action != nil {
                button(i, isPressed: v >= 64, at: t, seconds: seconds, emit: emit)
            } else if m.mode.isRelative {
                relative(i, steps: m.mode.steps(v), at: t, emit: emit)
            } else {
                absolute(i, position: Float(v) / 127, at: t, emit: emit)
            }
        }
        if taken { return }

        switch cc {
        case 99, 98, 101, 100:
            // Parameter number selection (also passed on: the synth may use RPNs).
            if cc == 99 || cc == 98 {
                let old = max(nrpnNumber[ch], 0)
                nrpnNumber[ch] = cc == 99 ? (v << 7 | (old & 127)) : ((old & ~127) | v)
                selectedKind[ch] = 1
            } else {
                let old = max(rpnNumber[ch], 0)
                rpnNumber[ch] = cc == 101 ? (v << 7 | (old & 127)) : ((old & ~127) | v)
                selectedKind[ch] = rpnNumber[ch] == 16383 ? 0 : 2  // 127/127: RPN null
            }
            forward(message, at: t, emit: emit)
        case 6, 38, 96, 97:
            if !parameterData(message, at: t, seconds: seconds, emit: emit) { forward(message, at: t, emit: emit) }
        case 0, 32:
            if programs == .presets && (programChannel == nil || programChannel == ch) {
                if cc == 0 {
                    bankMSB[ch] = v
                    bankLSB[ch] = -1
                } else {
                    bankLSB[ch] = v
                    if bankMSB[ch] < 0 { bankMSB[ch] = 0 }
                }
                record(.consumed)
            } else {
                forward(message, at: t, emit: emit)
            }
        default:
            forward(message, at: t, emit: emit)
        }
    }

    /// Data entry (6, 38) and increment/decrement (96, 97) for the selected NRPN/RPN.
    /// Returns false when no mapping takes the selected parameter.
    func parameterData(_ message: MIDIMessage, at t: Int64, seconds: Double, emit: (EngineEvent) -> Void) -> Bool {
        let ch = message.channel
        guard selectedKind[ch] != 0 else { return false }
        let isNRPN = selectedKind[ch] == 1
        let number = isNRPN ? nrpnNumber[ch] : rpnNumber[ch]
        var any = false
        var hires = false
        for i in parameterNumberMappings where matches(i, isNRPN: isNRPN, number: number, channel: ch) {
            any = true
            hires = hires || mappings[i].hires
        }
        guard any else { return false }
        let cc = message.controller
        switch cc {
        case 96, 97:
            let steps = cc == 96 ? 1 : -1
            for i in parameterNumberMappings where matches(i, isNRPN: isNRPN, number: number, channel: ch) {
                relative(i, steps: steps, at: t, emit: emit)
            }
        default:
            if hires {
                let before = outcomeCount
                pairs.receive(slot: ch * 33 + 32, isMSB: cc == 6, value: message.value, seconds: seconds, sampleTime: t) {
                    applyPair($0, emit: emit)
                }
                if outcomeCount == before { record(.pendingHalf) }
            } else if cc == 6 {
                for i in parameterNumberMappings where matches(i, isNRPN: isNRPN, number: number, channel: ch) {
                    if mappings[i].mode.isRelative {
                        relative(i, steps: mappings[i].mode.steps(message.value), at: t, emit: emit)
                    } else {
                        absolute(i, position: Float(message.value) / 127, at: t, emit: emit)
                    }
                }
            } else {
                record(.consumed)  // LSB of a 7-bit parameter
            }
        }
        return true
    }

    func matches(_ i: Int, isNRPN: Bool, number: Int, channel: Int) -> Bool {
        let m = mappings[i]
        guard m.listens(to: channel) else { return false }
        switch m.source {
        case .nrpn(let n): return isNRPN && n == number
        case .rpn(let n): return !isNRPN && n == number
        default: return false
        }
    }

    /// A completed 14-bit value: a CC pair (slots ch·33 + 0…31) or parameter data (ch·33 + 32).
    func applyPair(_ c: FourteenBitPairs.Completed, emit: (EngineEvent) -> Void) {
        let ch = c.slot / 33
        let index = c.slot % 33
        let position = Float(c.value) / 16383
        if index < 32 {
            for i in pairIndex[index] where mappings[i].listens(to: ch) {
                absolute(i, position: position, at: c.sampleTime, emit: emit)
            }
        } else {
            guard selectedKind[ch] != 0 else { return }
            let isNRPN = selectedKind[ch] == 1
            let number = isNRPN ? nrpnNumber[ch] : rpnNumber[ch]
            for i in parameterNumberMappings where matches(i, isNRPN: isNRPN, number: number, channel: ch) && mappings[i].hires {
                absolute(i, position: position, at: c.sampleTime, emit: emit)
            }
        }
    }

    /// The clock stopped (Stop, or no tick for `TempoTracker.clockTimeout`): the next tempo
    /// source takes over (`TempoSources`).
    func withdrawClock(at t: Int64, emit: (EngineEvent) -> Void) {
        guard clockGivesTempo else { return }
        clockGivesTempo = false
        emit(.tempo(0, source: .clock, at: t))
        record(.tempo, value: 0)
    }

    /// Withdraws the clock's tempo once no tick came for `TempoTracker.clockTimeout`.
    func expireClock(at seconds: Double, sampleTime: Int64, emit: (EngineEvent) -> Void) {
        guard clockGivesTempo, seconds - tempo.lastTick > TempoTracker.clockTimeout else { return }
        tempo.timedOut()
        withdrawClock(at: sampleTime, emit: emit)
    }

    func forward(_ message: MIDIMessage, at t: Int64, emit: (EngineEvent) -> Void) {
        for r in receivers { emit(.midi(message, toUnit: r, at: t)) }
        record(.toUnits, count: receivers.count)
    }

    func fire(_ action: ControlAction) {
        if !actions.push(action) { droppedOutputs &+= 1 }
        record(.action, action: action)
    }

    func record(
        _ kind: MappingOutcome.Kind, mapping: Int = -1, value: Float = 0, count: Int = 0,
        action: ControlAction = ControlAction(kind: .nextPreset)
    ) {
        guard outcomeCount < outcomeStorage.count else { return }
        outcomeStorage[outcomeCount] = MappingOutcome(kind, mapping: mapping, value: value, count: count, action: action)
        outcomeCount += 1
    }

    func time(of sampleTime: Int64) -> Double {
        sampleTime == EngineEvent.now ? monotonicSeconds() : Double(sampleTime) / sampleRate
    }
}

/// CLOCK_MONOTONIC in seconds. Thread: any.
public func monotonicSeconds() -> Double {
    Double(monotonicNanoseconds()) / 1e9
}
