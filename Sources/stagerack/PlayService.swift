import StageCore
import StageControl
import StageDrivers
import StageService

#if canImport(Glibc)
import Glibc
#endif

/// What the service layer adds to `play`: where the settings came from, how long to wait
/// for devices, and the status view. Thread: main.
struct ServiceSetup {
    /// The settings after stacking (each with its origin).
    var settings = PlaySettings()
    var configFiles: [String] = []
    /// Seconds to wait for absent devices at start; nil: for ever.
    var deviceWait: Double? = nil
    var meters = false
}

extension PlayCommand {
    /// Options of the service layer, added to `play`'s own.
    static let serviceValueOptions = ["--config", "--device-wait", "--record", "--record-format", "--osc", "--web"]
    static let serviceFlagOptions = ["--meters", "--no-config"]

    static let serviceHelp = """
          --device-wait SECONDS|forever  wait this long for absent devices (default: 0, or
                              forever when systemd started it)
          --meters            level meters, load and xruns redrawn in place (terminal), or
                              plain status lines (not a terminal)
          --config FILE       read settings from FILE only (default: /etc/stagerack/stagerack.json,
                              then ~/.config/stagerack/stagerack.json)
          --no-config         read no config file
          --osc [ADDR:]PORT   OSC control on UDP PORT (localhost unless ADDR is given; no
                              authentication: a trusted network only; config: osc, oscAllow)
          --web [ADDR:]PORT   the web page (HTTP and WebSocket) on PORT (localhost unless ADDR
                              is given, 0.0.0.0 for a phone on the network); writing needs
                              the PIN (config: web, webPin, webViewers, webClients, webRate,
                              webSessions; webCert and webKey for HTTPS)

        Settings: built-in defaults < the rack's "io" section < config files < STAGERACK_*
        environment variables < flags. RACK may be left out when the config or $STAGERACK_RACK
        names it. Exit status 78 for a bad config or rack file (systemd does not restart it).
        """

    /// The settings (config files < environment < flags, over the (first) rack's io section
    /// and the built-in defaults), the rack or setlist they name and its first rack.
    static func resolveSetup(_ a: Arguments) throws -> (Setup, Setlist, RackDescription) {
        guard a.positional.count <= 1 else { throw UsageError(message: "play takes one rack file\n\n\(help)") }
        let environment = ProcessEnvironment.current
        let reader = SettingsReader(sampleFormats: PCMSampleFormat.allCases.map(\.rawValue), home: environment["HOME"])
        let candidates = ConfigFiles.candidates(
            explicit: a.options["--config"], noConfig: a.flags.contains("--no-config"), environment: environment)
        let (user, files) = try SettingsResolution(reader: reader, environment: environment).userSettings(
            commandLine: { () throws(SettingsError) in
                try reader.fromCommandLine(options: a.options, flags: a.flags, rack: a.positional.first)
            },
            candidates: candidates)
        guard let rackPath = user.text(.rack) else { throw SettingsError([SettingsResolution.noRackMessage]) }
        let setlist: Setlist
        let rack: RackDescription
        do {
            setlist = SavedRacks.substitute(try RackFiles.readSetlist(rackPath))  // copies saved from the page (PlaySave.swift)
            rack = try RackFiles.readSong(setlist, 0, registry: Registry.standard)
        } catch {
            var problems = error.diagnostics.map(\.description)
            if let origin = user[.rack]?.origin, origin != .flag("RACK argument") { problems.append("(the rack was named by \(origin))") }
            throw SettingsError(problems)
        }
        let s = SettingsResolution.final(
            user: user, rack: PlaySettings.fromRack(rack.io, file: setlist.entries[0].rack),
            underSystemd: PlaySettings.isUnderSystemd(environment))
        var service = ServiceSetup(settings: s, configFiles: files, meters: a.flags.contains("--meters"))
        if case .some(let wait) = s.wait(.deviceWait) { service.deviceWait = wait }
        let setup = Setup(
            rackPath: rackPath,
            playback: s.text(.playback) ?? "default",
            capture: s.text(.capture) ?? "default",
            rate: s.integer(.sampleRate) ?? 48000,
            period: s.integer(.period) ?? 128,
            periods: s.integer(.periods) ?? 2,
            format: s.text(.sampleFormat).flatMap { PCMSampleFormat(rawValue: $0) },
            captureChannels: s.integer(.captureChannels) ?? 2,
            duration: try a.double("--duration", range: 0.001...1e9),
            status: s.flag(.status) ?? false,
            watch: a.flags.contains("--watch"),
            hardwareLatency: s.integer(.hardwareLatency),
            compensateDrift: s.flag(.driftCompensation) ?? false,
            link: s.flag(.link) ?? false,
            driver: s.text(.driver) ?? "alsa",
            jackOutputs: s.text(.jackOutputs) ?? "system:playback_",
            jackInputs: s.text(.jackInputs) ?? "system:capture_",
            service: service)
        return (setup, setlist, rack)
    }
}

