import CSampleRate
import CSndFile
import StageCore

/// Audio fed to an offline render block by block: the `--input` file streamed from disk, or
/// audio already in memory (the demo voice, tests). Thread: the offline render loop only.
public protocol RenderSource: AnyObject {
    /// Channels written by `read` (the host input's channels).
    var channelCount: Int { get }
    /// Frames the source expects to deliver (a header's claim, for progress), or nil.
    var expectedFrames: Int? { get }
    /// Writes the next `frames` frames into the first `channelCount` channels of `bus` and
    /// returns how many were audio; the rest of the block is zeroed. 0 means the end (a
    /// file that cannot be read further ends there, as a short read does).
    func read(into bus: AudioBus, frames: Int) -> Int
}

/// `AudioData` in memory as a `RenderSource`. Thread: the render loop.
public final class MemorySource: RenderSource {
    public let audio: AudioData
    private var position = 0
    public init(_ audio: AudioData) { self.audio = audio }
    public var channelCount: Int { audio.channels.count }
    public var expectedFrames: Int? { audio.frameCount }

    public func read(into bus: AudioBus, frames: Int) -> Int {
        let available = max(0, min(frames, audio.frameCount - position))
        for c in 0..<min(channelCount, bus.channelCount) {
            let dst = bus[c]
            audio.channels[c].withUnsafeBufferPointer { p in
                if available > 0 { dst.update(from: p.baseAddress! + position, count: available) }
            }
            if available < frames { (dst + available).update(repeating: 0, count: frames - available) }
        }
        position += available
        return available
    }
}

/// An audio file read through libsndfile a block at a time, in constant memory whatever
/// its length: the first `channels` of its channels, resampled to `rate` with
/// libsamplerate's streaming API (best sinc, the same converter `AudioData.resampled`
/// uses) when the file's rate differs. Header checks are `AudioData.read`'s.
/// Thread: one (the offline render loop; opened on the same thread before it).
public final class AudioFileStream: RenderSource {
    public let path: String
    /// The file's own channels and rate.
    public let fileChannels: Int
    public let fileRate: Double
    /// Channels delivered (the first ones of the file).
    public let channelCount: Int
    public let rate: Double
    /// The header's frame count (at the file's rate); libsndfile trusts the header.
    public let headerFrames: Int
    public var expectedFrames: Int? { headerFrames > 0 ? Int(Double(headerFrames) * rate / fileRate) : nil }

    /// Frames read from the file per call.
    static let chunkFrames = 4096
    private var file: OpaquePointer?
    /// What libsndfile hands over: `chunkFrames` × `fileChannels`.
    private let raw: UnsafeMutablePointer<Float>
    /// The kept channels, interleaved (the resampler's input); `raw` itself when all are kept.
    private let kept: UnsafeMutablePointer<Float>
    private var keptFrames = 0
    private var keptOffset = 0
    private var fileEnded = false
    /// Resampler state and its interleaved output; nil at the file's own rate.
    private var converter: OpaquePointer?
    private let converted: UnsafeMutablePointer<Float>
    private let ratio: Double
    private var finished = false

