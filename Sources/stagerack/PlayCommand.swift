import StageCore
import StageControl
import StageDrivers
import StageLink
import StageJack
import StageService
import StageSynth
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `stagerack play`: a rack running live on ALSA, microphone in, speakers out.
enum PlayCommand {
    static let help = """
        usage: stagerack play [RACK|SETLIST] [--playback PCM] [--capture PCM] [--rate HZ] [--period FRAMES]
                              [--periods N] [--capture-channels N] [--format FORMAT] [--hardware-latency FRAMES]
                              [--drift-compensation] [--link]
                              [--duration SECONDS] [--status] [--watch] [--meters]
                              [--device-wait SECONDS|forever] [--config FILE | --no-config]
                              [--record DIR] [--record-format wav|flac]
                              [--osc [ADDR:]PORT] [--web [ADDR:]PORT]
                              [--driver alsa|jack] [--jack-outputs PATTERN] [--jack-inputs PATTERN]
                              [--sync leader|follower] [--sync-followers HOST:PORT,...] [--sync-port N]

        Runs RACK live through ALSA (no JACK or PulseAudio in between). A rack without an
        input unit opens no capture device. Devices, rate and period default to the rack's
        "io" section, then to "default", 48000 Hz and 128×2 frames (64×2 works on a capable
        machine; 256×2 for weaker ones).

          --playback PCM      ALSA playback device (e.g. hw:1,0, plughw:USB)
          --capture PCM       ALSA capture device
          --rate HZ           sample rate
          --period FRAMES     frames per period (16…8192)
          --periods N         periods in the buffer (2…16)
          --capture-channels N  channels to open on the capture device (default 2, or what it has)
          --drift-compensation  capture and playback are different cards (two clocks): resample
                              the capture to the playback clock, steered by their measured
                              drift (config: driftCompensation; off by default)
          --link              join the Ableton Link session on the network: the band's shared
                              tempo and beat (config: link; off by default)
          --format FORMAT     force FLOAT_LE, S32_LE, S24_LE, S24_3LE or S16_LE (default: the best offered)
          --duration SECONDS  stop after this long (default: run until SIGINT/SIGTERM)
          --status            print one status line per second on stderr
          --watch             reload the playing rack when its file changes on disk
          --hardware-latency FRAMES  the interface's own latency (stagerack latency --write
                              stores it in the config as hardwareLatency): the latency
                              lines then give the true round trip
          --record DIR        record the show: the microphone as captured and the output as heard,
                              a pair of WAV files per song in DIR (see README, "Recording the show")
          --record-format F   wav (default) or flac (converted from the WAV when the show stops)
          --driver alsa|jack  alsa (default): the card directly; jack: a JACK client at the server's
                              rate and buffer size (config: driver; README, "Through JACK")
          --jack-outputs PATTERN  connect the JACK outputs to the ports this matches, in order
                              (default system:playback_; none: leave them unconnected)
          --jack-inputs PATTERN   connect the JACK inputs from these (default system:capture_)
          --sync leader|follower  a band's boxes in step: the leader's song changes and snapshot
                              recalls followed by the others, on the same Link bar line (config:
                              syncRole; the shared secret syncKey in the config or $STAGERACK_SYNC_KEY;
                              README, "A band's boxes in step")
          --sync-followers LIST  the leader's followers, HOST:PORT comma-separated (config: syncFollowers)
          --sync-port N       this box's sync port (default 9720; config: syncPort)
        \(serviceHelp)

        With a SETLIST, the first song plays; MIDI program changes (and SIGHUP) switch songs
        or recall snapshots, with the old rack's tails ringing out under the new one.

        Signals: SIGINT/SIGTERM fade out and stop (exit 0); SIGHUP reloads the playing rack's
        file (a bad file leaves the running rack alone, with its errors logged).
        """

