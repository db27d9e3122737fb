import StageCore
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
    static let serviceValueOptions = ["--config", "--device-wait"]
    static let serviceFlagOptions = ["--meters", "--no-config"]

    static let serviceHelp = """
          --device-wait SECONDS|forever  wait this long for absent devices (default: forever)
          --meters            level meters, load and xruns redrawn in place (terminal), or
                              plain status lines (not a terminal)
          --config FILE       read settings from FILE only (default: /etc/stagerack/stagerack.json,
                              then ~/.config/stagerack/stagerack.json)
          --no-config         read no config file

        Settings: built-in defaults < the rack's "io" section < config files < STAGERACK_*
        environment variables < flags. RACK may be left out when the config or $STAGERACK_RACK
        names it. Exit status 78 for a bad config or rack file (systemd does not restart it).
        """

    /// The settings (config files < environment < flags, over the rack's io section and
    /// the built-in defaults) and the rack they name.
    static func resolveSetup(_ a: Arguments) throws -> (Setup, RackDescription) {
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
        let rack: RackDescription
        do {
            rack = try RackFiles.read(rackPath, registry: Registry.standard)
        } catch {
            var problems = error.diagnostics.map(\.description)
            if let origin = user[.rack]?.origin, origin != .flag("RACK argument") { problems.append("(the rack was named by \(origin))") }
            throw SettingsError(problems)
        }
        let s = SettingsResolution.final(user: user, rack: PlaySettings.fromRack(rack.io, file: rackPath))
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
            service: service)
        return (setup, rack)
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
        return try waiter.wait(for: what) { () throws -> (PCMStream, PCMStream?) in try self.openDevices() }
    }

    /// Errors that mean "not there (yet)": no such card or PCM, gone, busy.
    func isAbsentDevice(_ e: ALSAError) -> Bool {
        e.function == "snd_pcm_open" && [-ENOENT, -ENODEV, -ENXIO, -EBUSY].contains(e.code) || e.isDeviceGone
    }

    /// The start-up summary: where the settings came from, the rack and its SoundFonts.
    /// (Devices, latency and real time follow as their own lines.)
    func logSettingsSummary(plan: RenderPlan) {
        let s = setup.service
        Log.info("stagerack \(version) play: config \(s.configFiles.isEmpty ? "none" : s.configFiles.joined(separator: ", "))")
        let origins = s.settings.originSummary
        if !origins.isEmpty { Log.info("settings: \(origins)") }
        let fonts = rack.units.compactMap { $0.settings.string("soundfont") }
        let synths = rack.units.filter { $0.type == "synth" && $0.settings.string("soundfont") == nil }.count
        let fontText = (fonts + (synths > 0 ? ["the default SoundFont"] : [])).joined(separator: ", ")
        Log.info(
            "rack \(setup.rackPath)\(rack.name.isEmpty ? "" : " (\(rack.name))"): \(plan.units.count) units, SoundFonts: \(fontText.isEmpty ? "none" : fontText)")
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

    func makeStatusView() -> StatusView {
        StatusView(meters: setup.service.meters, status: setup.status, rate: Double(setup.rate),
                   rackName: rack.name.isEmpty ? setup.rackPath : rack.name, rackFile: setup.rackPath)
    }
}

/// `--status` lines once a second, or the `--meters` view redrawn ten times a second on a
/// terminal (plain status lines when stderr is not one); and, always, a warning line when
/// xruns happened (at most one a second). Thread: main.
final class StatusView {
    let ansi: Bool
    let active: Bool
    let rate: Double
    var rackName: String
    let rackFile: String
    var realtime = false
    /// Frames played before the device was last reopened (its counters start again at 0).
    var framesBefore = 0 {
        didSet { loggedXruns = 0 }
    }
    private var hold = PeakHold(seconds: 2)
    private var lastLine = monotonicSeconds()
    private var loggedXruns = 0
    private var lastXrunLine = 0.0

    init(meters: Bool, status: Bool, rate: Double, rackName: String, rackFile: String) {
        ansi = meters && Console.stderrIsTerminal
        active = meters || status
        self.rate = rate
        self.rackName = rackName
        self.rackFile = rackFile
    }

    /// How long the control loop waits for a signal between updates.
    var tickMilliseconds: Int { ansi ? 100 : 1000 }

    func record(_ s: LiveAudio.Status) -> StatusRecord {
        StatusRecord(
            rackName: rackName, rackFile: rackFile, peakIn: s.peakIn, peakOut: s.peakOut, load: s.load, xruns: s.xruns,
            lastXrun: s.lastXrun, seconds: Double(framesBefore + s.frames) / rate, realtime: realtime)
    }

    /// Called after each wait of the control loop with a fresh status.
    func update(_ s: LiveAudio.Status, hasCapture: Bool) {
        if s.xruns > loggedXruns && monotonicSeconds() - lastXrunLine >= 1 {
            lastXrunLine = monotonicSeconds()
            let last = s.lastXrun.map { " (last on \($0.side), code \($0.code))" } ?? ""
            Log.warning("xrun: \(s.xruns - loggedXruns) more, \(s.xruns) since start\(last)")
            loggedXruns = s.xruns
        }
        guard active else { return }
        var r = record(s)
        if !hasCapture { r.peakIn = nil }
        if ansi {
            let width = Int(terminalColumns())
            LogOutput.showMeters(MeterView(width: width).lines(r, held: hold.add(r)))
        } else if monotonicSeconds() - lastLine >= 0.95 {
            lastLine = monotonicSeconds()
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
