import StageCore

/// An `--input` file made ready for a rack rendered offline: the channels the rack's input
/// units take, at the rack's rate, streamed from disk (constant memory whatever its
/// length). Problems of the file are reported as the file's, before the rack is compiled
/// (so a 6-channel or 8 kHz file never shows up as a unit's error).
/// Thread: control (the offline render loop that then reads it).
public struct RenderInput {
    /// The audio to feed the rack (its channels are the host input's).
    public var source: AudioFileStream
    /// What was done to the file, one line each (channels taken, resampling), for the log.
    public var notes: [String]

    /// Takes from `file` the channels the input units of `rack` ask for and resamples them
    /// to `rate` (libsamplerate). An input unit with a `channel` setting takes that channel;
    /// one without takes all of a mono or stereo file and the first two of a wider one.
    public init(path: String, rack: RackDescription, rate: Double) throws(AudioFileError) {
        notes = []
        let header = try AudioFileStream(path: path)
        let available = header.fileChannels
        let inputs = rack.units.filter { $0.type == "input" }
        let chosen = inputs.compactMap { unit in unit.settings.int("channel").map { (unit: unit.id, channel: $0) } }
        if let widest = chosen.max(by: { $0.channel < $1.channel }), widest.channel > available {
            throw AudioFileError(
                path: path,
                message: "has \(Self.count(available, "channel")), but input unit \"\(widest.unit)\" takes channel \(widest.channel) (its \"channel\" setting)")
        }
        let takesAll = inputs.contains { $0.settings.int("channel") == nil }
        var keep = takesAll ? min(available, 2) : 1
        keep = max(keep, chosen.map(\.channel).max() ?? 1)
        if inputs.isEmpty {
            notes.append("the rack has no input unit: \(path) is not heard")
            keep = 1
        } else if keep < available {
            let taken = chosen.isEmpty ? (keep == 1 ? "channel 1" : "channels 1 and 2") : Self.list(chosen.map(\.channel))
            notes.append("\(path) has \(available) channels: the rack's input takes \(taken)")
        }
        keep = min(keep, available)
        if header.fileRate != rate {
            notes.append("resampling \(path) from \(Self.hertz(header.fileRate)) Hz to \(Self.hertz(rate)) Hz (the rack's rate)")
        }
        source = keep == available && header.fileRate == rate ? header : try AudioFileStream(path: path, channels: keep, rate: rate)
    }

    static func count(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }

    static func list(_ channels: [Int]) -> String {
        let unique = Array(Set(channels)).sorted()
        return unique.count == 1 ? "channel \(unique[0])" : "channels " + unique.map(String.init).joined(separator: ", ")
    }

    static func hertz(_ rate: Double) -> String { formatNumber(rate) }
}
