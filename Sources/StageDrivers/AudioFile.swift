import CSndFile
import CSampleRate
import StageCore

/// A failure reading or writing an audio file, naming the file and libsndfile's reason.
public struct AudioFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    public var description: String { "\(path): \(message)" }
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

    /// Reads any format libsndfile knows (WAV, FLAC, AIFF, OGG, ...). Thread: control.
    public static func read(path: String) throws(AudioFileError) -> AudioData {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError(path: path, message: String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        let channels = Int(info.channels)
        let frames = Int(info.frames)
        var interleaved = [Float](repeating: 0, count: max(frames * channels, 1))
        let got = Int(interleaved.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(frames)) })
        var out = Array(repeating: [Float](repeating: 0, count: got), count: channels)
        for f in 0..<got {
            for c in 0..<channels { out[c][f] = interleaved[f * channels + c] }
        }
        return AudioData(channels: out, sampleRate: Double(info.samplerate))
    }

    /// The same audio at another sample rate, through libsamplerate's best sinc converter.
    /// Thread: control.
    public func resampled(to rate: Double) throws(AudioFileError) -> AudioData {
        guard rate != sampleRate, frameCount > 0 else { return self }
        let ratio = rate / sampleRate
        let outFrames = Int((Double(frameCount) * ratio).rounded(.up)) + 16
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

/// Writes audio to a file block by block; the format follows the extension: .wav/.w64/.caf
/// 32-bit float, .aiff/.aif and .flac 24-bit, .ogg Vorbis. Thread: one (control or the
/// offline render loop, which is not real-time).
public final class AudioFileWriter {
    public let path: String
    public let channels: Int
    private var file: OpaquePointer?
    private var interleaved: UnsafeMutablePointer<Float>
    private let capacity: Int

    public init(path: String, channels: Int, sampleRate: Double, maxFrames: Int) throws(AudioFileError) {
        self.path = path
        self.channels = channels
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        var format: Int32
        switch ext {
        case "wav": format = Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        case "w64": format = Int32(SF_FORMAT_W64 | SF_FORMAT_FLOAT)
        case "caf": format = Int32(SF_FORMAT_CAF | SF_FORMAT_FLOAT)
        case "aiff", "aif": format = Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_24)
        case "flac": format = Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24)
        case "ogg", "oga": format = Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        default:
            throw AudioFileError(
                path: path, message: "unknown output format \".\(ext)\" (use .wav, .flac, .aiff, .ogg, .w64 or .caf)")
        }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = format
        guard let f = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioFileError(path: path, message: String(cString: sf_strerror(nil)))
        }
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
        for f in 0..<frames {
            for c in 0..<channels { interleaved[f * channels + c] = bus[min(c, bus.channelCount - 1)][f] }
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
