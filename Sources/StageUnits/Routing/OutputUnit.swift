import StageCore

/// `output`: the speakers (the sound card live; the output file offline). Stereo, or mono
/// with one channel. A rack may have several (the PA and an ear-monitor mix), each on its
/// own channels of the playback device (`channels: [3, 4]`), each with its own safety stage
/// that cannot be switched off (`SafetyLimiter`): non-finite samples become silence (and
/// are counted), and a look-ahead-free peak limiter with a final hard clip holds every
/// sample at or under −0.3 dBFS.
public struct OutputUnitType: UnitType {
    /// Device channels counted from 1, as interfaces label their outputs.
    public static let channelRange = 1...64

    public init() {}
    public var name: String { "output" }
    public var summary: String { "the speakers (live playback; the output file offline), with a safety limiter" }
    public var role: UnitRole { .hostOutput }
    public var settings: [SettingSpec] {
        [
            SettingSpec(
                key: "channels", kind: .custom("a list of one or two device channels, e.g. [3, 4] (1…64)"),
                help: "the playback device's channels this output plays on, counted from 1 (default: the lowest free pair, "
                    + "[1, 2] for the first output); one channel makes a mono output")
        ]
    }
    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] { [] }
    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.channels(Self.deviceChannels(settings)?.count ?? 2)], outputs: [])
    }
    public func hostChannels(_ settings: UnitSettings) -> [Int]? {
        Self.deviceChannels(settings).map { $0.map { $0 - 1 } }
    }
    public func check(_ settings: UnitSettings) -> [SettingProblem] {
        guard let node = settings.node("channels") else { return [] }
        let problem = SettingProblem(
            key: "channels", message: "must be a list of one or two different device channels \(Self.channelRange.lowerBound)…\(Self.channelRange.upperBound), e.g. [3, 4]")
        guard let elements = node.elements, (1...2).contains(elements.count) else { return [problem] }
        let numbers = elements.compactMap { $0.number.flatMap { Int(exactly: $0) } }
        guard numbers.count == elements.count, numbers.allSatisfy(Self.channelRange.contains), Set(numbers).count == numbers.count
        else { return [problem] }
        return []
    }
    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        OutputUnit()
    }

    /// The `channels` setting (1-based), if the rack gives a valid one.
    static func deviceChannels(_ settings: UnitSettings) -> [Int]? {
        guard let elements = settings.node("channels")?.elements, (1...2).contains(elements.count) else { return nil }
        let numbers = elements.compactMap { $0.number.flatMap { Int(exactly: $0) } }
        guard numbers.count == elements.count, numbers.allSatisfy(channelRange.contains) else { return nil }
        return numbers
    }
}

/// Writes the graph's result to its channels of the host output through the safety stage.
/// Thread: render (after prepare).
public final class OutputUnit: RackUnit {
    /// The ceiling: −0.3 dBFS.
    public static let ceiling: Float = 0.966_050_9
    let safety = SafetyLimiter(ceiling: OutputUnit.ceiling)

    public init() {}
    public func prepare(_ spec: PrepareSpec) throws { safety.prepare(sampleRate: spec.sampleRate) }
    public func reset() { safety.reset() }

    /// `context.hostOutput` is this output's own channels of the device (the compiler
    /// gives each output unit its slice).
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