extension LiveSession {
    /// Opens the devices, waiting for absent ones (USB interfaces that appear late) as
    /// `--device-wait` says, with log lines. nil: stopped by SIGINT/SIGTERM while waiting.
    func openDevicesWaiting() throws -> (PCMStream, PCMStream?)? {
        let what = needsCapture ? "playback \"\(setup.playback)\" and capture \"\(setup.capture)\"" : "playback \"\(setup.playback)\""
        let waiter = DeviceWaiter(
            limit: setup.service.deviceWait,
            isAbsent: { [self] in ($0 as? ALSAError).map(isAbsentDevice) ?? false },
            pause: { seconds in
                let end = monotonicSeconds() + seconds
                while case let left = end - monotonicSeconds(), left > 0 {
                    let s = Signals.wait(milliseconds: max(Int(left * 1000), 1))
                    if s == SIGINT || s == SIGTERM { return true }
                }
                return false
            },
            now: monotonicSeconds,
            log: { LogOutput.emit($0, $1) })
        return try waiter.wait(for: what) { () throws -> (PCMStream, PCMStream?) in
            // alsa-lib's lines while waiting; a final failure's report sums them up.
            try ALSAMessages.held(emitOnFailure: setup.service.deviceWait != 0) { try self.openDevices() }
        }
    }

    /// Errors that mean "not there (yet)": no such card or PCM, gone, busy.
    func isAbsentDevice(_ e: ALSAError) -> Bool {
        e.function == "snd_pcm_open" && [-ENOENT, -ENODEV, -ENXIO, -EBUSY].contains(e.code) || e.isDeviceGone
    }

    /// The start-up summary: where the settings came from, and the rack (the synth unit
    /// logs its SoundFont; devices, latency and real time follow as their own lines).
    func logSettingsSummary(plan: RenderPlan) {
        let s = setup.service
        Log.info("stagerack \(version) play: config \(s.configFiles.isEmpty ? "none" : s.configFiles.joined(separator: ", "))")
        let origins = s.settings.originSummary
        if !origins.isEmpty { Log.info("settings: \(origins)") }
        let first = setlist.entries[0].rack
        var line = "rack \(first)\(rack.name.isEmpty ? "" : " (\(rack.name))"): \(counted(plan.units.count, "unit"))"
        if setlist.entries.count > 1 || first != setup.rackPath { line += "; song 1 of \(setlist.entries.count) in \(setup.rackPath)" }
        Log.info(line)
    }

    /// One line that sums up the running state, once the audio thread runs.
    func logReady(playback: PCMStream, capture: PCMStream?, latencyMs: Double, realtime: Bool, memoryLocked: Bool) {
        let p = playback.configuration
        var line = "running \(rack.name.isEmpty ? setup.rackPath : rack.name): playback \(p.device)"
        if let capture { line += ", capture \(capture.configuration.device)" }
        line += ", \(p.sampleRate) Hz, \(p.periodFrames)×\(p.periods), latency \(ms(latencyMs)) ms"
        line += ", real time \(realtime ? "yes" : "no"), memory \(memoryLocked ? "locked" : "not locked")"
        Log.info(line)
    }

