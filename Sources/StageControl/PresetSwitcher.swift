import Dispatch
import Foundation
import StageCore
import Synchronization

/// Switches racks and recalls snapshots on the control side: parses, validates and
/// compiles the next rack while the current one plays, then hands it to the `RackPlayer`.
///
/// Live, its thread is the one control thread of the run (`start`): it owns everything that
/// is not real time: loading and switching racks, releasing the racks the render thread
/// hands back (`RackPlayer.collectRetired`: only here), recalling snapshots. Other threads
/// send it messages, each through a queue of its own: the MIDI thread its `ControlAction`s
/// (program changes, next/previous; the MIDI router's `actions`), the main thread its
/// `MainRequest`s (SIGHUP, file watch: `mainRequests`); `request` is a latest-wins mailbox
/// any thread may use (tests, tools). Requests that come while a load runs are coalesced
/// to the latest (counted in `requestsCoalesced`): at most one load is in flight. A rack
/// that fails to load leaves the playing rack alone, with the errors logged as a warning.
/// Offline there is no control thread: `perform` runs on the render loop's thread.
public final class PresetSwitcher: @unchecked Sendable {
    public enum Request: Sendable, Equatable {
        /// A program change (1…128 as displayed) with its bank: a snapshot of the current
        /// rack if one is bound to it, else the setlist entry bound to it.
        case program(Int, bank: Int)
        case next
        case previous
        /// Entry `n` (0-based) of the setlist.
        case entry(Int)
        /// Read the current rack file again (SIGHUP, file watch).
        case reload
        /// Recall a snapshot of the current rack by name.
        case snapshot(String)
        /// The song's transpose to this many semitones in all, at once (a sync follower
        /// taking its leader's; the song must be transposable: `SongTranspose`).
        case transpose(Int)
    }

    /// What the main thread asks of the control thread.
    public enum MainRequest: Sendable, BitwiseCopyable {
        /// Read the current rack file again (SIGHUP, `--watch`).
        case reload
    }

    public let setlist: Setlist
    public let player: RackPlayer
    /// The setlist entry playing (written by the control thread). Thread: any.
    public var currentIndex: Int { index.load(ordering: .acquiring) }
    let index: Atomic<Int>
    /// Producer: the main thread. Consumer: the control thread.
    public let mainRequests = SPSCQueue<MainRequest>(minimumCapacity: 64)
    /// `requestTranspose`'s mailbox: the transpose in all, and the song beat of the bar line
    /// it lands on (nil: at once). Any thread stores, the control thread takes.
    let wantedTranspose = Locked<(total: Int, bar: Int?)?>(nil)
    /// `requestSection`'s mailbox: the jump's way << 32 | the bar's song beat (0: empty).
    /// Any thread stores, the control thread takes.
    let wantedSection = Atomic<Int>(0)
    /// `requestSnapshot`'s mailbox: a snapshot's name and the song beat of its bar line.
    /// Any thread stores, the control thread takes.
    let wantedSnapshot = Locked<(name: String, bar: Int)?>(nil)
    /// Whether snapshot recalls wait for the next bar line of the song's clock
    /// (`HeldSnapshots`): a sync leader's do, so that its followers recall on the same one.
    /// Set once, before `start` (`SyncNode.start`). Thread: main, then control reads.
    public var recallsOnBarLine = false
    /// Requests replaced by a later one before they were carried out.
    public let requestsCoalesced = Atomic<Int>(0)
    /// Where failed loads are reported (default: `log`). Thread: the switcher's.
    public var warn: (@Sendable (String) -> Void)?
    /// The read-only meters (gain reduction) of the rack playing, by unit id: a mailbox the
    /// control thread fills at each switch, the main thread reads for `--status`/`--meters`
    /// (each value is a relaxed atomic the unit stores once per block). Thread: any.
    public var unitMeters: [UnitMeterReading] { meterList.withLock { $0 } }
    let meterList = Locked<[UnitMeterReading]>([])
    /// The playing rack's players and loopers (`UnitTransport`), published at each switch.
    /// Thread: any.
    public var unitTransports: [UnitTransportReading] { transportList.withLock { $0 } }
    let transportList = Locked<[UnitTransportReading]>([])
    /// Units with read-only values (LV2 control outputs), as `--meters`/`--status` show them.
    public var unitReadouts: [UnitReadoutReading] { readoutList.withLock { $0 } }
    let readoutList = Locked<[UnitReadoutReading]>([])
    /// The playing rack's song clock (its sections; nil: none), published at each switch:
    /// its `publishedNames` for `--status` and the meters. Thread: any.
    public var songClock: SongClock? { clockHolder.withLock { $0 } }
    let clockHolder = Locked<SongClock?>(nil)
    /// The plan most recently handed to the player. Thread: the switcher's thread.
    public private(set) var currentPlan: RenderPlan
    /// The mapper of `currentPlan`, for the thread that maps MIDI (offline).
    public private(set) var mapper: MIDIMapper
    /// Called after every switch or recall with the new plan (MIDI layer: new mappings,
    /// soft takeover). Thread: the switcher's thread.
    public var onChange: (@Sendable (RenderPlan, Request) -> Void)?
    /// Called after a snapshot recall (MIDI layer: knobs wait for pickup, feedback goes out).
    /// Thread: the switcher's thread.
    public var onRecall: (@Sendable (RenderPlan, SnapshotDescription) -> Void)?
    /// Called on every turn of the control thread, before its requests (the remote's
    /// parameter state takes its commands and MIDI's changes). Set before `start`.
    /// Thread: the switcher's thread.
    public var onTick: (@Sendable () -> Void)?
    /// Asked before each song's rack is handed to the player (its index): the shared beat
    /// the switch waits for (`RackPlayer.holdNextSwitch`), nil for at once. A band's boxes
    /// in step (`StageSync`) set it. Set before `start`. Thread: the switcher's thread.
    public var switchBeat: (@Sendable (Int) -> Double?)?
    /// Whether a loaded rack renders one silent block here (then reset) before the render
    /// thread gets it (`RenderEngine.warmUp`): its first block there then finds its memory
    /// warm (the switch block measured 105–142 µs without, Benchmarks/latency/README.md).
    /// True by default; false only to compare. Thread: the switcher's thread.
    public var warmsNewRacks: Bool {
        get { loader.warms }
        set { loader.warms = newValue }
    }
    /// How every rack is made ready (the same as the first rack of the run). Thread: the switcher's.
    public private(set) var loader: RackLoader
    /// The engine most recently handed to the player (the first: the player's own at
    /// `init`): a panic's parked units are reset through it. Released only here. Thread:
    /// the switcher's thread.
    public private(set) var currentEngine: RenderEngine
    let log: @Sendable (String) -> Void

