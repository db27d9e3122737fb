import StageCore
import StageDrivers
import StageService

/// `play --drift-compensation`: capture on another card than playback. Thread: main.
extension LiveSession {
    /// The compensator when it is asked for and the capture device is not the playback
    /// device (one card shares one clock: its streams are linked instead); `log` says which.
    func driftCompensator(capture: PCMStream?, playback: PCMStream, log: Bool) throws(ALSAError) -> DriftCompensator? {
        guard setup.compensateDrift, let capture else { return nil }
        guard capture.configuration.device != playback.configuration.device else {
            if log { Log.info("drift compensation: capture and playback are the same device (one clock); not needed") }
            return nil
        }
        let drift = try DriftCompensator.between(capture: capture, playback: playback)
        if log {
            let target = Int(drift.controller.targetBacklog.rounded())
            let learnt = drift.capturePeriod == nil ? "" : ", plus what the card's chunks need (learnt in the first 4 s)"
            Log.info("drift compensation: capture \(capture.configuration.device) resampled to the clock of playback "
                     + "\(playback.configuration.device) (libsamplerate, medium quality); capture ring held at \(target) frames "
                     + "(\(formatNumber((Double(target) / Double(playback.configuration.sampleRate) * 1e4).rounded() / 10)) ms more latency\(learnt))")
        }
        return drift
    }
}

/// `drift +98.7 ppm (ratio 0.99990131)`: the stop line's and the log's words.
func driftSummary(_ d: DriftReading) -> String {
    var r = StatusRecord(rackName: "", peakIn: nil, peakOut: 0, load: 0)
    r.driftPPM = d.ppm
    r.resamplingRatio = d.ratio
    var text = String(driftText(r).dropFirst(3))
    if d.shortFrames > 0 || d.droppedFrames > 0 {
        text += " (capture ring: \(d.shortFrames) frames short, \(d.droppedFrames) dropped)"
    }
    return text
}

extension StatusView {
    /// A line a minute with the measured drift (the first after 10 s); a warning when the capture ring ran short
    /// or over (the drift was too fast for the loop, or the capture device stalled).
    func logDrift(_ d: DriftReading) {
        let trouble = d.shortFrames + d.droppedFrames
        if trouble > loggedDriftTrouble {
            loggedDriftTrouble = trouble
            Log.warning("drift compensation: the capture ring ran \(d.shortFrames > 0 ? "short" : "over") (\(d.shortFrames) frames played as silence, "
                        + "\(d.droppedFrames) dropped since start): refilled to its target")
        }
        let now = monotonicSeconds()
        if lastDriftLine == 0 { lastDriftLine = now - 50 }
        if now - lastDriftLine >= 60 {
            Log.info("capture clock: \(driftSummary(d)) against playback")
            lastDriftLine = now
        }
    }
}