    /// The name and rack file of song `index` of the setlist, for the meters.
    func song(_ index: Int) -> (name: String, file: String) {
        guard setlist.entries.indices.contains(index) else { return (rack.name, setup.rackPath) }
        let e = setlist.entries[index]
        // A lone rack is a setlist of one whose name is its path: the rack's own name reads better.
        let named = !e.name.isEmpty && e.name != e.rack
        let file = e.rack.split(separator: "/").last.map(String.init) ?? e.rack
        let name = named ? e.name : index == 0 && !rack.name.isEmpty ? rack.name : file
        return (name, e.rack)
    }

    func makeStatusView() -> StatusView {
        let first = song(0)
        return StatusView(meters: setup.service.meters, status: setup.status, rate: Double(setup.rate),
                          rackName: first.name, rackFile: first.file)
    }
}

/// `--status` lines once a second, or the `--meters` view redrawn ten times a second on a
/// terminal (plain status lines when stderr is not one); and, always, a warning line when
/// xruns happened (at most one a second). `update` is called every 100 ms. Thread: main.
final class StatusView {
    let ansi: Bool
    let active: Bool
    let rate: Double
    /// The song playing: its name (or the rack's) and rack file.
    var song: (name: String, file: String)
    var realtime = false
    /// MIDI messages received since start; nil: no MIDI input.
    var midiMessages: Int?
    /// Frames played before the device was last reopened (its counters start again at 0).
    /// The snapshot recalled last in the playing rack, and the last MIDI message seen.
    var snapshot: String?
    /// The song's section playing and the next (`SongClock.publishedNames`).
    var section: (current: String?, next: String?)?
    /// The song's transpose (`SongTranspose.published`); nil: nothing to transpose.
    var transpose: Int?
    var lastMIDI: String?
    /// MIDI events lost and late since start (a warning line when the lost count grows).
    var midiLost = 0
    var midiLate = 0
    /// The playing rack's gain-reduction meters (dB by unit id).
    var gainReduction: [(unit: String, dB: Float)] = []
    /// The playing rack's players and loopers (`TrackReading.text`).
    var tracks: [String] = []
    /// The playing rack's units' read-only values (`UnitReadoutReading.text`: LV2 outputs).
    var readouts: [String] = []
    private var loggedLost = 0
    var framesBefore = 0 {
        didSet {
            loggedXruns = 0
            loggedLostFrames = 0
        }
    }
    private var hold = PeakHold(seconds: 2)
    private var lastLine = monotonicSeconds()
    /// The maxima since the last plain line (the control loop reads the meters every 100 ms,
    /// and each read resets them).
    private var pending: (peakIn: Float, peakOut: Float, load: Float) = (0, 0, 0)
    private var loggedXruns = 0
    private var lastXrunLine = 0.0
    private var loggedLostFrames = 0
    private var framesAtXrunLine = 0
    private var warnedStarved = false
    /// With `--link`: the session as the last block read it.
    var link: LinkStatus?
    var lastDriftLine = 0.0
    var loggedDriftTrouble = 0

    init(meters: Bool, status: Bool, rate: Double, rackName: String, rackFile: String) {
        ansi = meters && Console.stderrIsTerminal
        active = meters || status
        self.rate = rate
        song = (rackName, rackFile)
    }

    func record(_ s: LiveAudio.Status) -> StatusRecord {
        var r = StatusRecord(
            rackName: song.name, rackFile: song.file, snapshot: snapshot, peakIn: s.peakIn, peakOut: s.peakOut, load: s.load, xruns: s.xruns,
            lastXrun: s.lastXrun, midiMessages: midiMessages, lastMIDI: lastMIDI, seconds: Double(framesBefore + s.frames) / rate,
            realtime: realtime, midiLost: midiLost, midiLate: midiLate, gainReduction: gainReduction)
            .withLost(frames: s.lostFrames, gaps: s.lostGaps)
        r.tracks = tracks
        r.section = section?.current
        r.nextSection = section?.next
        r.transpose = transpose
        r.readouts = readouts
        r.driftPPM = s.drift?.ppm
        r.resamplingRatio = s.drift?.ratio
        r.link = link
        return r
    }