    let pending = Locked<Request?>(nil)
    let wake = DispatchSemaphore(value: 0)
    let running = Atomic<Bool>(false)
    let loadsInFlight = Atomic<Int>(0)
    /// The most loads ever in flight at once (for tests: must stay 1).
    public let maxLoadsInFlight = Atomic<Int>(0)
    public let loadsCompleted = Atomic<Int>(0)
    var thread: StageThread?

    /// `firstPlan` is the plan already playing (entry `index` of `setlist`).
    public init(
        setlist: Setlist, index: Int, player: RackPlayer, firstPlan: RenderPlan, registry: UnitRegistry,
        options: GraphCompiler.Options, log: @escaping @Sendable (String) -> Void
    ) {
        self.setlist = setlist
        self.player = player
        self.index = Atomic(index)
        currentPlan = firstPlan
        meterList.withLock { $0 = UnitMeterReading.all(in: firstPlan) }
        transportList.withLock { $0 = UnitTransportReading.all(in: firstPlan) }
        readoutList.withLock { $0 = UnitReadoutReading.all(in: firstPlan) }
        clockHolder.withLock { $0 = player.current.songClock }
        mapper = MIDIMapper(plan: firstPlan, presetsByDefault: true)
        loader = RackLoader(registry: registry, options: options)
        currentEngine = player.current  // the player is idle: no thread renders yet
        self.log = log
    }

    /// Asks for a switch; replaces any request not yet started. Thread: any.
    public func request(_ r: Request) {
        pending.withLock { $0 = r }
        wake.signal()
    }

    /// Asks for a section jump on the bar line at song beat `bar` (a sync leader's; the
    /// first bar line after, if that has passed), in a mailbox of its own as
    /// `requestTranspose`. The latest wins. Thread: any.
    public func requestSection(_ jump: SectionJump, atBar bar: Int) {
        wantedSection.store(Int(jump.rawValue & 3) << 32 | Int(UInt32(bitPattern: Int32(clamping: bar))), ordering: .releasing)
        wake.signal()
    }

    /// Asks for snapshot `name` of the song playing on the bar line at song beat `bar` (a
    /// sync leader's; the first bar line after, if that has passed), in a mailbox of its
    /// own as `requestSection`. The latest wins. Thread: any.
    public func requestSnapshot(_ name: String, atBar bar: Int) {
        wantedSnapshot.withLock { $0 = (name, bar) }
        wake.signal()
    }

