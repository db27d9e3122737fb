import Synchronization

/// Engines alive in the process (made on the control thread, released there): a leak or a
/// double release shows in this count. Thread: any.
public let renderEnginesAlive = Atomic<Int>(0)

/// Renders a `RenderPlan` block by block: applies queued events at their frames, smooths
/// parameters, runs each step, and leaves the result in the plan's host output.
///
/// Thread: `render` on the render thread only; `init` on the control thread. Live, a
/// `RackPlayer` feeds it with `inject` on the render thread itself; a driver that plays one
/// engine directly (tests, benchmarks) may use `events` and `controlEvents` instead.
public final class RenderEngine: @unchecked Sendable {
    public let plan: RenderPlan
    /// Events in time order for an engine played directly (a `RackPlayer` uses its own
    /// queues and `inject`). Producer: the one thread that drives it (tests, benchmarks).
    /// Consumer: the render thread.
    public let events: SPSCQueue<EngineEvent>
    /// As `events`, from a second thread. Producer: one control thread. Consumer: render.
    public let controlEvents: SPSCQueue<EngineEvent>
    /// Frames rendered since start: the absolute time of the next block's first frame.
    public private(set) var sampleTime: Int64 = 0
    public private(set) var tempo: Double
    /// What the output safety stage fixed so far.
    public var safety: SafetyCounters { safetyCounters.pointee }
    /// Blocks in which events were due but the per-block list was full: they waited in
    /// their queue for the next block (nothing is dropped).
    public private(set) var deferredEvents = 0

    let safetyCounters: UnsafeMutablePointer<SafetyCounters>
    /// Events the render thread itself adds (a rack player routing events, notes-off at a
    /// switch); consumed by the next `render`. As large as the per-block list.
    let injected: UnsafeMutablePointer<EngineEvent>
    let injectedCapacity: Int
    var injectedCount = 0
    let blockEvents: UnsafeMutablePointer<EngineEvent>
    let blockEventCapacity: Int
    let unitEvents: UnsafeMutablePointer<UnitEvent>
    let unitEventCapacity: Int
    /// `unit.bypass`: crossfades of each unit's output toward its input.
    let bypass: UnitBypass
    /// Per-step duration of the last instrumented blocks, in nanoseconds (benchmarks).
    public let stepNanoseconds: UnsafeMutablePointer<UInt64>
    public var measuresSteps = false

    public init(plan: RenderPlan, queueCapacity: Int = 4096, eventsPerBlock: Int = 1024) {
        self.plan = plan
        events = SPSCQueue(minimumCapacity: queueCapacity)
        controlEvents = SPSCQueue(minimumCapacity: 1024)
        tempo = plan.rack.tempo
        safetyCounters = .allocate(capacity: 1)
        safetyCounters.initialize(to: SafetyCounters())
        blockEventCapacity = eventsPerBlock
        blockEvents = .allocate(capacity: eventsPerBlock)
        injectedCapacity = eventsPerBlock
        injected = .allocate(capacity: eventsPerBlock)
        unitEventCapacity = eventsPerBlock
        unitEvents = .allocate(capacity: eventsPerBlock)
        bypass = UnitBypass(unitCount: plan.units.count, sampleRate: plan.sampleRate, maxFrames: plan.maxFrames)
        stepNanoseconds = .allocate(capacity: max(plan.steps.count, 1))
        stepNanoseconds.initialize(repeating: 0, count: max(plan.steps.count, 1))
        renderEnginesAlive.add(1, ordering: .relaxed)
    }

    deinit {
        renderEnginesAlive.subtract(1, ordering: .relaxed)
        safetyCounters.deallocate()
        blockEvents.deallocate()
        injected.deallocate()
        unitEvents.deallocate()
        stepNanoseconds.deallocate()
    }