    struct Setup {
        var rackPath: String
        var playback: String
        var capture: String
        var rate: Int
        var period: Int
        var periods: Int
        var format: PCMSampleFormat?
        var captureChannels: Int
        var duration: Double?
        var status: Bool
        var watch: Bool
        /// The interface's own latency in frames (`stagerack latency --write`), if measured.
        var hardwareLatency: Int?
        /// `--drift-compensation`: capture on another card is resampled to playback's clock.
        var compensateDrift = false
        /// `--link`: the rack follows the Ableton Link session on the network.
        var link = false
        /// `--driver jack`: a JACK client (PlayJack.swift), and the patterns its ports connect to.
        var driver = "alsa"
        var jackOutputs = "system:playback_"
        var jackInputs = "system:capture_"
        var service = ServiceSetup()
    }

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(
            args,
            valueOptions: ["--playback", "--capture", "--rate", "--period", "--periods", "--format", "--duration", "--capture-channels",
                           "--hardware-latency", "--driver", "--jack-outputs", "--jack-inputs"]
                + serviceValueOptions + LiveSession.syncValueOptions,
            flagOptions: ["--status", "--watch", "--drift-compensation", "--link"] + serviceFlagOptions)
        // Config file < environment < flags, over the rack's io section (PlayService.swift).
        let (setup, setlist, rack) = try resolveSetup(a)
        do {
            if setup.driver == "jack" { return try LiveSession(setup: setup, setlist: setlist, rack: rack).runJack() }
            return try LiveSession(setup: setup, setlist: setlist, rack: rack).run()
        } catch let e as JackError {
            Log.error("JACK: \(e)")
            return 1
        } catch let e as ALSAError {
            return reportDeviceError(e, setup: setup)  // what is wrong and what to do (DeviceErrorReport.swift)
        }
    }
}

/// One live run: devices, the rack player and its threads (docs/ARCHITECTURE.md):
/// the audio thread renders, the MIDI thread maps MIDI into the player's queue, the control
/// thread (the preset switcher's) loads racks and releases retired ones; this, the main
/// thread, waits for signals, draws the status and the meters, and sends the control thread
/// its requests. Thread: main.
final class LiveSession {
    let setup: PlayCommand.Setup
    let setlist: Setlist
    var rack: RackDescription
    let needsCapture: Bool
    /// Playback channels: enough for every output of every song (at least 2).
    let playbackChannels: Int
    /// What "save" from the page last wrote to each rack file (PlaySave.swift): control
    /// thread writes, main reads (`--watch` ignores the rack's own write).
    let ownWrites = Locked<[String: String]>([:])
    /// `--link`: the Link session the player follows, kept alive for the whole run.
    var linkSession: LinkSession?

    init(setup: PlayCommand.Setup, setlist: Setlist, rack: RackDescription) {
        self.setup = setup
        self.setlist = setlist
        self.rack = rack
        // Capture opens if any song of the set hears the microphone. Every song is read once
        // here: one that does not read is reported now, not at its program change on stage.
        var racks = [rack]
        for i in setlist.entries.indices.dropFirst() {
            do {
                racks.append(try RackFiles.readSong(setlist, i, registry: Registry.standard))
            } catch {
                Log.warning("song \(i + 1) (\(setlist.entries[i].name)) cannot be played until its rack is fixed; the other songs can:\n"
                    + error.diagnostics.map { "  \($0)" }.joined(separator: "\n"))
            }
        }
        needsCapture = racks.contains { r in r.units.contains { Registry.standard.type(named: $0.type)?.role == .hostInput } }
        let compiler = GraphCompiler(registry: Registry.standard)
        playbackChannels = racks.map { compiler.outputChannelCount($0) }.max() ?? 2
    }

    func openDevices() throws(ALSAError) -> (PCMStream, PCMStream?) {
        let playback = try PCMStream(
            PCMRequest(device: setup.playback, isCapture: false, sampleRate: setup.rate, channels: playbackChannels,
                       periodFrames: setup.period, periods: setup.periods, format: setup.format))
        var capture: PCMStream?
        if needsCapture {
            // A capture buffer adds no latency (each period is read as soon as it is there),
            // so it gets at least 4 periods of room for scheduling jitter.
            capture = try PCMStream(
                PCMRequest(device: setup.capture, isCapture: true, sampleRate: setup.rate, channels: setup.captureChannels,
                           periodFrames: playback.configuration.periodFrames, periods: max(setup.periods, 4),
                           format: setup.format))
        }
        return (playback, capture)
    }

