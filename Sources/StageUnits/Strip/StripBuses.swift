import StageCore

/// What the channel-strip units' `render` starts from (`eq`, `dynamics`, `deesser`: one
/// input bus, one output bus, channels following the input): the block's frames, the two
/// buses, and how many channels run (the output's, up to the count the unit prepared).
/// Thread: render.
struct StripBuses {
    let frames: Int
    let input: AudioBus
    let output: AudioBus
    let channels: Int

    /// Nil when there is nothing to run: no frames, or an input with no channels (the
    /// output is then cleared).
    @inline(__always)
    init?(_ context: RenderContext, preparedChannels: Int) {
        frames = context.frameCount
        input = context.inputs[0]
        output = context.outputs[0]
        if frames <= 0 { return nil }
        if input.channelCount == 0 {
            output.clear(frames: frames)
            return nil
        }
        channels = min(output.channelCount, preparedChannels)
    }

    /// Writes zeros into the output channels past `channels`.
    @inline(__always)
    func clearUnusedOutputs() {
        for c in channels..<output.channelCount { output[c].update(repeating: 0, count: frames) }
    }
}