    /// Renders `frameCount` ≤ `plan.maxFrames` frames: reads `plan.hostInput`, writes
    /// `plan.hostOutput`. Never allocates, locks or logs. Thread: render.
    public func render(frameCount: Int) {
        precondition(frameCount > 0 && frameCount <= plan.maxFrames, "block larger than the plan was prepared for")
        let blockEnd = sampleTime + Int64(frameCount)
        let count = gatherEvents(before: blockEnd)

        // Global events first (they are not per unit).
        for e in 0..<count where blockEvents[e].kind == .tempo {
            tempo = Double(blockEvents[e].value)
        }
        for e in 0..<count where blockEvents[e].kind == .resetAll {
            plan.resetUnits()
        }

        let steps = plan.steps
        let hostInput = plan.hostInput
        for s in 0..<steps.count {
            let step = steps[s]
            let u = step.unit
            let bank = plan.parameters[u]
            // Parameters: fill per-sample values, applying this unit's events at their frames.
            bank.beginBlock()
            var unitEventCount = 0
            for e in 0..<count where Int(blockEvents[e].unit) == u {
                let event = blockEvents[e]
                // `EngineEvent.now` (Int64.min) and anything late apply at frame 0.
                let offset = event.sampleTime <= sampleTime ? 0 : Int(event.sampleTime - sampleTime)
                switch event.kind {
                case .parameter:
                    bank.fill(upTo: offset)
                    bank.setTarget(Int(event.parameter), event.value, rampFrames: Int(event.rampFrames))
                case .midi where unitEventCount < unitEventCapacity:
                    unitEvents[unitEventCount] = UnitEvent(frameOffset: Int32(offset), message: event.message)
                    unitEventCount += 1
                default:
                    break
                }
            }
            bank.fill(upTo: frameCount)

            for a in step.adapters { adapt(a, frames: frameCount) }
            let context = RenderContext(
                frameCount: frameCount, sampleTime: sampleTime, sampleRate: plan.sampleRate, tempo: tempo,
                inputs: step.inputs, outputs: step.outputs, parameters: bank.renderValues,
                events: UnsafeBufferPointer(start: unitEvents, count: unitEventCount), hostInput: hostInput,
                hostOutput: step.hostOutput, safety: safetyCounters)
            if measuresSteps {
                let t0 = monotonicNanoseconds()
                plan.units[u].render(context)
                stepNanoseconds[s] &+= monotonicNanoseconds() &- t0
            } else {
                plan.units[u].render(context)
            }
            bypass.apply(unit: u, step: step, frames: frameCount, events: blockEvents, count: count, blockStart: sampleTime)
        }
        sampleTime = blockEnd
    }

    /// Adds an event for the next block (times before it apply at its first frame); false
    /// when the block's list is full (the caller keeps the event for the next block).
    /// Thread: render (the thread that calls `render`).
    @inline(__always)
    @discardableResult
    public func inject(_ event: EngineEvent) -> Bool {
        guard injectedCount < injectedCapacity else { return false }
        injected[injectedCount] = event
        injectedCount += 1
        return true
    }

    /// Sends sustain-off and all-notes-off to every unit that plays MIDI, so held notes end
    /// with their own release. Thread: render.
    public func releaseAllNotes() {
        for r in plan.midiReceivers {
            for channel in 0..<16 {
                inject(.midi(.controlChange(channel: channel, controller: 64, value: 0), toUnit: r))
                inject(.midi(.controlChange(channel: channel, controller: 123, value: 0), toUnit: r))
            }
        }
    }

    /// Collects the events due before `blockEnd` into `blockEvents` in time order: those of
    /// both queues while there is room (the rest stay queued for the next block), then the
    /// injected ones (room is always kept for them). Returns how many. Thread: render.
    @inline(__always)
    private func gatherEvents(before blockEnd: Int64) -> Int {
        var count = 0
        let limit = blockEventCapacity - injectedCount
        let eventsFull = take(from: events, before: blockEnd, limit: limit, count: &count)
        let controlFull = take(from: controlEvents, before: blockEnd, limit: limit, count: &count)
        if eventsFull || controlFull { deferredEvents &+= 1 }
        var k = 0
        while k < injectedCount {
            blockEvents[count] = injected[k]
            count += 1
            k += 1
        }
        injectedCount = 0
        // Insertion sort by time keeps each source's own order (stable), linear when sorted.
        var i = 1
        while i < count {
            let e = blockEvents[i]
            var j = i
            while j > 0 && blockEvents[j - 1].sampleTime > e.sampleTime {
                blockEvents[j] = blockEvents[j - 1]
                j -= 1
            }
            blockEvents[j] = e
            i += 1
        }
        return count
    }

    /// Moves `queue`'s events due before `blockEnd` into `blockEvents` while there is room;
    /// true when some had to stay. Thread: render.
    @inline(__always)
    private func take(from queue: SPSCQueue<EngineEvent>, before blockEnd: Int64, limit: Int, count: inout Int) -> Bool {
        while let e = queue.peek(), e.sampleTime < blockEnd {
            guard count < limit else { return true }
            _ = queue.pop()
            blockEvents[count] = e
            count += 1
        }
        return false
    }

    /// The bypass value (0…1) unit `u` is heading to. Thread: render (or control when idle).
    public func bypassTarget(unit u: Int) -> Float { bypass.targetValue(u) }

    @inline(__always)
    private func adapt(_ a: AdapterStep, frames: Int) {
        switch a.kind {
        case .monoToStereo:
            let src = a.source[0]
            a.destination[0].update(from: src, count: frames)
            a.destination[1].update(from: src, count: frames)
        case .stereoToMono:
            let l = a.source[0]
            let r = a.source[1]
            let out = a.destination[0]
            for i in 0..<frames { out[i] = 0.5 * (l[i] + r[i]) }
        }
    }

    /// Starts again from time 0 with every unit's state cleared. Thread: control while not
    /// rendering.
    public func reset() {
        plan.resetUnits()
        sampleTime = 0
        tempo = plan.rack.tempo
        safetyCounters.pointee = SafetyCounters()
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// CLOCK_MONOTONIC in nanoseconds. Thread: any (no allocation).
@inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}
