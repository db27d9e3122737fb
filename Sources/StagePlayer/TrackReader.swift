import CSampleRate
import CSndFile
import StageCore

/// A failure opening or reading a track, naming the file.
public struct TrackError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
    public init(_ message: String) { self.message = message }
}

/// Reads a sound file as a stream of stereo frames at the engine's rate: libsndfile
/// decodes, mono is copied to both sides (more than two channels: the first two),
/// libsamplerate converts the rate when the file's differs. A loop region (file frames) is
/// unrolled into the stream: after its last frame comes its first, sample-exact at the
/// file's rate; when the rates differ the resampler runs straight through the seam, so
/// the loop's average length at the engine's rate is exact and the seam is as smooth as
/// the file's own signal (no crossfade is needed).
///
/// Thread: one at a time. The control thread opens it and reads the preloads; then the
/// disk thread owns it (the hand-over is the thread's start).
final class TrackReader {
    let path: String
    let fileRate: Double
    let engineRate: Double
    let fileChannels: Int
    /// Frames in the file (the header's count; −1 when libsndfile does not know it).
    let fileFrames: Int
    /// The loop region in file frames, or nil.
    let loop: Range<Int>?
    private let file: OpaquePointer
    private let resampler: OpaquePointer?
    /// File frames decoded (interleaved, file channels), then as stereo.
    private let decoded: UnsafeMutablePointer<Float>
    private let stereo: UnsafeMutablePointer<Float>
    private let chunkFrames = 1024
    /// Stereo file frames not yet resampled.
    private var pendingStart = 0
    private var pendingCount = 0
    private var filePosition = 0
    private var fileEnded = false

    var ratio: Double { engineRate / fileRate }

    init(path: String, engineRate: Double, loop: LoopSetting) throws(TrackError) {
        self.path = path
        self.engineRate = engineRate
        var info = SF_INFO()
        guard let f = sf_open(path, Int32(SFM_READ), &info) else {
            throw TrackError("\(path): \(String(cString: sf_strerror(nil)))")
        }
        guard info.channels >= 1 && info.channels <= 64 else {
            sf_close(f)
            throw TrackError("\(path): its header claims \(info.channels) channels (the player reads 1…64)")
        }
        guard info.samplerate >= 1000 && info.samplerate <= 768_000 else {
            sf_close(f)
            throw TrackError("\(path): its header claims a sample rate of \(info.samplerate) Hz (the player reads 1000…768000 Hz)")
        }
        let r = engineRate / Double(info.samplerate)
        guard r >= 1.0 / 256 && r <= 256 else {
            sf_close(f)
            throw TrackError("\(path): cannot resample \(info.samplerate) Hz to \(Int(engineRate)) Hz")
        }
        file = f
        fileRate = Double(info.samplerate)
        fileChannels = Int(info.channels)
        fileFrames = info.seekable != 0 && info.frames >= 0 && info.frames < Int64(Int32.max) * 16 ? Int(info.frames) : -1
        switch loop {
        case .off: self.loop = nil
        case .whole: self.loop = fileFrames > 0 ? 0..<fileFrames : nil
        case .region(let a, let b):
            guard fileFrames < 0 || b <= fileFrames else {
                sf_close(f)
                throw TrackError("\(path): the loop ends at frame \(b), after the file's end (\(fileFrames) frames)")
            }
            self.loop = a..<b
        }
        if fileRate != engineRate {
            var error: Int32 = 0
            resampler = src_new(Int32(SRC_SINC_MEDIUM_QUALITY), 2, &error)
            if resampler == nil {
                sf_close(f)
                throw TrackError("\(path): libsamplerate: \(String(cString: src_strerror(error)))")
            }
        } else {
            resampler = nil
        }
        decoded = .allocate(capacity: chunkFrames * fileChannels)
        stereo = .allocate(capacity: chunkFrames * 2)
    }

