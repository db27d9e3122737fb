import CSndFile
import CSampleRate
import StageCore

/// A failure reading or writing an audio file, naming the file and libsndfile's reason.
public struct AudioFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    public var description: String { "\(path): \(message)" }
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
}

/// Audio read whole into memory: one array per channel.
public struct AudioData: Sendable {
    public var channels: [[Float]]
    public var sampleRate: Double
    public var frameCount: Int { channels.first?.count ?? 0 }

    public init(channels: [[Float]], sampleRate: Double) {
        self.channels = channels
        self.sampleRate = sampleRate
    }

    /// Sample rates a file may claim: libsndfile passes any header value on, so a broken
    /// or hostile header is stopped here rather than trusted.
    public static let sampleRates = 1000.0...768_000
    /// The most channels a file may have (the input unit counts 1…64).
    public static let maximumChannels = 64
    /// The most samples (frames × channels) read into memory: 1 GiB of floats, 46 minutes
    /// of stereo at 48 kHz. The header's frame count is only a hint; reading stops at the
    /// end of the data or here.
    public static let maximumSamples = 1 << 28

    /// Reads any format libsndfile knows (WAV, FLAC, AIFF, OGG, ...), in bounded chunks,
    /// after checking the header's rate and channels. Thread: control.
    public static func read(path: String) throws(AudioFileError) -> AudioData {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError(path: path, message: String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        let channels = Int(info.channels)
        guard channels >= 1 && channels <= maximumChannels else {
            throw AudioFileError(path: path, message: "its header claims \(channels) channels (StageRack reads 1…\(maximumChannels))")
        }
        let rate = Double(info.samplerate)
        guard sampleRates.contains(rate) else {
            throw AudioFileError(
                path: path,
                message: "its header claims a sample rate of \(info.samplerate) Hz (StageRack reads \(Int(sampleRates.lowerBound))…\(Int(sampleRates.upperBound)) Hz)")
        }
        let interleaved = try readInterleaved(file, path: path, channels: channels, hint: Int(info.frames))
        let frames = interleaved.count / channels
        var out = Array(repeating: [Float](repeating: 0, count: frames), count: channels)
        interleaved.withUnsafeBufferPointer { src in
            for c in 0..<channels {
                out[c].withUnsafeMutableBufferPointer { dst in
                    for f in 0..<frames { dst[f] = src[f * channels + c] }
                }
            }
        }
        return AudioData(channels: out, sampleRate: rate)
    }

    /// Reads frames in chunks until libsndfile has no more, at most `maximumSamples`.
    static func readInterleaved(
        _ file: OpaquePointer, path: String, channels: Int, hint: Int
    ) throws(AudioFileError) -> [Float] {
        let chunkFrames = 1 << 16
        let limitFrames = maximumSamples / channels
        var samples: [Float] = []
        samples.reserveCapacity(min(max(hint, 0), limitFrames, 1 << 22) * channels)
        var chunk = [Float](repeating: 0, count: chunkFrames * channels)
        var total = 0
        while true {
            let got = Int(chunk.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(chunkFrames)) })
            guard got > 0 else { break }
            guard total + got <= limitFrames else {
                let minutes = Int(Double(limitFrames) / 48000 / 60)
                throw AudioFileError(
                    path: path,
                    message: "longer than StageRack reads into memory (\(limitFrames) frames of \(channels) channels, \(minutes) min at 48 kHz)")
            }
            samples.append(contentsOf: chunk[0..<(got * channels)])
            total += got
            if got < chunkFrames { break }
        }
        return samples
    }

    /// The same audio at another sample rate, through libsamplerate's best sinc converter.
    /// Thread: control.
    public func resampled(to rate: Double) throws(AudioFileError) -> AudioData {
        guard rate != sampleRate, frameCount > 0 else { return self }
        let ratio = rate / sampleRate
        guard ratio >= 1.0 / 256 && ratio <= 256 else {
            throw AudioFileError(
                path: "", message: "cannot resample \(Int(sampleRate)) Hz to \(Int(rate)) Hz (libsamplerate converts up to 256 times up or down)")
        }
        let outFrames = Int((Double(frameCount) * ratio).rounded(.up)) + 16
        guard outFrames * channels.count <= Self.maximumSamples else {
            throw AudioFileError(path: "", message: "too long to resample to \(Int(rate)) Hz in memory")
        }
        var result: [[Float]] = []
        for channel in channels {
            var output = [Float](repeating: 0, count: outFrames)
            var generated = 0
            let error: Int32 = channel.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { out in
                    var data = SRC_DATA()
                    data.data_in = input.baseAddress
                    data.input_frames = CLong(frameCount)
                    data.data_out = out.baseAddress
                    data.output_frames = CLong(outFrames)
                    data.src_ratio = ratio
                    data.end_of_input = 1
                    let e = src_simple(&data, Int32(SRC_SINC_BEST_QUALITY), 1)
                    generated = Int(data.output_frames_gen)
                    return e
                }
            }
            if error != 0 {
                throw AudioFileError(path: "", message: "resampling failed: \(String(cString: src_strerror(error)))")
            }
            result.append(Array(output.prefix(generated)))
        }
        return AudioData(channels: result, sampleRate: rate)
    }
}

