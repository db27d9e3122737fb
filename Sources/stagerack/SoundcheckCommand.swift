import Foundation
import StageCore
import StageDrivers

/// `stagerack soundcheck`: the strip's values proposed from a recording of the singer
/// (`Soundcheck`), printed, and with --write written into the rack keeping its text.
/// Thread: main (the command's one control thread).
enum SoundcheckCommand {
    static let help = """
        usage: stagerack soundcheck RACK [--input FILE] [--write]
                                    [--quiet SECONDS] [--sing SECONDS]
                                    [--capture PCM] [--rate HZ] [--capture-channels N] [--format FORMAT]
                                    [--config FILE | --no-config]

        The guided soundcheck. Without --input it records the live input (the capture
        device `play` would open) and guides the singer on the terminal: stay quiet for a
        few seconds (the room's noise floor), then sing and speak at show level for about
        20 s (loud phrases, soft words, a few s and sh sounds), with a countdown. With
        --input FILE it reads such a recording instead (any format libsndfile reads).
        StageRack proposes, from the rack's first unit of each type:
          the input trim   (gain.gain, else eq.globalGain): loud phrases at -24 dBFS RMS (peaks near -9)
          the high-pass    (the eq's highPass band): under the voice's lowest notes, 60-160 Hz
          the compressor   (dynamics.threshold): about 5 dB of gain reduction on loud phrases
          the de-esser     (deesser.threshold): about 6 dB of reduction on the sibilants
          the gate         (dynamics.expansionThreshold): 10 dB over the noise floor
        The two thresholds are found by rendering the recording through the rack itself
        and reading the units' gain-reduction meters. A silent or clipping recording, or
        one with no voice in it, is refused with what to do; nothing is written then.
          --input FILE        a recording (3 s of silence, then the voice) instead of the live input
          --write             write the values into RACK (its comments and layout kept)
          --quiet SECONDS     live: the silence at the start (default 3, 2.5…60)
          --sing SECONDS      live: the singing after it (default 20, 5…120)
          --capture PCM       live: ALSA capture device (default: the config's, the rack's, else "default")
          --rate HZ           live: sample rate (default: the config's, the rack's, else 48000)
          --capture-channels N  live: channels to open (default 2); the rack's input unit's
                              channel is used, else their mean
          --format FORMAT     live: force FLOAT_LE, S32_LE, S24_LE, S24_3LE or S16_LE
          --config FILE       live: read the devices from FILE only
          --no-config         live: read no config file
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(
            args, valueOptions: ["--input", "--quiet", "--sing"] + SoundcheckLive.deviceOptions,
            flagOptions: ["--write", "--no-config"])
        guard a.positional.count == 1 else { throw UsageError(message: "soundcheck takes one rack file\n\n\(help)") }
        let path = a.positional[0]
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw UsageError(message: "cannot read \(path)")
        }
        let rack = try RackReader(registry: Registry.standard).read(text: text, file: path)
        let rate = rack.io.sampleRate ?? 48000
        let file: AudioData
        let input: String
        if let inputPath = a.options["--input"] {
            for o in ["--quiet", "--sing"] + SoundcheckLive.deviceOptions where a.options[o] != nil {
                throw UsageError(message: "\(o) is for the live input: not with --input")
            }
            input = inputPath
            file = try readFile(inputPath)
        } else {
            let live = try SoundcheckLive(a, rack: rack, rackPath: path)
            guard let take = live.record() else { return 1 }  // the device's problem, reported
            input = "the live input (\(live.capture.device))"
            file = take
        }
        let voice = mono(try resampled(file, to: rate, input: input), rack: rack)
        let proposal: Soundcheck.Proposal
        do {
            for channel in file.channels { try SoundcheckAnalysis.checkClipping(channel) }
            proposal = try Soundcheck.propose(text: text, file: path, registry: Registry.standard, voice: voice, sampleRate: rate)
        } catch let e as SoundcheckError {
            Log.error("stagerack soundcheck: \(input): \(e.message); \(path) is unchanged")
            return 1
        }
        Console.out("soundcheck of \(input): \(proposal.summary)")
        let width = proposal.settings.map { $0.unit.count + $0.parameter.count + 1 }.max() ?? 0
        for s in proposal.settings {
            let name = "\(s.unit).\(s.parameter)"
            let padded = name + String(repeating: " ", count: max(0, width - name.count))
            Console.out("  \(padded)  \(s.json.count < 6 ? s.json + String(repeating: " ", count: 6 - s.json.count) : s.json)  \(s.reason)")
        }
        for m in proposal.missing { Console.out("missing: \(m)") }
        for n in proposal.notes { Console.out("note: \(n)") }
        guard a.flags.contains("--write") else {
            if !proposal.settings.isEmpty { Console.out("(give --write to write these into \(path))") }
            return 0
        }
        guard !proposal.settings.isEmpty else {
            Console.out("nothing to write: \(path) has none of the strip's units")
            return 1
        }
        try RackFileEdit.apply(to: path) { text in try proposal.applied(to: text) }
        Console.out("written into \(path)")
        return 0
    }

    /// The recording at `path`, or the problem with it in words.
    static func readFile(_ path: String) throws -> AudioData {
        do {
            return try AudioData.read(path: path)
        } catch {
            throw InputFileProblem(path: path, error: error)
        }
    }

    /// `audio` at the rack's rate (`input` names it in a problem).
    static func resampled(_ audio: AudioData, to rate: Double, input: String) throws -> AudioData {
        do {
            return try audio.resampled(to: rate)
        } catch {
            throw UsageError(message: "\(input): cannot resample \(Int(audio.sampleRate)) Hz to the rack's \(Int(rate)) Hz: \(error)")
        }
    }

    /// The channel the rack's input unit takes (its `channel` setting), else the mean of all.
    static func mono(_ audio: AudioData, rack: RackDescription) -> [Float] {
        let channels = audio.channels
        guard channels.count > 1 else { return channels.first ?? [] }
        if let input = rack.units.first(where: { $0.type == "input" }), let c = input.settings.int("channel"), c <= channels.count {
            return channels[c - 1]
        }
        let scale = 1 / Float(channels.count)
        return (0..<audio.frameCount).map { i in channels.reduce(0) { $0 + $1[i] } * scale }
    }
}
