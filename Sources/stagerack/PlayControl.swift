import StageControl
import StageCore
import StageDrivers
import StageRemote
import StageLink
import StageService
import StageSync
import StageWeb

/// The control side of a live run, the same whichever backend plays (ALSA, JACK): the
/// remote hub when OSC or the page is asked for, wired to the switcher and the MIDI input;
/// a band's sync (`--sync`); the snapshot last recalled; what each turn of the main loop
/// shows in the status, the meters and the page. Thread: main (made before the switcher starts, updated each turn);
/// the switcher's hooks run on the control thread.
final class LiveControl {
    let remote: RemoteHub?
    let webServer: WebServer?
    /// `--sync`: the band's leader or a follower (PlaySync.swift); nil without.
    let sync: SyncNode?
    /// Stop the remote's servers and sync (before the switcher stops).
    let stops: [() -> Void]
    /// The snapshot last recalled (control thread writes, main reads).
    let recalled = SnapshotName()
    var remoteFeed = RemoteMeterFeed()
    var linkWatch = LinkWatch()
    var switchWatch = SwitchBeatWatch()

    init(remote: RemoteHub?, webServer: WebServer?, sync: SyncNode?, stops: [() -> Void]) {
        self.remote = remote
        self.webServer = webServer
        self.sync = sync
        self.stops = stops
    }

    /// Once Link runs: sync schedules on its timeline.
    func linkStarted(_ link: LinkSession?) {
        if let link { sync?.setClock(LiveSession.syncClock(link)) }
    }

    /// How long the main loop waits for a signal: the page's meters go out 20 times a second.
    var turnMilliseconds: Int { webServer == nil ? 100 : 50 }
}

extension LiveSession {
    /// Makes the remote (if asked for) and sync (`--sync`), and sets the switcher's hooks: a
    /// new rack rebuilds the remote's state and the MIDI mapper (the rack's mappings and those
    /// learned from the page), a recall updates the page, soft takeover and the band. Starts
    /// the remote's servers and sync before the switcher, so its hooks are set when its thread
    /// runs. Thread: main.
    func wireControl(plan: RenderPlan, player: RackPlayer, switcher: PresetSwitcher, midi: (any LiveMIDI)?) -> LiveControl {
        let sync = startSync(switcher: switcher)  // PlaySync.swift: hooks the switcher
        let remote = wantsRemote ? makeRemoteHub(plan: plan, player: player, switcher: switcher, midi: midi) : nil
        let (stops, web) = remote.map { startRemoteServers($0) } ?? ([], nil)
        let control = LiveControl(remote: remote, webServer: web, sync: sync, stops: stops + (sync.map { s in [{ s.stop() }] } ?? []))
        let recalled = control.recalled
        switcher.onChange = { [weak switcher] newPlan, _ in
            recalled.set(nil)
            remote?.planChanged(newPlan, song: switcher?.currentIndex ?? 0)
            midi?.replaceMapper(remote?.mapper(for: newPlan) ?? MIDIMapper(plan: newPlan, presetsByDefault: true), events: player.events)
        }
        switcher.onRecall = { plan, snapshot in
            recalled.set(snapshot.name)
            sync?.leaderRecalled(snapshot: snapshot.name)
            remote?.recalled(plan, snapshot: snapshot)
            for v in snapshot.values {
                if let a = plan.address(of: v.target) { midi?.noteParameterMoved(a, to: v.value, byPreset: true) }
            }
        }
        return control
    }

    /// One turn's status: MIDI lines and the last message, the song, the units' meters,
    /// readouts and players, the snapshot and section, Link (and where a song's switch
    /// began on its beat); the page's meters when the remote runs; then the status line or
    /// meters. Thread: main.
    func showTurn(
        _ reading: LiveAudio.Status, hasCapture: Bool, status: StatusView, control: LiveControl, switcher: PresetSwitcher,
        midi: (any LiveMIDI)?, player: RackPlayer
    ) {
        if let midi { takeMIDILines(midi, status: status, control: control) }
        let link = linkSession.map { control.linkWatch.update($0, rack: player.playingTempo) } ?? nil
        if let linkSession { control.switchWatch.update(player, link: linkSession, song: switcher.currentIndex) }
        status.song = song(switcher.currentIndex)
        status.midiMessages = midi?.messagesReceived
        status.midiLost = (midi.map { $0.engineEventsDropped + $0.router.actionsDropped + $0.inputOverruns } ?? 0)
        status.midiLate = player.eventsLate.load(ordering: .relaxed)
        status.gainReduction = switcher.unitMeters.map { ($0.unitID, $0.value) }
        status.readouts = switcher.unitReadouts.map(\.text)
        status.tracks = switcher.unitTransports.map {
            let t = $0.transport
            return TrackReading(
                unit: $0.unitID, state: t.transportState, position: t.positionSeconds, remaining: t.remainingSeconds,
                underruns: t.underruns
            ).text
        }
        status.snapshot = control.recalled.get()
        status.section = switcher.songClock?.publishedNames
        status.transpose = switcher.songClock?.transposer?.published
        status.link = link
        if let remote = control.remote {
            control.remoteFeed.publish(
                reading, hasCapture: hasCapture, link: link, gainReduction: switcher.unitMeters, readouts: switcher.unitReadouts,
                section: switcher.songClock?.publishedNames, sectionIndex: switcher.songClock?.published.current,
                transpose: status.transpose, talk: player.playingTalk, trackSeconds: UnitTransportReading.songTrackSeconds(switcher.unitTransports), to: remote)
            control.webServer?.wake()  // main → web: new meters
        }
        status.update(reading, hasCapture: hasCapture)
    }

    /// The MIDI input's log lines, and its messages for the status and the page. Thread: main.
    private func takeMIDILines(_ midi: any LiveMIDI, status: StatusView, control: LiveControl) {
        for line in midi.takeLog() { Log.info("MIDI: \(line)") }
        while let record = midi.monitor?.pop() {
            status.lastMIDI = record.message.description
            if control.remote != nil, record.isFirst { control.remoteFeed.noteMIDI(record.message.description) }
        }
    }
}