/// Writes audio to a file block by block; the format follows the extension: .wav 32-bit
/// integer (WAVE_FORMAT_EXTENSIBLE), .w64/.caf 32-bit float, .aiff/.aif and .flac 24-bit,
/// .ogg Vorbis. Thread: one (control or the
/// offline render loop, which is not real-time).
public final class AudioFileWriter {
    public let path: String
    public let channels: Int
    private var file: OpaquePointer?
    private var interleaved: UnsafeMutablePointer<Float>
    private let capacity: Int

    /// The libsndfile format for `path`'s extension, or an error naming the ones known.
    /// `.wav` is 32-bit integer PCM with a WAVE_FORMAT_EXTENSIBLE header: every tool reads
    /// it without a warning (sox warns on every float WAV libsndfile can write, plain or
    /// extensible), and the output stage keeps the signal under full scale, so it holds
    /// more than the float stream's 24-bit mantissa at any level above −48 dBFS.
    /// `.w64` and `.caf` are 32-bit float. Thread: any.
    public static func format(forPath path: String) throws(AudioFileError) -> Int32 {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let ext = name.contains(".") ? name.split(separator: ".").last.map { $0.lowercased() } ?? "" : ""
        switch ext {
        case "wav": return Int32(SF_FORMAT_WAVEX | SF_FORMAT_PCM_32)
        case "w64": return Int32(SF_FORMAT_W64 | SF_FORMAT_FLOAT)
        case "caf": return Int32(SF_FORMAT_CAF | SF_FORMAT_FLOAT)
        case "aiff", "aif": return Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_24)
        case "flac": return Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24)
        case "ogg", "oga": return Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        default:
            let given = ext.isEmpty ? "(no extension)" : "\".\(ext)\""
            throw AudioFileError(
                path: path, message: "unknown output format \(given) (use .wav, .flac, .aiff, .ogg, .w64 or .caf)")
        }
    }

    public init(path: String, channels: Int, sampleRate: Double, maxFrames: Int) throws(AudioFileError) {
        self.path = path
        self.channels = channels
        let format = try Self.format(forPath: path)
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = format
        guard let f = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioFileError(path: path, message: String(cString: sf_strerror(nil)))
        }
        // Integer formats clip a sample beyond full scale instead of wrapping it round.
        sf_command(f, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        file = f
        capacity = maxFrames
        interleaved = .allocate(capacity: maxFrames * channels)
    }

    deinit {
        if let file { sf_close(file) }
        interleaved.deallocate()
    }

    /// Appends `frames` frames of `bus` (its first `channels` channels).
    public func write(_ bus: AudioBus, frames: Int) throws(AudioFileError) {
        precondition(frames <= capacity)
        if channels == 2 && bus.channelCount >= 2 {
            let l = bus[0]
            let r = bus[1]
            for f in 0..<frames {
                interleaved[2 * f] = l[f]
                interleaved[2 * f + 1] = r[f]
            }
        } else {
            for c in 0..<channels {
                let src = bus[min(c, bus.channelCount - 1)]
                for f in 0..<frames { interleaved[f * channels + c] = src[f] }
            }
        }
        guard let file else { return }
        let written = sf_writef_float(file, interleaved, sf_count_t(frames))
        if written != frames { throw AudioFileError(path: path, message: String(cString: sf_strerror(file))) }
    }

    /// Appends whole channels.
    public func write(channels data: [[Float]]) throws(AudioFileError) {
        let frames = data.first?.count ?? 0
        var done = 0
        while done < frames {
            let n = min(capacity, frames - done)
            for f in 0..<n {
                for c in 0..<channels { interleaved[f * channels + c] = data[min(c, data.count - 1)][done + f] }
            }
            guard let file else { return }
            if sf_writef_float(file, interleaved, sf_count_t(n)) != n {
                throw AudioFileError(path: path, message: String(cString: sf_strerror(file)))
            }
            done += n
        }
    }

    /// Finishes the file (also done on deinit).
    public func close() throws(AudioFileError) {
        guard let f = file else { return }
        file = nil
        if sf_close(f) != 0 { throw AudioFileError(path: path, message: "could not finish the file") }
    }
}
