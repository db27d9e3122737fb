import StageCore

/// `gain`: a smoothed level change in dB, on any number of channels.
public struct GainUnitType: UnitType {
    public init() {}
    public var name: String { "gain" }
    public var summary: String { "level in dB, smoothed (channels follow the input)" }
    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(
                id: "gain", name: "Gain", unit: .decibels, range: -96...24, defaultValue: 0, smoothingSeconds: 0.02,
                help: "level change; −96 dB is silence")
        ]
    }
    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.any], outputs: [.sameAsInput(0)])
    }
    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { GainUnit() }
}

/// Converts dB to a linear factor, with −96 dB and below as silence. Thread: any.
@inline(__always)
func faderGain(_ db: Float) -> Float {
    db <= -96 ? 0 : Curves.decibelsToGain(db)
}

/// Multiplies its input by the smoothed gain. Thread: render (after prepare).
public final class GainUnit: RackUnit {
    /// Parameter indices, in the order `GainUnitType.parameters` declares them.
    enum Parameter {
        static let gain = 0
    }

    public init() {}
    public func prepare(_ spec: PrepareSpec) throws {}
    public func reset() {}

    public func render(_ context: RenderContext) {
        let input = context.inputs[0]
        let output = context.outputs[0]
        let n = context.frameCount
        let params = context.parameters
        if params.isSteady(Parameter.gain) {
            let g = faderGain(params.value(Parameter.gain))
            for c in 0..<output.channelCount {
                let src = input[c]
                let dst = output[c]
                for i in 0..<n { dst[i] = src[i] * g }
            }
        } else {
            let db = params[Parameter.gain]
            for c in 0..<output.channelCount {
                let src = input[c]
                let dst = output[c]
                for i in 0..<n { dst[i] = src[i] * faderGain(db[i]) }
            }
        }
    }
}
