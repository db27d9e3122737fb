import StageControl
import StageCore
import StageDrivers
import StageJack
import StageService

#if canImport(Glibc)
import Glibc
#endif

/// `play --driver jack`: the live run as a JACK client. The server sets the rate and the
/// buffer size (the rack is compiled for them and says so); the rest is the ALSA run's:
/// the player, the switcher on the control thread, MIDI, signals, the status and meters.
/// A server that is not running is waited for as an absent device (`--device-wait`); one
/// that goes away while playing is reconnected every second with the show's state kept.
/// The remote (OSC, the page), Ableton Link and sync as with ALSA (`LiveControl`; Link's block
/// time counts the server's playback latency). Not through JACK yet: --record, --watch and
/// drift compensation (JACK's clock is the server's).
/// Thread: main.
extension LiveSession {
    /// The JACK client's name, and the patterns its ports connect to (nil: none).
    var jackClientName: String { "stagerack" }
    var jackOutputPattern: String? { jackPattern(setup.jackOutputs) }
    var jackInputPattern: String? { jackPattern(setup.jackInputs) }

    private func jackPattern(_ p: String) -> String? { p.lowercased() == "none" ? nil : p }

    func runJack() throws -> Int32 {
        Signals.blockForWaiting()
        for (on, what) in [(setup.service.settings.text(.record) != nil, "--record"), (setup.watch, "--watch"),
                           (setup.compensateDrift, "--drift-compensation")] where on {
            Log.warning("\(what) is not available with --driver jack yet; ignored")
        }
        // The server's rate and buffer size, from a short first connection.
        guard let format = try waitForJack({ () throws(JackError) in try JackAudio.serverFormat(clientName: self.jackClientName) }) else { return 0 }
        let rate = Double(format.sampleRate)
        let inputCount = needsCapture ? setup.captureChannels : 0
        var options = GraphCompiler.Options(sampleRate: rate, maxFrames: format.bufferFrames, hostInputChannels: max(inputCount, 1))
        options.transposesEverySong = syncs
        options.leadsBand = leadsBand
        let engine = try RackLoader(registry: Registry.standard, options: options).engine(for: rack)
        let plan = engine.plan
        for w in plan.warnings { Log.warning("\(setup.rackPath): \(w)") }
        let player = RackPlayer(engine: engine)
        let switcher = PresetSwitcher(
            setlist: setlist, index: 0, player: player, firstPlan: plan, registry: Registry.standard, options: options, log: { Log.info($0) })
        switcher.warn = { Log.warning($0) }
        let midi = openLiveMIDI(plan: plan, player: player, switcher: switcher)
        ALSAMessages.route()
        let control = wireControl(plan: plan, player: player, switcher: switcher, midi: midi)  // the remote (PlayControl.swift)
        try switcher.start(midiActions: midi?.actions)
        defer {
            for stop in control.stops { stop() }
            midi?.stop()
            switcher.stop()
        }
        logSettingsSummary(plan: plan)
        let names = (JackPortNames.outputs(plan.outputs, channels: playbackChannels), JackPortNames.inputs(channels: inputCount))
        let limit = setup.duration.map { Int($0 * rate) }
        let open = { (left: Int?) throws(JackError) -> JackAudio in
            try JackAudio(clientName: self.jackClientName, outputNames: names.0, inputNames: names.1, player: player, frameLimit: left)
        }
        guard var jack = try waitForJack({ () throws(JackError) in try open(limit) }) else { return 0 }
        try startJack(jack)
        if setup.link {
            let latency = Double(jack.playbackLatencyFrames + plan.latencyFrames) / rate
            linkSession = startLink(player: player, tempo: engine.tempo, beatsPerBar: engine.beatsPerBar, latencySeconds: latency)
            control.linkStarted(linkSession)
        }
        let memoryRefusal = MemoryLock.lockAll()
        if let memoryRefusal { Log.warning(memoryRefusal) } else { Log.info("memory locked") }
        Log.info("running \(rack.name.isEmpty ? setup.rackPath : rack.name) through JACK, \(format.sampleRate) Hz, \(format.bufferFrames) frames a period")
        let status = StatusView(meters: setup.service.meters, status: setup.status, rate: rate, rackName: song(0).name, rackFile: song(0).file)
        status.realtime = jack.isRealtime
        var framesBefore = 0
        while true {
            let outcome = serveJack(jack, status: status, control: control, switcher: switcher, midi: midi, player: player)
            status.finish()
            let s = jack.status()
            jack.close()
            switch outcome {
            case .stopped, .finished:
                Log.info("stopped after \(ms(Double(framesBefore + s.frames) / rate)) s, \(plural(s.xruns, "xrun")) (JACK's)")
                return 0
            case .serverLost:
                Log.error("JACK server went away; the show's state is kept; reconnecting every second")
                framesBefore += s.frames
                status.framesBefore = framesBefore
                guard let back = reconnectJack({ () throws(JackError) in try open(limit.map { $0 - framesBefore }) }, rate: format.sampleRate) else {
                    Log.info("stopped while waiting for the JACK server")
                    return 0
                }
                jack = back
                player.handOverRenderThread()  // JACK's old process thread has ended; the new one takes the queues
                try startJack(jack)
                Log.info("JACK server back: playing again")
            }
        }
    }