    /// Says once, in words a performer can act on, when xruns came so fast that almost no
    /// audio moved since the last xrun line (under a tenth of the time): the period is
    /// shorter than this machine can render and move (every restart xruns again).
    private func warnIfStarved(_ s: LiveAudio.Status) {
        let span = monotonicSeconds() - lastXrunLine
        guard !warnedStarved, loggedXruns > 0, span < 10 else { return }
        let moved = Double(max(0, s.frames - framesAtXrunLine)) / rate
        guard moved < 0.1 * span else { return }
        warnedStarved = true
        Log.warning(
            "xruns: only \(String(format: "%.2f", moved)) s of audio moved in the last \(String(format: "%.1f", span)) s: the period is too short for this "
                + "machine (every restart xruns again); choose a larger --period (README: Latency, measure it, then choose the period)")
    }

    /// Called after each wait of the control loop with a fresh status.
    func update(_ s: LiveAudio.Status, hasCapture: Bool) {
        if s.xruns > loggedXruns && monotonicSeconds() - lastXrunLine >= 1 {
            warnIfStarved(s)
            lastXrunLine = monotonicSeconds()
            let last = s.lastXrun.map { " (last on \($0.side), code \($0.code))" } ?? ""
            Log.warning("xrun: \(s.xruns - loggedXruns) more, \(s.xruns) since the devices were opened\(last)")
            loggedXruns = s.xruns
            framesAtXrunLine = s.frames
        }
        if s.lostFrames > loggedLostFrames && monotonicSeconds() - lastXrunLine >= 1 {
            lastXrunLine = monotonicSeconds()
            Log.warning(
                "lost samples: \(s.lostFrames - loggedLostFrames) frames more without an ALSA error (\(s.lostFrames) in \(s.lostGaps) gaps "
                    + "since the devices were opened): the device dropped or stalled; not an xrun")
            loggedLostFrames = s.lostFrames
        }
        if let d = s.drift { logDrift(d) }
        if midiLost > loggedLost {
            Log.warning("MIDI: \(midiLost - loggedLost) events lost (\(midiLost) since start): a queue was full or the kernel's input pool overflowed")
            loggedLost = midiLost
        }
        guard active else { return }
        var r = record(s)
        if !hasCapture { r.peakIn = nil }
        if ansi {
            let width = Int(terminalColumns())
            LogOutput.showMeters(MeterView(width: width).lines(r, held: hold.add(r)))
        } else {
            pending = (max(pending.peakIn, r.peakIn ?? 0), max(pending.peakOut, r.peakOut), max(pending.load, r.load))
            guard monotonicSeconds() - lastLine >= 0.95 else { return }
            lastLine = monotonicSeconds()
            if r.peakIn != nil { r.peakIn = pending.peakIn }
            r.peakOut = pending.peakOut
            r.load = pending.load
            pending = (0, 0, 0)
            Log.status(statusLine(r))
        }
    }

    /// Leaves the last meters on screen; later log lines go below them.
    func finish() {
        if ansi { LogOutput.releaseMeters() }
    }

    func terminalColumns() -> UInt16 {
        var w = winsize()
        return ioctl(2, UInt(TIOCGWINSZ), &w) == 0 && w.ws_col > 0 ? w.ws_col : 80
    }
}

extension LiveSession {
    /// What the buffers add (and the interface, once measured): `play`'s latency lines.
    func latencyReport(playback: PCMStream) -> LatencyReport {
        let p = playback.configuration
        return LatencyReport(sampleRate: Double(setup.rate), periodFrames: p.periodFrames, periods: p.periods, hardwareFrames: setup.hardwareLatency)
    }

    /// An output on channels the playback device did not open is not heard: say so.
    func warnUnplayedOutputs(_ plan: RenderPlan, playback: PCMConfiguration) {
        for o in plan.outputs where (o.deviceChannels.max() ?? 0) >= playback.channels {
            let names = o.deviceChannels.map { String($0 + 1) }.joined(separator: ", ")
            Log.warning("output \"\(o.unitID)\" plays on channels \(names) but \(playback.device) opened \(playback.channels): it is not heard")
        }
    }
}
