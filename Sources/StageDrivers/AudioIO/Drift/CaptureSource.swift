import CALSA
import StageCore

/// What `CaptureThread` needs of a capture card: a PCM stream (`PCMStream`), or a
/// simulated card in the tests. Thread: the capture thread, once it runs.
public protocol CaptureSource: AnyObject, Sendable {
    var channels: Int { get }
    var periodFrames: Int { get }
    /// Waits until a period is there (or an error, or `milliseconds` pass); false on a
    /// timeout.
    func waitForPeriod(milliseconds: Int32) -> Bool
    /// Frames captured and not yet read; negative: ALSA's error (an xrun).
    func available() -> Int
    /// Reads `frames` ≤ one period into `bus`.
    func read(into bus: AudioBus, frames: Int) throws(ALSAError)
    /// Starts (or restarts, after an xrun) the stream from an empty buffer.
    func restart() throws(ALSAError)
    /// Stops the stream.
    func stop()
    /// The device's name, for errors.
    var deviceName: String { get }
}

extension PCMStream: CaptureSource {
    public var channels: Int { configuration.channels }
    public var periodFrames: Int { configuration.periodFrames }
    public var deviceName: String { configuration.device }

    public func waitForPeriod(milliseconds: Int32) -> Bool { snd_pcm_wait(pcm, milliseconds) != 0 }

    public func restart() throws(ALSAError) {
        drop()
        try prepare()
        try start()
    }

    public func stop() { drop() }
}