    /// Asks for the song's transpose in all (`Request.transpose`), in a mailbox of its own:
    /// it neither replaces nor is replaced by a song or snapshot request (a sync follower
    /// catching up asks for both at once). The latest wins. Thread: any.
    /// With `bar`, on the bar line at that song beat (a sync leader's; the first bar line
    /// after, if that has passed).
    public func requestTranspose(_ semitones: Int, atBar bar: Int? = nil) {
        wantedTranspose.withLock { $0 = (semitones, bar) }
        wake.signal()
    }

    /// Starts the control thread: it waits for a message (`wakeUp`, or 20 ms at most, so the
    /// racks the render thread hands back are released soon), takes the latest request from each
    /// source, carries it out, and collects retired racks. `midiActions`: the MIDI thread's
    /// queue (this thread becomes its consumer). Thread: main, once.
    public func start(midiActions: SPSCQueue<ControlAction>? = nil) throws(StageThread.StartError) {
        running.store(true, ordering: .releasing)
        thread = try StageThread(.init(name: "stagerack-control")) { [self] in
            while running.load(ordering: .acquiring) {
                _ = wake.wait(timeout: .now() + .milliseconds(20))
                onTick?()
                if currentEngine.resetParkedUnits() { log("panic: LV2 plugins reset") }
                if let r = nextRequest(midiActions: midiActions) { perform(r, at: EngineEvent.now) }
                if let t = wantedTranspose.withLock({ w in defer { w = nil }; return w }) {
                    if let bar = t.bar { holdTranspose(t.total, atBar: bar) } else { perform(.transpose(t.total), at: EngineEvent.now) }
                }
                let j = wantedSection.exchange(0, ordering: .acquiringAndReleasing)
                if j != 0 { sendSectionJump(j) }
                if let s = wantedSnapshot.withLock({ w in defer { w = nil }; return w }) { holdRecall(s.name, atBar: s.bar) }
                player.collectRetired()
            }
            player.collectRetired()
        }
    }

    /// The latest request waiting in the mailbox and the queues. Thread: control.
    func nextRequest(midiActions: SPSCQueue<ControlAction>?) -> Request? {
        var next = pending.withLock { value -> Request? in
            let v = value
            value = nil
            return v
        }
        func take(_ r: Request) {
            if next != nil { requestsCoalesced.add(1, ordering: .relaxed) }
            next = r
        }
        while let a = midiActions?.pop() {
            switch a.kind {
            case .selectPreset: take(.program(Int(a.program) + 1, bank: max(Int(a.bank), 0)))
            case .nextPreset: take(.next)
            case .previousPreset: take(.previous)
            default: break  // transport: nothing follows it yet
            }
        }
        while let r = mainRequests.pop() {
            switch r {
            case .reload: take(.reload)
            }
        }
        return next
    }

    /// Stops the control thread and waits for it; the caller's thread may then collect the
    /// last retired racks (after `player.handOverRenderThread()`-style hand-over: see
    /// `RackPlayer`). Thread: main.
    public func stop() {
        guard thread != nil, running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        thread?.join()  // joined, not left to leak
        thread = nil
    }

    /// Wakes the control thread (after pushing to `mainRequests`). Thread: any.
    public func wakeUp() { wake.signal() }

    /// Carries out one request now; returns true if the sound changed. `time` is the player
    /// time for snapshot morphs (`EngineEvent.now` live). Thread: the switcher's thread
    /// (offline: the render loop's thread).
    @discardableResult
    public func perform(_ r: Request, at time: Int64) -> Bool {
        let n = loadsInFlight.add(1, ordering: .acquiringAndReleasing).newValue
        _ = maxLoadsInFlight.max(n, ordering: .relaxed)
        defer { loadsInFlight.subtract(1, ordering: .acquiringAndReleasing) }
        switch r {
        case .program(let program, let bank):
            if let snapshot = currentPlan.rack.snapshots.first(where: { $0.program == program }) {
                return recall(snapshot, at: time, request: r)
            }
            guard let index = setlist.entry(program: program, bank: bank) else {
                log("program \(program) (bank \(bank)) selects nothing in \(setlist.name.isEmpty ? "this setlist" : setlist.name)")
                return false
            }
            return load(index, request: r)
        case .snapshot(let name):
            guard let snapshot = currentPlan.rack.snapshots.first(where: { $0.name == name }) else {
                log("no snapshot \"\(name)\" in the current rack")
                return false
            }
            return recall(snapshot, at: time, request: r)
        case .transpose(let semitones):
            guard currentEngine.songClock?.transposer != nil else {
                log("transpose \(semitones): this song cannot be transposed here")
                return false
            }
            var e = EngineEvent.transpose(to: Int32(semitones))
            e.generation = currentPlan.generation
            log("transpose \(semitones > 0 ? "+" : "")\(semitones)" + (send(e) ? "" : " not taken: the render thread took nothing for \(Self.sendPatienceMilliseconds) ms"))
            return true
        case .next: return load(min(currentIndex + 1, setlist.entries.count - 1), request: r)
        case .previous: return load(max(currentIndex - 1, 0), request: r)
        case .entry(let n):
            guard setlist.entries.indices.contains(n) else { return false }
            return load(n, request: r)
        case .reload: return load(currentIndex, request: r, force: true)
        }
    }

