import StageCore
import StageDrivers
import StageRemote
import StageService

/// What `play` adds for the remote (README "Control from a phone"): the hub that owns the
/// parameter state on the control thread, and the OSC and web servers around it.
/// Thread: main (set-up); the hub's work runs on the control thread (`onTick`).
extension LiveSession {
    /// True when OSC or the web page is asked for (the hub runs only then).
    var wantsRemote: Bool { setup.service.settings.text(.osc) != nil || setup.service.settings.text(.web) != nil }

    /// The hub for the rack playing, wired to the switcher (its thread runs `tick`; switches
    /// and recalls rebuild or update the state) and to the MIDI input (notices to the
    /// mapper; the router's parameter changes in). Thread: main, before the switcher starts.
    func makeRemoteHub(plan: RenderPlan, player: RackPlayer, switcher: PresetSwitcher, midi: MIDIInput?) -> RemoteHub {
        let songs = setlist.entries.indices.map { song($0).name }
        let hub = RemoteHub(
            plan: plan, songs: songs, song: 0, engineEvents: player.controlEvents,
            midiChanges: midi?.router.parameterChanges,
            canBypass: { name in Registry.standard.type(named: name).map { $0.role == .processor || $0.role == .generator } ?? false },
            tellMIDI: { [weak midi] address, value in midi?.noteParameterMoved(address, to: value, byPreset: false) },
            perform: { [weak switcher] r in switcher?.perform(r, at: EngineEvent.now) })
        hub.wakeControl = { [weak switcher] in switcher?.wakeUp() }
        switcher.onTick = { [weak hub] in hub?.tick() }
        return hub
    }
}

/// The last MIDI messages and the meters for the remote, gathered by the main thread at
/// each turn of its loop. Thread: main.
struct RemoteMeterFeed {
    var lastMIDI: [String] = []

    mutating func noteMIDI(_ line: String) {
        lastMIDI.append(line)
        if lastMIDI.count > RemoteMeters.midiHistory { lastMIDI.removeFirst(lastMIDI.count - RemoteMeters.midiHistory) }
    }

    func publish(_ s: LiveAudio.Status, hasCapture: Bool, gainReduction: [UnitMeterReading], to hub: RemoteHub) {
        var m = RemoteMeters()
        m.peakIn = hasCapture ? s.peakIn : nil
        m.peakOut = s.peakOut
        m.load = s.load
        m.xruns = s.xruns
        m.gainReduction = gainReduction.map { RemoteMeters.GainReduction(unit: $0.unitID, dB: $0.value) }
        m.lastMIDI = lastMIDI
        hub.publishMeters(m)
    }
}
