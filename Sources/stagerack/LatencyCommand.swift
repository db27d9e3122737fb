import StageCore
import StageDrivers
import StageService

#if canImport(Glibc)
import Glibc
#endif

/// `stagerack latency`: the real round trip through the interface, measured.
enum LatencyCommand {
    static let help = """
        usage: stagerack latency [--playback PCM] [--capture PCM] [--rate HZ] [--period LIST]
                                 [--periods N] [--capture-channels N] [--runs N] [--level DBFS]
                                 [--write] [--config FILE | --no-config]

        Measures the round trip from the capture device to the playback device as `play`
        runs them: connect the interface's output to its input with a cable (or put a
        microphone in front of the speaker), then this plays a test signal (a maximum length
        sequence) on the playback device, records the capture device, finds the signal by
        cross-correlation and reports the round trip in ms and frames: StageRack's part (the
        playback buffer, periods × period) and the rest (converters, driver, USB), as the
        minimum, median and maximum of several runs, for each period size asked.

          --playback PCM      ALSA playback device (default: the config's, else "default")
          --capture PCM       ALSA capture device (default: the config's, else "default")
          --rate HZ           sample rate (default 48000)
          --period LIST       period sizes to try, e.g. 32,64,128 (default: the config's, else 128)
          --periods N         periods in the playback buffer (default 2)
          --capture-channels N  channels to open on the capture device (default 2); the one
                              where the signal comes back clearest is used
          --runs N            measurements per period size (default 5)
          --level DBFS        test signal level (default -12)
          --write             store the interface's part (the median, in frames) in the config
                              as hardwareLatency, for play's latency lines: in --config FILE,
                              else ~/.config/stagerack/stagerack.json
          --config FILE       read the devices from FILE only (and --write there)
          --no-config         read no config file

        Exit status 1 when no signal comes back (a clear message says why), 0 otherwise.
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(
            args,
            valueOptions: ["--playback", "--capture", "--rate", "--period", "--periods", "--capture-channels", "--runs", "--level",
                           "--config"],
            flagOptions: ["--write", "--no-config"])
        guard a.positional.isEmpty else { throw UsageError(message: "latency takes no file\n\n\(help)") }
        let environment = ProcessEnvironment.current
        // `--write` into a config file that does not exist yet creates it.
        let creating = a.flags.contains("--write") && a.options["--config"].map { ConfigFiles.read($0) == .missing } == true
        let candidates = ConfigFiles.candidates(
            explicit: a.options["--config"], noConfig: a.flags.contains("--no-config") || creating, environment: environment)
        let reader = SettingsReader(sampleFormats: PCMSampleFormat.allCases.map(\.rawValue), home: environment["HOME"])
        var options = a.options
        options["--period"] = nil  // a list here
        let (settings, _) = try SettingsResolution(reader: reader, environment: environment).userSettings(
            commandLine: { () throws(SettingsError) in try reader.fromCommandLine(options: options, flags: [], rack: nil) },
            candidates: candidates)
        let s = PlaySettings.builtIn(underSystemd: false).overridden(by: settings)
        let periodList = try a.options["--period"].map(parsePeriods) ?? [s.integer(.period) ?? 128]
        let runs = try a.int("--runs", range: 1...100) ?? 5
        let level = try a.double("--level", range: -60...0) ?? -12
        let measurement = LatencyMeasurement(
            playback: s.text(.playback) ?? "default", capture: s.text(.capture) ?? "default", rate: s.integer(.sampleRate) ?? 48000,
            periods: s.integer(.periods) ?? 2, captureChannels: s.integer(.captureChannels) ?? 2, runs: runs,
            gain: Float(pow(10, level / 20)))
        var hardware: [Int] = []
        for period in periodList {
            let outcome: Swift.Result<LatencyMeasurement.Result, LatencyAnalysis.Failure>
            do {
                // alsa-lib's own lines kept back: a device that does not open is explained
                // in words, as `play` does (DeviceErrorReport.swift).
                outcome = try ALSAMessages.held { try measurement.measure(period: period) }
            } catch let busy as LatencyMeasurement.TooManyXruns {
                Console.err("warning: period \(period): not measured: \(busy)")
                continue
            } catch let e as ALSAError {
                return reportDeviceError(e, command: "latency", playback: measurement.playback, capture: measurement.capture, deviceWait: nil)
            }
            switch outcome {
            case .success(let result):
                Console.out(result.report)
                hardware.append(result.hardwareMedian)
            case .failure(let failure):
                Console.err("error: period \(period): \(failure)")
                return 1
            }
        }
        guard !hardware.isEmpty else {
            Console.err("error: no period could be measured")
            return 1
        }
        if a.flags.contains("--write") {
            let frames = hardware.sorted()[hardware.count / 2]
            let path = a.options["--config"] ?? ConfigFiles.userPath(environment: environment)
            guard let path else { throw UsageError(message: "--write: no config path (set HOME or give --config FILE)") }
            try ConfigWriter.setInteger("hardwareLatency", frames, in: path)
            Console.err("wrote hardwareLatency \(frames) (frames at \(measurement.rate) Hz) to \(path)")
        }
        return 0
    }

    static func parsePeriods(_ text: String) throws -> [Int] {
        let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: " ") }
        let values = parts.compactMap { Int($0) }
        guard !parts.isEmpty, values.count == parts.count, values.allSatisfy({ (16...8192).contains($0) }) else {
            throw UsageError(message: "--period: a list of frame counts 16…8192 such as 32,64,128, not \"\(text)\"")
        }
        return values
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}

/// One `latency` session: opens the devices at each period size and measures the runs.
struct LatencyMeasurement {
    var playback: String
    var capture: String
    var rate: Int
    var periods: Int
    var captureChannels: Int
    var runs: Int
    var gain: Float
    /// A 4095-sample MLS (85 ms at 48 kHz): √4095 = 64 times over its sidelobes.
    let signal = LatencyAnalysis.mls(order: 12)

    struct Result {
        var report: String
        var hardwareMedian: Int
    }

    /// Every run spoilt by an xrun: the system is too busy for this period.
    struct TooManyXruns: Error, CustomStringConvertible {
        var runs: Int
        var last: ALSAError
        var description: String {
            "\(runs) runs were spoilt by xruns (last: \(last)): the system is too busy for this period"
        }
    }

    func measure(period: Int) throws -> Swift.Result<Result, LatencyAnalysis.Failure> {
        let p = try PCMStream(PCMRequest(device: playback, isCapture: false, sampleRate: rate, channels: 2, periodFrames: period, periods: periods))
        let c = try PCMStream(
            PCMRequest(device: capture, isCapture: true, sampleRate: rate, channels: captureChannels,
                       periodFrames: p.configuration.periodFrames, periods: max(periods, 4)))
        let probe = LatencyProbe(playback: p, capture: c)
        let lead = rate / 10  // 100 ms of noise before the signal
        let listen = rate / 4  // round trips up to a quarter second
        var trips: [Int] = []
        var last: LatencyAnalysis.Finding?
        var xruns = 0
        while trips.count < runs {
            let recording: LatencyProbe.Recording
            do {
                recording = try probe.record(signal: signal, gain: gain, lead: lead, listen: listen)
            } catch {
                xruns += 1
                if xruns > max(10 * runs, 30) { throw TooManyXruns(runs: xruns, last: error) }
                continue  // an xrun spoils the timeline: measure again
            }
            // The channel where the most came back after the signal was played.
            let loudest = recording.channels.max { energy($0, from: recording.signalStart) < energy($1, from: recording.signalStart) }!
            switch LatencyAnalysis.find(signal, in: loudest, earliest: recording.signalStart) {
            case .success(let f):
                trips.append(f.position - recording.signalStart)
                last = f
            case .failure(let failure):
                return .failure(failure)
            }
        }
        trips.sort()
        let buffering = probe.bufferingFrames
        let cfg = p.configuration
        func ms(_ frames: Int) -> String { formatNumber((Double(frames) / Double(rate) * 10000).rounded() / 10) }
        let median = trips[trips.count / 2]
        var line = "period \(cfg.periodFrames)×\(cfg.periods) at \(rate) Hz: round trip \(ms(median)) ms (\(median) frames), "
        line += "min \(ms(trips.first!)) / median \(ms(median)) / max \(ms(trips.last!)) ms over \(counted(trips.count, "run")); "
        line += "StageRack's buffering \(ms(buffering)) ms (\(buffering) frames = \(cfg.periods) × \(cfg.periodFrames)), "
        line += "the rest (converters, driver, USB) \(ms(median - buffering)) ms (\(median - buffering) frames)"
        if let last { line += "; signal \(formatNumber((last.signalDBFS * 10).rounded() / 10)) dBFS, noise \(formatNumber((last.noiseDBFS * 10).rounded() / 10)) dBFS" }
        if xruns > 0 { line += "; \(counted(xruns, "run")) spoilt by an xrun and repeated" }
        return .success(Result(report: line, hardwareMedian: median - buffering))
    }

    func energy(_ x: [Float], from start: Int) -> Float {
        var sum: Float = 0
        for i in min(start, x.count)..<x.count { sum += x[i] * x[i] }
        return sum
    }
}
