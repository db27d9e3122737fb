import StageCore

/// `input`: the microphone. Live, the capture device; offline, the `--input` file.
public struct InputUnitType: UnitType {
    public init() {}
    public var name: String { "input" }
    public var summary: String { "the microphone (live capture; the --input file offline)" }
    public var role: UnitRole { .hostInput }
    public var settings: [SettingSpec] {
        [SettingSpec(key: "channel", kind: .integer(1...64), help: "take only this channel (1-based) of the device, as mono")]
    }
    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] { [] }
    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        let channels = settings.int("channel") == nil ? context.hostInputChannels : 1
        return BusLayout(inputs: [], outputs: [.channels(channels)])
    }
    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        InputUnit(channel: settings.int("channel").map { $0 - 1 })
    }
}

/// Copies the host input into the graph. Thread: render (after prepare).
public final class InputUnit: RackUnit {
    /// The one host channel to take, or nil for all of them.
    let channel: Int?
    public init(channel: Int?) { self.channel = channel }

    public func prepare(_ spec: PrepareSpec) throws {}
    public func reset() {}

    public func render(_ context: RenderContext) {
        let out = context.outputs[0]
        let host = context.hostInput
        let n = context.frameCount
        if let channel {
            if channel < host.channelCount { out[0].update(from: host[channel], count: n) } else { out.clear(frames: n) }
            return
        }
        for c in 0..<out.channelCount {
            if c < host.channelCount { out[c].update(from: host[c], count: n) } else { out[c].update(repeating: 0, count: n) }
        }
    }
}
