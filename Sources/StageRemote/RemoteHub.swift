import StageCore
import StageControl
import Synchronization

/// The remote's side of the control thread: it owns the one `ParameterState` that MIDI,
/// OSC and the web page change and observe, carries out the servers' commands, and
/// publishes what they show.
///
/// - In: `fromOSC` and `fromWeb` (each: producer the server's thread, consumer the control
///   thread), and the MIDI router's `parameterChanges` (producer MIDI, consumer control).
/// - Out: remote parameter changes go to the render thread as engine events through the
///   player's `controlEvents` (the control thread is its one producer) and to the MIDI
///   mapper through its notices (`tellMIDI`: soft takeover, feedback to controllers);
///   songs and snapshots go to the preset switcher (`perform`, on this same thread).
/// - Published: `view()` (control → servers) and `meters()` (main → servers): mailboxes
///   under a lock that the render thread never touches, so no server can make it wait.
///
/// Thread: `tick`, `planChanged`, `recalled` on the control thread; `view`, `meters` on
/// any thread but the render thread; `publishMeters` on the main thread.
public final class RemoteHub: @unchecked Sendable {
    /// Commands from the OSC server. Producer: the OSC thread. Consumer: the control thread.
    public let fromOSC = SPSCQueue<RemoteCommand>(minimumCapacity: 1024)
    /// Commands from the web server. Producer: the web thread. Consumer: the control thread.
    public let fromWeb = SPSCQueue<RemoteCommand>(minimumCapacity: 1024)
    /// Commands refused because their rack no longer plays, or their target is gone.
    public let commandsRefused = Atomic<Int>(0)
    public let commandsDone = Atomic<Int>(0)

    // Control thread.
    var current: RemoteView
    let midiChanges: SPSCQueue<ParameterChange>?
    let engineEvents: SPSCQueue<EngineEvent>
    let tellMIDI: @Sendable (ParameterAddress, Float) -> Void
    let perform: @Sendable (PresetSwitcher.Request) -> Void
    let canBypass: @Sendable (String) -> Bool

    /// The plan playing (MIDI learn builds its mappers from it).
    var plan: RenderPlan
    /// MIDI learn from the page and the mappings it made (`RemoteHub+Learn.swift`).
    var learn = PageLearn()
    /// The values as the rack file has them (since the last save): "save" writes the others.
    var savedBaseline: ParameterState
    /// The snapshot name of the save waiting (`.some(nil)`: into the rack file). Web → control.
    let saveNames = Locked<String??>(nil)
    /// Snapshots saved from the page into the rack playing (not in its plan until reloaded).
    var addedSnapshots: [String] = []
    var lastSave = -Double.infinity
    /// Writes a save into the rack file (or its writable copy); the path written, or why
    /// not. Set by `play` before the control thread starts. Thread: control.
    public var saveRack: (@Sendable (RackSaveRequest) -> Result<String, RemoteError>)?
    /// The soundcheck from the page (`RemoteHub+Soundcheck.swift`): the player's input tap
    /// (nil: no live input) and the analysis of a take (mono samples, their rate, the rack
    /// file playing), run on a thread of its own. Set by `play` before the control thread
    /// starts.
    public var soundcheckTap: InputTap?
    public var analyseSoundcheck: (@Sendable ([Float], Double, String) -> Result<SoundcheckOffer, RemoteError>)?
    var soundcheck = PageSoundcheck()

    let published: Locked<RemoteView>
    let meterBox = Locked<RemoteMeters>(RemoteMeters())
    /// Wakes the control thread after a push into `fromOSC`/`fromWeb`. Set before the
    /// servers start. Thread: any.
    public var wakeControl: @Sendable () -> Void = {}
    /// Called on the control thread after each publication (wakes the web server). Set
    /// before the control thread starts. Thread: control.
    public var onPublish: @Sendable () -> Void = {}

    /// `engineEvents`: the player's `controlEvents`; `midiChanges`: the MIDI router's
    /// `parameterChanges`; `tellMIDI`: pushes a notice to the MIDI mapper (byPreset false);
    /// `perform`: the preset switcher's `perform` (this hub's thread is the switcher's).
    /// Thread: control (or main before the control thread starts).
    public init(
        plan: RenderPlan, songs: [String], song: Int, engineEvents: SPSCQueue<EngineEvent>,
        midiChanges: SPSCQueue<ParameterChange>?, canBypass: @escaping @Sendable (String) -> Bool,
        tellMIDI: @escaping @Sendable (ParameterAddress, Float) -> Void,
        perform: @escaping @Sendable (PresetSwitcher.Request) -> Void
    ) {
        current = RemoteView(plan: plan, songs: songs, song: song, canBypass: canBypass)
        self.plan = plan
        savedBaseline = current.state
        published = Locked(current)
        self.engineEvents = engineEvents
        self.midiChanges = midiChanges
        self.canBypass = canBypass
        self.tellMIDI = tellMIDI
        self.perform = perform
    }

    /// What the servers show now. Thread: any but the render thread.
    public func view() -> RemoteView { published.withLock { $0 } }

    /// The meters published last. Thread: any but the render thread.
    public func meters() -> RemoteMeters { meterBox.withLock { $0 } }

    /// Publishes a new meter reading (its serial is counted here). Thread: main.
    public func publishMeters(_ m: RemoteMeters) {
        meterBox.withLock { box in
            let serial = box.serial + 1
            box = m
            box.serial = serial
        }
    }