    func run() throws -> Int32 {
        Signals.blockForWaiting()
        guard let devices = try openDevicesWaiting() else { return 0 }  // waits for late devices
        var (playback, capture) = devices
        let period = playback.configuration.periodFrames
        let inputChannels = capture?.configuration.channels ?? 1
        // The first rack is made ready exactly as every later one (RackLoader): compiled,
        // warmed on this thread, before the audio thread exists.
        var options = GraphCompiler.Options(sampleRate: Double(setup.rate), maxFrames: period, hostInputChannels: inputChannels)
        options.transposesEverySong = syncs  // a follower takes its leader's transpose (PlaySync.swift)
        options.leadsBand = leadsBand  // and on the leader's bar line
        let engine = try RackLoader(registry: Registry.standard, options: options).engine(for: rack)
        let plan = engine.plan
        for w in plan.warnings { Log.warning("\(setup.rackPath): \(w)") }
        for u in plan.units { if let synth = u as? SynthUnit { Log.info(synth.soundFontDescription) } }
        let player = RackPlayer(engine: engine)
        let switcher = PresetSwitcher(
            setlist: setlist, index: 0, player: player, firstPlan: plan, registry: Registry.standard, options: options,
            log: { Log.info($0) })
        switcher.warn = { Log.warning($0) }
        // MIDI: the sequencer client feeds the player's queue; program changes and preset
        // buttons come back as actions for the switcher.
        let midi = openLiveMIDI(plan: plan, player: player, switcher: switcher)  // PlayMIDI.swift
        let midiInput = midi
        ALSAMessages.route()  // the sequencer silenced alsa-lib's messages: keep them in the log
        // The remote and sync (PlayControl.swift), their hooks set before the control thread runs.
        let control = wireControl(plan: plan, player: player, switcher: switcher, midi: midiInput)
        try switcher.start(midiActions: midiInput?.actions)
        defer {
            for stop in control.stops { stop() }
            midiInput?.stop()
            switcher.stop()  // its last act: the last retired racks released
        }
        let watcher = setup.watch ? FileWatcher(paths: setlist.entries.map(\.rack)) : nil
        if setup.watch && watcher == nil { Log.warning("--watch: inotify is not available; files are not watched") }

        logSettingsSummary(plan: plan)
        Log.info("playback \(playback.configuration)")
        if let capture { Log.info("capture \(capture.configuration)") } else { Log.info("no input unit: capture not opened") }
        let rate = Double(setup.rate)
        warnUnplayedOutputs(plan, playback: playback.configuration)
        let latency = latencyReport(playback: playback)
        Log.info(latency.summary(slowestUnitFrames: plan.latencyFrames))
        for line in latency.pathLines(plan.outputs) { Log.info(line) }
        let latencyMs = Double(latency.fixedFrames + plan.latencyFrames) / rate * 1000
        let memoryRefusal = MemoryLock.lockAll()
        if let memoryRefusal { Log.warning(memoryRefusal) } else { Log.info("memory locked") }

        let limit = setup.duration.map { Int($0 * rate) }
        let recorder = try startRecording(capture: capture, period: period)  // --record (PlayRecording.swift)
        var recording = RecordingWatch()
        var live = LiveAudio(playback: playback, capture: capture, player: player, frameLimit: limit, recorder: recorder,
                             drift: try driftCompensator(capture: capture, playback: playback, log: true))
        if live.isPaced { Log.info("playback \(playback.configuration.device) keeps no time (alsa-lib's file or null plugin): pacing to the wall clock") }
        if setup.link { linkSession = startLink(player: player, tempo: engine.tempo, beatsPerBar: engine.beatsPerBar, latencySeconds: latencyMs / 1000) }
        control.linkStarted(linkSession)
        var framesBefore = 0
        let status = makeStatusView()  // --status / --meters, xrun lines (PlayService.swift)
        var announced = false
        while true {
            let outcome = OutcomeBox()
            let liveForThread = live
            let thread = try StageThread(.init(name: "stagerack-audio", realtimePriority: 70, stackBytes: StageThread.audioStack)) {
                outcome.set(liveForThread.run())
            }
            if let refusal = thread.refusal { Log.warning(refusal) } else { Log.info("audio thread running with SCHED_FIFO") }
            status.realtime = thread.isRealtime
            if !announced {
                announced = true
                logReady(playback: playback, capture: capture, latencyMs: latencyMs, realtime: thread.isRealtime,
                         memoryLocked: memoryRefusal == nil)
            }
            var stopping = false
            while outcome.get() == nil {
                switch Signals.wait(milliseconds: control.turnMilliseconds) {
                case SIGINT, SIGTERM:
                    if !stopping {
                        Log.info("stopping")
                        stopping = true
                        live.requestStop()
                    }
                case SIGUSR1:
                    Log.info("SIGUSR1 ignored (SIGHUP reloads the rack; SIGINT/SIGTERM stop)")
                case SIGHUP:
                    Log.info("SIGHUP: reloading \(setlist.entries[switcher.currentIndex].rack)")
                    requestReload(switcher)
                default:
                    break
                }
                if let watcher, watcher.changed().contains(setlist.entries[switcher.currentIndex].rack) {
                    let path = setlist.entries[switcher.currentIndex].rack
                    if isOwnWrite(path) {
                        Log.info("\(path) changed on disk: saved from the page, not reloading")
                    } else {
                        Log.info("\(path) changed on disk: reloading")
                        requestReload(switcher)
                    }
                }
                watchRecording(recorder, songIndex: switcher.currentIndex, state: &recording)
                showTurn(live.status(), hasCapture: capture != nil, status: status, control: control, switcher: switcher, midi: midiInput,
                         player: player)  // PlayControl.swift
            }
            thread.join()
            status.finish()
            if case .deviceLost? = outcome.get() {} else { finishRecording(recorder) }
            let s = live.status()
            switch outcome.get()! {
            case .stopped, .finished:
                Log.info("stopped after \(ms(Double(framesBefore + s.frames) / rate * 1000 / 1000)) s, \(plural(s.xruns, "xrun"))"
                         + "\(s.lostFrames > 0 ? ", \(plural(s.lostFrames, "frame")) lost without an xrun" : "")"
                         + (s.drift.map { ", " + driftSummary($0) } ?? "")
                         + "\(status.midiLost > 0 ? ", \(plural(status.midiLost, "MIDI event")) lost" : "")")
                let violations = queueOwnershipViolations.load(ordering: .relaxed)
                if violations > 0 { Log.error("internal: \(plural(violations, "queue use")) by a thread that does not own the queue") }
                return 0
            case .deviceLost(let error):
                Log.error("audio device lost: \(error); retrying every second")
                framesBefore += s.frames
                status.framesBefore = framesBefore
                _ = consume live
                while true {
                    let signal = Signals.wait(milliseconds: 1000)
                    if signal == SIGINT || signal == SIGTERM {
                        Log.info("stopped while waiting for the device")
                        finishRecording(recorder)
                        return 0
                    }
                    do {
                        (playback, capture) = try openDevices()
                        guard playback.configuration.periodFrames == period,
                            (capture?.configuration.channels ?? 1) == inputChannels
                        else {
                            Log.error("the device came back with another period or channel count; retrying")
                            continue
                        }
                        break
                    } catch {
                        continue
                    }
                }
                Log.info("audio device back: \(playback.configuration)")
                player.handOverRenderThread()  // the old audio thread has ended; a new one takes its queues
                recorder?.handOverAudioThread()
                live = LiveAudio(playback: playback, capture: capture, player: player,
                                 frameLimit: limit.map { $0 - framesBefore }, recorder: recorder,
                                 drift: try driftCompensator(capture: capture, playback: playback, log: false))
            }
        }
    }

    /// SIGHUP and `--watch`: the control thread reloads the playing rack.
    func requestReload(_ switcher: PresetSwitcher) {
        if !switcher.mainRequests.push(.reload) { Log.warning("reload requests are piling up; this one is dropped") }
        switcher.wakeUp()
    }

    func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    func ms(_ x: Double) -> String { formatNumber((x * 10).rounded() / 10) }
    func dbfs(_ x: Float) -> String { x > 0 ? formatNumber((Double(20 * log10f(x)) * 10).rounded() / 10) : "-inf" }
}

/// Where the audio thread leaves its outcome for the control thread.
final class OutcomeBox: @unchecked Sendable {
    private let done = Atomic<Bool>(false)
    private var value: LiveAudio.Outcome?
    func set(_ v: LiveAudio.Outcome) {
        value = v
        done.store(true, ordering: .releasing)
    }
    func get() -> LiveAudio.Outcome? { done.load(ordering: .acquiring) ? value : nil }
}

/// The snapshot recalled last, written by the switcher's thread, read by the control loop.
final class SnapshotName: @unchecked Sendable {
    private let lock = Locked<String?>(nil)
    func set(_ name: String?) { lock.withLock { $0 = name } }
    func get() -> String? { lock.withLock { $0 } }
}