    /// Opens `path` and checks its header. Thread: the render loop's.
    public init(path: String, channels: Int? = nil, rate: Double? = nil) throws(AudioFileError) {
        self.path = path
        var info = SF_INFO()
        guard let f = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError(path: path, message: String(cString: sf_strerror(nil)))
        }
        let fileChannels = Int(info.channels)
        guard fileChannels >= 1 && fileChannels <= AudioData.maximumChannels else {
            sf_close(f)
            throw AudioFileError(
                path: path, message: "its header claims \(fileChannels) channels (StageRack reads 1…\(AudioData.maximumChannels))")
        }
        let fileRate = Double(info.samplerate)
        guard AudioData.sampleRates.contains(fileRate) else {
            sf_close(f)
            throw AudioFileError(
                path: path,
                message: "its header claims a sample rate of \(info.samplerate) Hz (StageRack reads \(Int(AudioData.sampleRates.lowerBound))…\(Int(AudioData.sampleRates.upperBound)) Hz)")
        }
        let target = rate ?? fileRate
        ratio = target / fileRate
        guard ratio >= 1.0 / 256 && ratio <= 256 else {
            sf_close(f)
            throw AudioFileError(
                path: path, message: "cannot resample \(Int(fileRate)) Hz to \(Int(target)) Hz (libsamplerate converts up to 256 times up or down)")
        }
        file = f
        self.fileChannels = fileChannels
        self.fileRate = fileRate
        self.rate = target
        channelCount = min(max(channels ?? fileChannels, 1), fileChannels)
        headerFrames = Int(max(info.frames, 0))
        raw = .allocate(capacity: Self.chunkFrames * fileChannels)
        kept = channelCount == fileChannels ? raw : .allocate(capacity: Self.chunkFrames * channelCount)
        converted = .allocate(capacity: Self.chunkFrames * channelCount)
        if target != fileRate {
            var error: Int32 = 0
            converter = src_new(Int32(SRC_SINC_BEST_QUALITY), Int32(channelCount), &error)
            if converter == nil {
                throw AudioFileError(path: path, message: "resampling failed: \(String(cString: src_strerror(error)))")
            }
        }
    }

    deinit {
        if let file { sf_close(file) }
        if let converter { src_delete(converter) }
        if kept != raw { kept.deallocate() }
        raw.deallocate()
        converted.deallocate()
    }

    /// True when the file holds no frame at all (read ahead once). Thread: the render loop.
    public func isEmpty() -> Bool {
        if keptFrames == 0 && !fileEnded { refill() }
        return keptFrames == 0
    }

    public func read(into bus: AudioBus, frames: Int) -> Int {
        var done = 0
        while done < frames && !finished {
            let got = converter == nil ? copyKept(into: bus, at: done, frames: frames - done) : resample(into: bus, at: done, frames: frames - done)
            if got == 0 && finished { break }
            done += got
        }
        for c in 0..<min(channelCount, bus.channelCount) where done < frames {
            (bus[c] + done).update(repeating: 0, count: frames - done)
        }
        return done
    }

    /// At the file's rate: deinterleaves what is read ahead into `bus`.
    private func copyKept(into bus: AudioBus, at start: Int, frames: Int) -> Int {
        if keptOffset == keptFrames {
            refill()
            if keptFrames == 0 {
                finished = true
                return 0
            }
        }
        let n = min(frames, keptFrames - keptOffset)
        deinterleave(kept + keptOffset * channelCount, frames: n, into: bus, at: start)
        keptOffset += n
        return n
    }

    /// Through libsamplerate: feeds it what is read ahead and deinterleaves what it makes.
    private func resample(into bus: AudioBus, at start: Int, frames: Int) -> Int {
        if keptOffset == keptFrames && !fileEnded { refill() }
        var data = SRC_DATA()
        data.data_in = UnsafePointer(kept + keptOffset * channelCount)
        data.input_frames = CLong(keptFrames - keptOffset)
        data.data_out = converted
        data.output_frames = CLong(min(frames, Self.chunkFrames))
        data.src_ratio = ratio
        data.end_of_input = fileEnded && keptOffset == keptFrames ? 1 : 0
        if src_process(converter, &data) != 0 {
            finished = true
            return 0
        }
        keptOffset += Int(data.input_frames_used)
        let made = Int(data.output_frames_gen)
        // The end, or (never seen) a converter that neither takes nor makes: never hang.
        if made == 0 && (data.end_of_input == 1 || data.input_frames_used == 0) { finished = true }
        deinterleave(converted, frames: made, into: bus, at: start)
        return made
    }

    /// Reads the next chunk from the file into `kept` (the kept channels, interleaved).
    private func refill() {
        keptOffset = 0
        keptFrames = 0
        guard let file, !fileEnded else { return }
        let got = Int(sf_readf_float(file, raw, sf_count_t(Self.chunkFrames)))
        if got < Self.chunkFrames { fileEnded = true }
        guard got > 0 else { return }
        if kept != raw {
            for f in 0..<got {
                let src = raw + f * fileChannels
                let dst = kept + f * channelCount
                for c in 0..<channelCount { dst[c] = src[c] }
            }
        }
        keptFrames = got
    }

    private func deinterleave(_ src: UnsafeMutablePointer<Float>, frames: Int, into bus: AudioBus, at start: Int) {
        let channels = channelCount
        if channels == 1 {
            (bus[0] + start).update(from: src, count: frames)
            return
        }
        for c in 0..<min(channels, bus.channelCount) {
            let dst = bus[c] + start
            var s = src + c
            for f in 0..<frames {
                dst[f] = s.pointee
                s += channels
            }
        }
    }
}