    /// One turn of the control thread: MIDI's changes, then the servers' commands; publishes
    /// when anything changed. Thread: control.
    public func tick() {
        var changed = false
        if let midiChanges {
            while let c = midiChanges.pop() {
                guard c.generation == current.state.generation else { continue }
                if current.state.set(c.address, c.value) != nil { changed = true }
            }
        }
        changed = learnTick() || changed
        changed = soundcheckTick() || changed
        for queue in [fromOSC, fromWeb] {
            while let c = queue.pop() { changed = apply(c) || changed }
        }
        if changed { publish() }
    }

    /// Carries out one command. Thread: control.
    func apply(_ c: RemoteCommand) -> Bool {
        switch c.kind {
        case .parameter:
            guard c.generation == current.state.generation, let v = current.state.set(c.address, c.value) else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
            var e = EngineEvent.setParameter(c.address, v)
            e.generation = current.state.generation
            if !engineEvents.push(e) {
                commandsRefused.add(1, ordering: .relaxed)
                return true
            }
            tellMIDI(c.address, v)
        case .song: perform(.entry(Int(c.index)))
        case .next: perform(.next)
        case .previous: perform(.previous)
        case .snapshot:
            guard c.generation == current.state.generation, current.snapshots.indices.contains(Int(c.index)) else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
            perform(.snapshot(current.snapshots[Int(c.index)]))
        case .panic:
            _ = engineEvents.push(EngineEvent(kind: .resetAll, sampleTime: EngineEvent.now))
        case .learn, .learnCancel, .unlearn:
            guard applyLearn(c) else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
        case .save:
            applySave(c)
        case .perform:
            guard c.generation == current.state.generation, current.performance.indices.contains(Int(c.index)) else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
            for (address, value) in current.performance[Int(c.index)].values(at: c.value) {
                guard let v = current.state.set(address, value) else { continue }
                var e = EngineEvent.setParameter(address, v)
                e.generation = current.state.generation
                guard engineEvents.push(e) else {
                    commandsRefused.add(1, ordering: .relaxed)
                    return true
                }
                tellMIDI(address, v)
            }
        case .tempo:
            guard (20...400).contains(c.value) else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
            guard engineEvents.push(EngineEvent.tempo(Double(c.value), source: .tap)) else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
            current.tempo = Double(c.value)
        case .unitCommand:
            guard c.generation == current.state.generation,
                let t = current.transport.first(where: { $0.unitIndex == Int(c.unit) }), t.commands.indices.contains(Int(c.index))
            else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
            var press = EngineEvent.midi(UnitCommand.message(Int(c.index), pressed: true), toUnit: t.unitIndex)
            var release = EngineEvent.midi(UnitCommand.message(Int(c.index), pressed: false), toUnit: t.unitIndex)
            press.generation = current.state.generation
            release.generation = current.state.generation
            guard engineEvents.push(press), engineEvents.push(release) else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
            commandsDone.add(1, ordering: .relaxed)
            return false  // nothing in the state changed: no publication
        case .soundcheck:
            guard applySoundcheck(c) else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
        case .talk:
            applyTalk(on: c.value >= 0.5)
        case .transpose:
            guard engineEvents.push(EngineEvent.transpose(c.value > 0 ? 1 : -1)) else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
            commandsDone.add(1, ordering: .relaxed)
            return false  // the engine moves the song; the meters show it
        case .section:
            guard let jump = SectionJump(rawValue: Int32(c.value)), engineEvents.push(EngineEvent.section(jump)) else {
                commandsRefused.add(1, ordering: .relaxed)
                return false
            }
            commandsDone.add(1, ordering: .relaxed)
            return false  // the engine moves the section; the meters show it
        }
        commandsDone.add(1, ordering: .relaxed)
        return true
    }

    /// Talk on or off: a `.talk` event for the engine's one Talk state (`TalkSwitch`), which
    /// saves the targets' values and puts them back (the knobs' values here are left as
    /// they are: Talk is not a knob). Thread: control.
    func applyTalk(on: Bool) {
        var e = EngineEvent.talk(on ? .on : .off)
        e.generation = current.state.generation
        if !engineEvents.push(e) { commandsRefused.add(1, ordering: .relaxed) }
        current.talk = on
    }

    /// The songs (0-based) whose name is their rack's (a setlist entry without a name of its
    /// own): a reload shows the rack's new name. Set before the switcher starts.
    public var songsNamedByTheirRack: Set<Int> = []

    /// A new rack plays (song `song` of the setlist): a new state from its values.
    /// Thread: control (the switcher's `onChange`).
    public func planChanged(_ plan: RenderPlan, song: Int) {
        let serial = current.serial  // serials never go back: servers compare them
        if current.soundcheck != nil { endSoundcheck(notice: "soundcheck stopped: another rack plays") }
        let notice = current.notice
        var songs = current.songs
        // A song shown by its rack's name takes the reloaded rack's (SIGHUP, --watch).
        if songsNamedByTheirRack.contains(song), songs.indices.contains(song), !plan.rack.name.isEmpty { songs[song] = plan.rack.name }
        current = RemoteView(plan: plan, songs: songs, song: song, canBypass: canBypass)
        current.serial = serial
        current.notice = notice
        self.plan = plan
        savedBaseline = current.state
        addedSnapshots = []
        learnPlanChanged()
        publish()
    }

    /// A snapshot was recalled in the playing rack: its values are the state's.
    /// Thread: control (the switcher's `onRecall`).
    public func recalled(_ plan: RenderPlan, snapshot: SnapshotDescription) {
        guard plan.generation == current.state.generation else { return }
        for (target, value) in snapshot.values {
            let parts = target.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let a = current.state.address(unit: parts[0], parameter: parts[1]) else { continue }
            current.state.set(a, value)
        }
        current.snapshot = snapshot.name
        publish()
    }

    func publish() {
        current.serial += 1
        let v = current
        published.withLock { $0 = v }
        onPublish()
    }
}
