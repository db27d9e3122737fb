import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// The guided soundcheck's take from the live input: an ALSA capture device opened the
/// way `play` opens it (`PCMStream`), read for the guide's length, the singer told what to
/// do as it goes (`progress`, about ten times a second).
///
/// Nothing else runs meanwhile (no rack, no playback), so the take is read on the calling
/// thread in periods of `periodFrames`, with a buffer of `periods` of them: a slow terminal
/// costs at most an xrun, which is recovered and counted (the take then has a gap, said in
/// `xruns`). A device that keeps no time (alsa-lib's `file` plugin over `null`, as the
/// tests use) is paced to the wall clock, so the guide's countdown is real there too.
/// Thread: control (the command's main thread).
public struct SoundcheckCapture {
    public var device: String
    public var sampleRate: Int
    public var channels: Int
    public var format: PCMSampleFormat?
    public var periodFrames = 1024
    public var periods = 8

    /// One moment of the take for the guide: where it is, and the input's peak since the
    /// last call (dBFS; −120 for digital silence).
    public struct Progress: Sendable {
        public var phase: SoundcheckGuide.Phase
        public var seconds: Double
        public var peakDB: Float
    }

    public struct Take: Sendable {
        public var audio: AudioData
        /// Xruns recovered during the take (each one a short gap).
        public var xruns: Int
        /// The device paced by the wall clock (it keeps no time of its own).
        public var paced: Bool
        public var configuration: PCMConfiguration
    }

    public init(device: String, sampleRate: Int, channels: Int, format: PCMSampleFormat? = nil) {
        self.device = device
        self.sampleRate = sampleRate
        self.channels = channels
        self.format = format
    }

    /// Opens the device (throwing `ALSAError` as `play` would) and records the guide's take.
    public func record(guide: SoundcheckGuide, progress: (Progress) -> Void) throws(ALSAError) -> Take {
        let stream = try PCMStream(
            PCMRequest(device: device, isCapture: true, sampleRate: sampleRate, channels: channels, periodFrames: periodFrames,
                       periods: periods, format: format))
        let c = stream.configuration
        let rate = Double(c.sampleRate)
        let total = guide.totalFrames(sampleRate: rate)
        let storage = BusStorage(bufferCount: c.channels, maxFrames: c.periodFrames)
        let bus = storage.bus(first: 0, channels: c.channels)
        var take = [[Float]](repeating: [], count: c.channels)
        for i in take.indices { take[i].reserveCapacity(total) }
        let paced = !stream.keepsTime
        var xruns = 0
        var peak: Float = 0
        var nextReport = 0
        let start = monotonicSeconds()
        try stream.start()
        var done = 0
        while done < total {
            let n = min(c.periodFrames, total - done)
            do {
                try stream.read(into: bus, frames: n)
            } catch {
                xruns += 1
                try stream.recover(error)
                try stream.start()
                continue
            }
            for ch in 0..<c.channels {
                let samples = UnsafeBufferPointer(start: bus[ch], count: n)
                take[ch].append(contentsOf: samples)
                for v in samples { peak = max(peak, abs(v)) }
            }
            done += n
            if paced {
                let due = start + Double(done) / rate - monotonicSeconds()
                if due > 0 { usleep(UInt32(due * 1_000_000)) }
            }
            if done >= nextReport || done == total {
                let seconds = Double(done) / rate
                progress(Progress(phase: guide.phase(at: seconds), seconds: seconds, peakDB: peak > 0 ? 20 * log10f(peak) : -120))
                peak = 0
                nextReport = done + c.sampleRate / 10
            }
        }
        stream.drop()
        return Take(audio: AudioData(channels: take, sampleRate: rate), xruns: xruns, paced: paced, configuration: c)
    }
}