    /// The section jump `requestSection` packed into `bits`, to the engine. Thread: control.
    func sendSectionJump(_ bits: Int) {
        guard let jump = SectionJump(rawValue: Int32(bits >> 32)) else { return }
        let bar = Int(Int32(bitPattern: UInt32(truncatingIfNeeded: bits)))
        var e = EngineEvent.section(jump, atBar: bar)
        e.generation = currentPlan.generation
        let way = jump == .next ? "the next section" : "the section again"
        log("section jump: \(way) at song beat \(bar)" + (send(e) ? "" : " not taken: the render thread took nothing for \(Self.sendPatienceMilliseconds) ms"))
    }

    /// The song's transpose to `total` in all on the bar line at song beat `bar` (a sync
    /// leader's, told). Thread: control.
    func holdTranspose(_ total: Int, atBar bar: Int) {
        guard currentEngine.songClock?.transposer != nil else { return log("transpose \(total): this song cannot be transposed here") }
        var e = EngineEvent.transpose(to: Int32(total), atBar: bar)
        e.generation = currentPlan.generation
        let taken = send(e)
        log("transpose \(total > 0 ? "+" : "")\(total) on the bar line at song beat \(bar)"
            + (taken ? "" : " not taken: the render thread took nothing for \(Self.sendPatienceMilliseconds) ms"))
    }

    /// Whether a recall now waits for a bar line: `recallsOnBarLine`, and the song playing
    /// has a clock that holds the rack's snapshots. Thread: control.
    public var holdsRecalls: Bool { recallsOnBarLine && currentEngine.songClock?.heldSnapshots != nil }

    /// Snapshot `name` held for the bar line at song beat `bar`, or (nil) the next bar line
    /// (`HeldSnapshots`); then `onRecall`, as for a recall at once. Thread: control.
    @discardableResult
    func holdRecall(_ name: String, atBar bar: Int?) -> Bool {
        guard let index = currentPlan.rack.snapshots.firstIndex(where: { $0.name == name }), currentEngine.songClock?.heldSnapshots != nil
        else {
            log("no snapshot \"\(name)\" to recall on a bar line in the current rack")
            return false
        }
        var e = bar.map { EngineEvent.snapshot(index, atBar: $0) } ?? EngineEvent.snapshot(index)
        e.generation = currentPlan.generation
        let when = bar.map { "on the bar line at song beat \($0)" } ?? "on the next bar line"
        log("snapshot \"\(name)\" \(when)" + (send(e) ? "" : " not taken: the render thread took nothing for \(Self.sendPatienceMilliseconds) ms"))
        onRecall?(currentPlan, currentPlan.rack.snapshots[index])
        return true
    }

    func recall(_ snapshot: SnapshotDescription, at time: Int64, request: Request) -> Bool {
        if holdsRecalls { return holdRecall(snapshot.name, atBar: nil) }
        let ramp = Int32(snapshot.morphSeconds * currentPlan.sampleRate)
        var lost: [String] = []
        for (target, value) in snapshot.values {
            guard let address = currentPlan.address(of: target) else { continue }
            var e = EngineEvent.setParameter(address, value, at: time)
            e.rampFrames = ramp
            e.generation = currentPlan.generation
            if !send(e) { lost.append(target) }
        }
        log("snapshot \"\(snapshot.name)\" (morph \(formatNumber(snapshot.morphSeconds * 1000)) ms)")
        if !lost.isEmpty {
            (warn ?? log)("snapshot \"\(snapshot.name)\": \(lost.count) value(s) not set, the render thread took none for "
                + "\(Self.sendPatienceMilliseconds) ms (is the audio thread stalled?): \(lost.joined(separator: ", "))")
        }
        onRecall?(currentPlan, snapshot)
        return true
    }

    /// How long `send` waits for room in the player's queue, which the render thread
    /// empties every block: a full queue means a stalled audio thread.
    static let sendPatienceMilliseconds = 200

