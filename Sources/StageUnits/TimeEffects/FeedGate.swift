import StageCore

/// The `feed` parameter of the delay and the reverb: the share of the input that goes into
/// the echoes or the hall, without touching the dry part of the unit's mix. Talk sets it to
/// 0, so what is already in the delay line or the hall rings out while nothing new enters
/// (a bypass would cut the tail, or turn a fully wet send into a second dry voice).
///
/// The unit renders from a copy of its input scaled by `feed`; the dry part that scaling
/// took away, (1 − mix)·(1 − feed)·x, is added back to its output, so with any `feed` the
/// output is dry·(1 − mix) + effect(feed·x)·mix, exactly the unit's own law. At `feed` 100
/// held over the block nothing is done (no copy, no cost). Memory is allocated in
/// `prepare`. Thread: render (after prepare); `prepare` and `deallocate`: control.
struct FeedGate {
    var channels = 0
    var maxFrames = 0
    var scratch: UnsafeMutablePointer<Float>?
    var pointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    var bus: UnsafeMutablePointer<AudioBus>?

    /// Thread: control.
    mutating func prepare(channels c: Int, maxFrames n: Int) {
        deallocate()
        channels = max(1, c)
        maxFrames = n
        let s = UnsafeMutablePointer<Float>.allocate(capacity: channels * n)
        s.initialize(repeating: 0, count: channels * n)
        let p = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        for i in 0..<channels { p[i] = s + i * n }
        let b = UnsafeMutablePointer<AudioBus>.allocate(capacity: 1)
        b.initialize(to: AudioBus(channelPointers: p, channelCount: channels))
        scratch = s
        pointers = p
        bus = b
    }

    /// Thread: control.
    mutating func deallocate() {
        scratch?.deallocate()
        pointers?.deallocate()
        bus?.deallocate()
        scratch = nil
        pointers = nil
        bus = nil
    }

    /// Whether `feed` (parameter `index`, %) is 100 over the whole block: nothing to do.
    @inline(__always)
    static func isOpen(_ p: ParameterValues, _ index: Int) -> Bool { p.isSteady(index) && p.value(index) >= 100 }

    /// `context` with its input bus 0 replaced by a copy scaled by `feed` (%). Thread: render.
    func gated(_ context: RenderContext, feed: UnsafePointer<Float>) -> RenderContext {
        guard let bus, let pointers else { return context }
        let input = context.inputs[0]
        let n = context.frameCount
        let count = min(input.channelCount, channels)
        for c in 0..<count {
            let x = input[c], y = pointers[c]
            for i in 0..<n { y[i] = x[i] * (feed[i] * 0.01) }
        }
        bus.pointee = AudioBus(channelPointers: pointers, channelCount: count)
        var gated = context
        gated.inputs = UnsafeBufferPointer(start: bus, count: 1)
        return gated
    }

    /// Adds back the dry part the scaling took away: (1 − mix)·(1 − feed)·x, channel
    /// `min(c, inputs − 1)` of the original input into output channel c (all of `outputs`).
    /// `mix` and `feed` in %. Thread: render.
    static func restoreDry(
        _ context: RenderContext, outputs: Int, mix: UnsafePointer<Float>, feed: UnsafePointer<Float>
    ) {
        let input = context.inputs[0]
        guard input.channelCount > 0 else { return }
        let output = context.outputs[0]
        let n = context.frameCount
        for c in 0..<min(outputs, output.channelCount) {
            let x = input[min(c, input.channelCount - 1)], y = output[c]
            for i in 0..<n { y[i] += x[i] * (1 - mix[i] * 0.01) * (1 - feed[i] * 0.01) }
        }
    }
}
