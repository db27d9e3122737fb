import StageCore

/// `play`'s latency lines: what StageRack's buffers add, and for each input unit its
/// fastest and slowest path to each output (a dry voice reaches the ears at once, a
/// pitch-shifted double of it 14.5 ms later). With the interface's own part measured by
/// `stagerack latency --write` (`hardwareLatency`), the figures are the true round trip
/// from the microphone's jack to the speaker's.
///
/// StageRack's buffering is the playback buffer (periods × period): capture and playback
/// start together, and a sound captured in one period is written behind what is already
/// queued, so the wait for its capture period to fill is inside that buffer (`stagerack
/// latency` measures this frame-exact on snd-aloop). Thread: main (at start).
public struct LatencyReport: Sendable {
    public var sampleRate: Double
    public var periodFrames: Int
    public var periods: Int
    /// The converters', driver's and USB's part, as measured; nil when not measured.
    public var hardwareFrames: Int?

    public init(sampleRate: Double, periodFrames: Int, periods: Int, hardwareFrames: Int?) {
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.periods = periods
        self.hardwareFrames = hardwareFrames
    }

    /// StageRack's buffering: the playback buffer.
    public var bufferingFrames: Int { periodFrames * periods }
    /// Buffering plus the measured hardware part, in frames.
    public var fixedFrames: Int { bufferingFrames + (hardwareFrames ?? 0) }

    /// The first line: the fixed part and the slowest path of the units.
    public func summary(slowestUnitFrames: Int) -> String {
        var line = "latency \(ms(fixedFrames + slowestUnitFrames)) ms\(hardwareFrames == nil ? "" : " round trip"): "
            + "buffering \(ms(bufferingFrames)) (\(periodFrames)×\(periods))"
        if let hardwareFrames { line += " + interface \(ms(hardwareFrames)) (measured)" }
        line += " + units \(ms(slowestUnitFrames)) (slowest path)"
        if hardwareFrames == nil { line += "; the interface's own part is not measured (stagerack latency --write)" }
        return line
    }

    /// One line per input and output: its fastest and slowest path.
    public func pathLines(_ outputs: [PlanOutput]) -> [String] {
        var lines: [String] = []
        for o in outputs {
            let channels = o.deviceChannels.map { String($0 + 1) }.joined(separator: "-")
            for p in o.paths {
                var line = "latency \(p.inputID) → \(o.unitID) (ch \(channels)): "
                if p.fastestFrames == p.slowestFrames {
                    line += "\(ms(fixedFrames + p.fastestFrames)) ms"
                } else {
                    line += "fastest \(ms(fixedFrames + p.fastestFrames)) ms, slowest \(ms(fixedFrames + p.slowestFrames)) ms"
                }
                lines.append(line + (hardwareFrames == nil ? "" : " round trip"))
            }
        }
        return lines
    }

    func ms(_ frames: Int) -> String { formatNumber((Double(frames) / sampleRate * 10000).rounded() / 10) }
}