    deinit {
        sf_close(file)
        if let resampler { src_delete(resampler) }
        decoded.deallocate()
        stereo.deallocate()
    }

    /// The file frame at `seconds`, within the file.
    func fileFrame(seconds: Double) -> Int {
        let f = Int((seconds * fileRate).rounded())
        return fileFrames > 0 ? min(max(f, 0), fileFrames) : max(f, 0)
    }

    /// Starts the stream again at file frame `frame`: the next `read` returns the engine-rate
    /// frames from there (the same frames every time: the resampler starts afresh).
    func start(atFileFrame frame: Int) {
        filePosition = frame
        sf_seek(file, sf_count_t(frame), SEEK_SET)
        if let resampler { src_reset(resampler) }
        pendingStart = 0
        pendingCount = 0
        fileEnded = false
    }

    /// Reads up to `frames` stereo frames (interleaved) at the engine's rate into `out`;
    /// fewer only at the end of the file (never with a loop). Returns how many.
    func read(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        resampler == nil ? readDirect(into: out, frames: frames) : readResampled(into: out, frames: frames)
    }

    /// Skips `frames` engine-rate frames (to continue after a preload).
    func skip(frames: Int, scratch: UnsafeMutablePointer<Float>, scratchFrames: Int) {
        if resampler == nil && frames > 0 {  // same rate: a seek (the loop folded in)
            var target = filePosition + frames
            if let loop, target >= loop.upperBound, loop.count > 0 {
                target = loop.lowerBound + (target - loop.lowerBound) % loop.count
            }
            if fileFrames >= 0 { target = min(target, fileFrames) }
            filePosition = target
            sf_seek(file, sf_count_t(target), SEEK_SET)
            return
        }
        var left = frames
        while left > 0 {
            let n = read(into: scratch, frames: min(left, scratchFrames))
            if n == 0 { return }
            left -= n
        }
    }

    private func readDirect(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        var done = 0
        while done < frames {
            let n = readStereo(into: out + 2 * done, frames: min(frames - done, chunkFrames))
            if n == 0 { break }
            done += n
        }
        return done
    }

    private func readResampled(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        var done = 0
        while done < frames {
            if pendingCount == 0 && !fileEnded {
                pendingStart = 0
                pendingCount = readStereo(into: stereo, frames: chunkFrames)
                if pendingCount == 0 { fileEnded = true }
            }
            var data = SRC_DATA()
            data.data_in = UnsafePointer(stereo + 2 * pendingStart)
            data.input_frames = CLong(pendingCount)
            data.data_out = out + 2 * done
            data.output_frames = CLong(frames - done)
            data.src_ratio = ratio
            data.end_of_input = fileEnded ? 1 : 0
            if src_process(resampler, &data) != 0 { break }
            pendingStart += Int(data.input_frames_used)
            pendingCount -= Int(data.input_frames_used)
            done += Int(data.output_frames_gen)
            if fileEnded && data.output_frames_gen == 0 { break }
        }
        return done
    }

    /// Decodes up to `frames` file frames as stereo, following the loop. 0 at the end.
    private func readStereo(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        var done = 0
        while done < frames {
            var want = frames - done
            if let loop {
                if filePosition >= loop.upperBound {
                    filePosition = loop.lowerBound
                    sf_seek(file, sf_count_t(filePosition), SEEK_SET)
                }
                want = min(want, loop.upperBound - filePosition)
            }
            let got = Int(sf_readf_float(file, decoded, sf_count_t(min(want, chunkFrames))))
            if got <= 0 {
                guard let loop, filePosition > loop.lowerBound else { break }
                filePosition = loop.upperBound  // a short file: wrap now
                continue
            }
            let dst = out + 2 * done
            for f in 0..<got {
                let l = decoded[f * fileChannels]
                let r = fileChannels > 1 ? decoded[f * fileChannels + 1] : l
                dst[2 * f] = l
                dst[2 * f + 1] = r
            }
            filePosition += got
            done += got
        }
        return done
    }
}
