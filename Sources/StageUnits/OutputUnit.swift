import StageCore

/// `output`: the speakers (the sound card live; the output file offline). Stereo.
/// Ends in a safety stage that cannot be switched off (`SafetyLimiter`): non-finite samples
/// become silence (and are counted), and a look-ahead-free peak limiter with a final hard
/// clip holds every sample at or under −0.3 dBFS.
public struct OutputUnitType: UnitType {
    public init() {}
    public var name: String { "output" }
    public var summary: String { "the speakers (live playback; the output file offline), with a safety limiter" }
    public var role: UnitRole { .hostOutput }
    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] { [] }
    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.channels(2)], outputs: [])
    }
    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        OutputUnit()
    }
}

/// Writes the graph's result to the host output through the safety stage.
/// Thread: render (after prepare).
public final class OutputUnit: RackUnit {
    /// The ceiling: −0.3 dBFS.
    public static let ceiling: Float = 0.966_050_9
    let safety = SafetyLimiter(ceiling: OutputUnit.ceiling)

    public init() {}
    public func prepare(_ spec: PrepareSpec) throws { safety.prepare(sampleRate: spec.sampleRate) }
    public func reset() { safety.reset() }

    public func render(_ context: RenderContext) {
        let input = context.inputs[0]
        let host = context.hostOutput
        let n = context.frameCount
        for c in 0..<host.channelCount {
            host[c].update(from: input[min(c, input.channelCount - 1)], count: n)
        }
        if host.channelCount >= 2 {
            safety.process(left: host[0], right: host[1], frames: n, counters: context.safety)
        } else if host.channelCount == 1 {
            safety.process(mono: host[0], frames: n, counters: context.safety)
        }
    }
}
