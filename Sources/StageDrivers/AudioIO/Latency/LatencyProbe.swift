import StageCore

/// Plays a test signal and records what comes back, with the stream set-up and loop of
/// `LiveAudio` (playback pre-filled with its whole buffer of silence and never started by
/// threshold, capture linked to it and started explicitly, then each period: read one
/// capture period, write one playback period), so the round trip it measures is the one
/// `play` gives a sound from the microphone to the speakers.
///
/// Frames are counted on one timeline: capture period k is frames kP…kP+P−1, and what is
/// written after reading it is the output of that same period (as `play` writes the
/// rack's output for the input it just read). A signal written from timeline frame `lead`
/// and found at recording frame `lead + L` has a round trip of L frames. With the streams
/// started together, StageRack's part is the playback buffer (periods × period: the wait
/// for the capture period to fill is inside it); the rest is the interface's.
/// Thread: one (the `latency` command's); not real-time (it allocates nothing while running).
public final class LatencyProbe {
    public let playback: PCMStream
    public let capture: PCMStream
    public let linked: Bool

    public struct Recording: Sendable {
        /// What the capture device gave, per channel, from its first frame.
        public var channels: [[Float]]
        /// The timeline frame where the signal's first sample was written.
        public var signalStart: Int
    }

    public init(playback: PCMStream, capture: PCMStream) {
        self.playback = playback
        self.capture = capture
        linked = capture.link(playback)
    }

    deinit { if linked { capture.unlink() } }

    /// StageRack's buffering on this pair of streams: the playback buffer, in frames.
    public var bufferingFrames: Int { playback.configuration.bufferFrames }

    /// Plays `lead` frames of silence, `signal` (times `gain`, on every playback channel),
    /// then silence for `listen` frames, recording throughout. Throws on any ALSA error
    /// (an xrun spoils the timeline: the caller runs again).
    public func record(signal: [Float], gain: Float, lead: Int, listen: Int) throws(ALSAError) -> Recording {
        let period = playback.configuration.periodFrames
        let total = lead + signal.count + listen
        let periods = (total + period - 1) / period
        let captureChannels = capture.configuration.channels
        let inStorage = BusStorage(bufferCount: captureChannels, maxFrames: period)
        let inBus = inStorage.bus(first: 0, channels: captureChannels)
        let outStorage = BusStorage(bufferCount: playback.configuration.channels, maxFrames: period)
        let outBus = outStorage.bus(first: 0, channels: playback.configuration.channels)
        var channels = [[Float]](repeating: [Float](repeating: 0, count: periods * period), count: captureChannels)

        try playback.prepare()
        if !linked { try capture.prepare() }
        for _ in 0..<max(playback.configuration.periods, 1) { try playback.writeSilence(frames: period) }
        try capture.start()
        if !linked { try playback.start() }
        defer {
            playback.drop()
            capture.drop()
        }
        for k in 0..<periods {
            try capture.read(into: inBus, frames: period)
            for c in 0..<captureChannels {
                channels[c].withUnsafeMutableBufferPointer { $0.baseAddress!.advanced(by: k * period).update(from: inBus[c], count: period) }
            }
            for i in 0..<period {
                let j = k * period + i - lead
                let v = j >= 0 && j < signal.count ? signal[j] * gain : 0
                for c in 0..<outBus.channelCount { outBus[c][i] = v }
            }
            try playback.write(from: outBus, frames: period)
        }
        return Recording(channels: channels, signalStart: lead)
    }
}
