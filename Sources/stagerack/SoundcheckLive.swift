import StageCore
import StageDrivers
import StageService

/// `stagerack soundcheck RACK` without `--input`: the take recorded from the live input,
/// the capture device chosen as `play` chooses it (flags over the environment over the
/// config file over the rack's "io" section over "default"), the singer guided on the
/// terminal (`SoundcheckGuide`): a line redrawn in place on a terminal, a line at each
/// change of part and every 5 s otherwise. A device that does not open is explained as
/// `play` explains it (`reportDeviceError`). Thread: main.
struct SoundcheckLive {
    static let deviceOptions = ["--capture", "--rate", "--capture-channels", "--format", "--config"]

    let capture: SoundcheckCapture
    let guide: SoundcheckGuide

    init(_ a: Arguments, rack: RackDescription, rackPath: String) throws {
        let environment = ProcessEnvironment.current
        let reader = SettingsReader(sampleFormats: PCMSampleFormat.allCases.map(\.rawValue), home: environment["HOME"])
        let candidates = ConfigFiles.candidates(
            explicit: a.options["--config"], noConfig: a.flags.contains("--no-config"), environment: environment)
        let options = a.options.filter { Self.deviceOptions.contains($0.key) }
        let (user, _) = try SettingsResolution(reader: reader, environment: environment).userSettings(
            commandLine: { () throws(SettingsError) in try reader.fromCommandLine(options: options, flags: [], rack: nil) },
            candidates: candidates)
        let s = SettingsResolution.final(
            user: user, rack: PlaySettings.fromRack(rack.io, file: rackPath), underSystemd: PlaySettings.isUnderSystemd(environment))
        capture = SoundcheckCapture(
            device: s.text(.capture) ?? "default", sampleRate: s.integer(.sampleRate) ?? 48000,
            channels: s.integer(.captureChannels) ?? 2, format: s.text(.sampleFormat).flatMap { PCMSampleFormat(rawValue: $0) })
        guide = SoundcheckGuide(
            quietSeconds: try a.double("--quiet", range: SoundcheckGuide.quietRange) ?? 3,
            singSeconds: try a.double("--sing", range: SoundcheckGuide.singRange) ?? 20)
    }

    /// The take, or nil when the device did not open (reported, status 1 for the caller).
    func record() -> AudioData? {
        Console.err("soundcheck: recording \(formatNumber(guide.totalSeconds)) s from capture \"\(capture.device)\": "
            + "\(formatNumber(guide.quietSeconds)) s of quiet (the room's noise floor), then sing and speak as at the show "
            + "(loud phrases, soft words, a few s and sh sounds)")
        var shown: SoundcheckGuide.Phase?
        var lastLine = -1.0
        let terminal = Console.stderrIsTerminal
        let take: SoundcheckCapture.Take
        do {
            take = try ALSAMessages.held {
                try capture.record(guide: guide) { p in
                    let line = "\(p.phase.instruction)   input peak \(Int(p.peakDB.rounded())) dBFS"
                    if terminal {
                        if let shown, !sameStep(shown, p.phase) { Console.writeStderr("\n") }
                        Console.writeStderr("\r\u{1B}[K" + line)
                    } else if shown.map({ !sameStep($0, p.phase) }) ?? true || p.seconds >= lastLine + 5 {
                        Console.err(line)
                        lastLine = p.seconds
                    }
                    shown = p.phase
                }
            }
        } catch let e as ALSAError {
            if terminal { Console.writeStderr("\n") }
            _ = reportDeviceError(e, command: "soundcheck", playback: nil, capture: capture.device, deviceWait: nil)
            return nil
        } catch {
            Log.error("stagerack soundcheck: \(error)")
            return nil
        }
        if terminal { Console.writeStderr("\n") }
        let c = take.configuration
        var note = "soundcheck: recorded \(formatNumber(Double(take.audio.frameCount) / take.audio.sampleRate)) s, \(c.channels) ch, "
            + "\(c.sampleRate) Hz, \(c.format.rawValue)"
        if take.paced { note += " (the device keeps no time: paced to the wall clock)" }
        if take.xruns > 0 { note += "; \(take.xruns) xrun(s): the take has short gaps" }
        Console.err(note)
        return take.audio
    }

    /// The same part of the take (quiet or sing), whatever the seconds left.
    func sameStep(_ a: SoundcheckGuide.Phase, _ b: SoundcheckGuide.Phase) -> Bool {
        switch (a, b) {
        case (.quiet, .quiet), (.sing, .sing), (.done, .done): true
        default: false
        }
    }
}