    /// Activates the client and connects its ports, with the log lines.
    func startJack(_ jack: JackAudio) throws(JackError) {
        try jack.activate()
        Log.info("JACK client \(jack.clientName): \(jack.sampleRate) Hz and \(jack.bufferFrames) frames a period, the server's; ports "
                 + (jack.outputNames + jack.inputNames).joined(separator: ", "))
        for line in jack.connect(outputPattern: jackOutputPattern, inputPattern: jackInputPattern) {
            if line.warning { Log.warning(line.text) } else { Log.info(line.text) }
        }
    }

    /// Opens through `open`, waiting for a server that is not running as for an absent
    /// device (`--device-wait`). nil: stopped by a signal while waiting.
    func waitForJack<T>(_ open: () throws(JackError) -> T) throws -> T? {
        let waiter = DeviceWaiter(
            limit: setup.service.deviceWait, isAbsent: { ($0 as? JackError)?.serverAbsent ?? false },
            pause: { seconds in
                let end = monotonicSeconds() + seconds
                while case let left = end - monotonicSeconds(), left > 0 {
                    let s = Signals.wait(milliseconds: max(Int(left * 1000), 1))
                    if s == SIGINT || s == SIGTERM { return true }
                }
                return false
            },
            now: monotonicSeconds, log: { LogOutput.emit($0, $1) })
        return try waiter.wait(for: "the JACK server") { try open() }
    }

    /// After the server went away: a new client every second until one opens at the rate
    /// the rack runs at. nil: stopped by a signal.
    func reconnectJack(_ open: () throws(JackError) -> JackAudio, rate: Int) -> JackAudio? {
        while true {
            let signal = Signals.wait(milliseconds: 1000)
            if signal == SIGINT || signal == SIGTERM { return nil }
            guard let jack = try? open() else { continue }
            if jack.sampleRate == rate { return jack }
            Log.error("the JACK server came back at \(jack.sampleRate) Hz, the rack runs at \(rate) Hz; retrying")
            jack.close()
        }
    }

    /// The main thread's loop while JACK plays: signals, MIDI lines, the status view, the
    /// server's buffer-size changes; until the client stops, finishes or loses its server.
    func serveJack(
        _ jack: JackAudio, status: StatusView, control: LiveControl, switcher: PresetSwitcher, midi: (any LiveMIDI)?, player: RackPlayer
    ) -> JackAudio.Outcome {
        var stopping = false
        var buffer = jack.bufferFrames
        while true {
            if let outcome = jack.outcome() {
                // Asked to stop, then the server went too (both stopped at once, as at a
                // shutdown): stopped, not a wait for a server that is not coming back.
                if case .serverLost = outcome, stopping { return .stopped }
                return outcome
            }
            switch Signals.wait(milliseconds: control.turnMilliseconds) {
            case SIGINT, SIGTERM:
                if !stopping {
                    Log.info("stopping")
                    stopping = true
                    jack.requestStop()
                }
            case SIGHUP:
                Log.info("SIGHUP: reloading \(setlist.entries[switcher.currentIndex].rack)")
                requestReload(switcher)
            default:
                break
            }
            let now = jack.currentBufferFrames.load(ordering: .relaxed)
            if now != buffer {
                buffer = now
                Log.info("JACK: the server's buffer size is now \(now) frames; followed")
            }
            showTurn(jack.status(), hasCapture: !jack.inputNames.isEmpty, status: status, control: control, switcher: switcher, midi: midi,
                     player: player)
        }
    }
}