    /// Pushes `e` into the player's control queue, waiting for room (1 ms at a time, at most
    /// `sendPatienceMilliseconds`) rather than dropping it; false if it never came.
    /// Thread: the switcher's thread (the queue's one producer).
    func send(_ e: EngineEvent) -> Bool {
        for _ in 0..<Self.sendPatienceMilliseconds {
            if player.controlEvents.push(e) { return true }
            usleep(1000)
        }
        return player.controlEvents.push(e)
    }

    func load(_ index: Int, request: Request, force: Bool = false) -> Bool {
        if index == currentIndex && !force { return false }
        let entry = setlist.entries[index]
        let started = monotonicNanoseconds()
        do {
            let engine = try loader.song(index, of: setlist)
            let plan = engine.plan
            if let switchBeat { player.holdNextSwitch(untilBeat: switchBeat(index)) }
            guard player.submit(engine) else {
                player.holdNextSwitch(untilBeat: nil)
                log("a switch is still in progress; \(entry.name) skipped")
                return false
            }
            self.index.store(index, ordering: .releasing)
            currentEngine = engine
            currentPlan = plan
            meterList.withLock { $0 = UnitMeterReading.all(in: plan) }
            transportList.withLock { $0 = UnitTransportReading.all(in: plan) }
            readoutList.withLock { $0 = UnitReadoutReading.all(in: plan) }
            clockHolder.withLock { $0 = engine.songClock }
            mapper = MIDIMapper(plan: plan, presetsByDefault: true)
            loadsCompleted.add(1, ordering: .relaxed)
            let ms = Double(monotonicNanoseconds() - started) / 1e6
            log("switched to \(entry.name) (\(index + 1)/\(setlist.entries.count)), loaded in \(formatNumber((ms * 10).rounded() / 10)) ms")
            onChange?(plan, request)
            return true
        } catch {
            (warn ?? log)("cannot switch to \(entry.name); the current rack keeps playing:\n" + error.diagnostics.map { "  \($0)" }.joined(separator: "\n"))
            return false
        }
    }
}

/// A unit's read-only meter, as the main thread reads it. Thread: any (the unit stores its
/// value atomically).
public struct UnitMeterReading: @unchecked Sendable {
    public let unitID: String
    public let meter: any UnitMeter
    public var value: Float { meter.meterValue }

    /// Every unit of `plan` with a meter, in the plan's order.
    static func all(in plan: RenderPlan) -> [UnitMeterReading] {
        plan.units.indices.compactMap { u in
            (plan.units[u] as? any UnitMeter).map { UnitMeterReading(unitID: plan.unitIDs[u], meter: $0) }
        }
    }
}

/// A unit's read-only values (`UnitReadout`), as the main thread reads them. Thread: any.
public struct UnitReadoutReading: @unchecked Sendable {
    public let unitID: String
    public let unit: any UnitReadout
    /// `unit: name value, …`.
    public var text: String { unit.readoutText(unitID: unitID) }

    /// Every unit of `plan` with values to show, in the plan's order.
    public static func all(in plan: RenderPlan) -> [UnitReadoutReading] {
        plan.units.indices.compactMap { u in
            (plan.units[u] as? any UnitReadout).flatMap {
                $0.readouts.isEmpty ? nil : UnitReadoutReading(unitID: plan.unitIDs[u], unit: $0)
            }
        }
    }
}

/// A unit's transport (a player, a looper), as the main thread reads it. Thread: any (the
/// unit stores its readings atomically).
public struct UnitTransportReading: @unchecked Sendable {
    /// The song's track's position in seconds while it plays, among `readings` (nil: none
    /// playing): what the lyrics' timed lines follow. Thread: any.
    public static func songTrackSeconds(_ readings: [UnitTransportReading]) -> Double? {
        guard let t = readings.first(where: \.isSongTrack)?.transport, t.transportState == "playing" else { return nil }
        return t.positionSeconds
    }

    public let unitID: String
    public let transport: any UnitTransport
    /// Whether it plays the setlist song's `track` (`SongTimeline.trackPlayer`).
    public var isSongTrack = false

    /// Every unit of `plan` with a transport, in the plan's order.
    static func all(in plan: RenderPlan) -> [UnitTransportReading] {
        plan.units.indices.compactMap { u in
            (plan.units[u] as? any UnitTransport).map {
                UnitTransportReading(unitID: plan.unitIDs[u], transport: $0, isSongTrack: plan.unitIDs[u] == plan.rack.timeline.trackPlayer)
            }
        }
    }
}
