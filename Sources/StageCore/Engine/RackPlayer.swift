import Synchronization

/// Plays one rack at a time and switches to another at a block boundary with a short
/// crossfade, without locks: the control thread submits a new engine; the render thread
/// picks it up, crossfades, and hands the old one back to be released off the render thread.
///
/// It also owns the output fade used when stopping (SIGINT/SIGTERM: no click at the end).
/// Thread: `render` on the render thread; `submit`, `collectRetired`, `requestFadeOut` on
/// the control thread.
public final class RackPlayer: @unchecked Sendable {
    /// The engine the render thread plays. Thread: render (read it elsewhere only when idle).
    public private(set) var current: RenderEngine
    /// Engines sent to the render thread (retained, as opaque pointers).
    let incoming = SPSCQueue<UnsafeMutableRawPointer>(minimumCapacity: 4)
    /// Engines the render thread is done with (retained, released by `collectRetired`).
    let retired = SPSCQueue<UnsafeMutableRawPointer>(minimumCapacity: 16)
    var outgoing: RenderEngine?
    var outgoingPointer: UnsafeMutableRawPointer?
    var crossfadePosition = 0
    public let crossfadeFrames: Int
    let scratch: BusStorage
    /// Switches completed (render thread counts, others read).
    public let switches = Atomic<Int>(0)

    // Output fade for stopping.
    let fadeOutRequested = Atomic<Bool>(false)
    let fadedOut = Atomic<Bool>(false)
    var fadeGain: Float = 1
    let fadeStep: Float

    /// `maxFrames` must be at least the largest block rendered; every engine submitted
    /// must have the same sample rate and host input channel count.
    public init(engine: RenderEngine, crossfadeSeconds: Double = 0.02, fadeOutSeconds: Double = 0.01) {
        current = engine
        currentPointer = Unmanaged.passRetained(engine).toOpaque()
        let rate = engine.plan.sampleRate
        crossfadeFrames = max(1, Int(crossfadeSeconds * rate))
        fadeStep = 1 / Float(max(1, Int(fadeOutSeconds * rate)))
        scratch = BusStorage(bufferCount: 2, maxFrames: engine.plan.maxFrames)
    }

    deinit {
        while let p = incoming.pop() { Unmanaged<RenderEngine>.fromOpaque(p).release() }
        while let p = retired.pop() { Unmanaged<RenderEngine>.fromOpaque(p).release() }
        if let p = outgoingPointer { Unmanaged<RenderEngine>.fromOpaque(p).release() }
        if let p = currentPointer { Unmanaged<RenderEngine>.fromOpaque(p).release() }
    }

    /// Hands a new engine to the render thread; false if two switches are already waiting.
    /// Thread: control.
    @discardableResult
    public func submit(_ engine: RenderEngine) -> Bool {
        precondition(engine.plan.maxFrames >= current.plan.maxFrames, "a new rack must take blocks as large as the old one")
        let p = Unmanaged.passRetained(engine).toOpaque()
        if incoming.push(p) { return true }
        Unmanaged<RenderEngine>.fromOpaque(p).release()
        return false
    }

    /// Releases engines the render thread has finished with. Thread: control.
    public func collectRetired() {
        while let p = retired.pop() { Unmanaged<RenderEngine>.fromOpaque(p).release() }
    }

    /// Starts the fade to silence; `isFadedOut` turns true when it is done. Thread: any.
    public func requestFadeOut() { fadeOutRequested.store(true, ordering: .releasing) }
    public var isFadedOut: Bool { fadedOut.load(ordering: .acquiring) }

    /// Clears the playing engine's state and clock, e.g. after a warm-up block.
    /// Thread: render (or control while not rendering).
    public func resetCurrent() {
        current.reset()
    }

    /// Renders one block: `input` is copied into the plan's host input, the result (after
    /// any crossfade and stop fade) is written to `output` (stereo). Thread: render.
    public func render(frameCount n: Int, input: AudioBus?, output: AudioBus) {
        if outgoing == nil, let p = incoming.pop() {
            // Start a switch: the old engine fades out while the new one fades in.
            outgoing = current
            outgoingPointer = currentPointer
            current = Unmanaged<RenderEngine>.fromOpaque(p).takeUnretainedValue()
            currentPointer = p
            crossfadePosition = 0
        }
        renderEngine(current, frames: n, input: input)
        let out = current.plan.hostOutput
        for c in 0..<2 { output[c].update(from: out[c], count: n) }

        if let old = outgoing {
            renderEngine(old, frames: n, input: input)
            let oldOut = old.plan.hostOutput
            let total = Float(crossfadeFrames)
            for c in 0..<2 {
                let dst = output[c]
                let src = oldOut[c]
                var pos = crossfadePosition
                for i in 0..<n {
                    let t = min(Float(pos) / total, 1)
                    dst[i] = dst[i] * t + src[i] * (1 - t)
                    pos += 1
                }
            }
            crossfadePosition += n
            if crossfadePosition >= crossfadeFrames {
                if let p = outgoingPointer, !retired.push(p) {
                    // The control thread is not collecting: keep it (a leak beats a free here).
                }
                outgoing = nil
                outgoingPointer = nil
                switches.add(1, ordering: .relaxed)
            }
        }

        if fadeOutRequested.load(ordering: .relaxed) {
            var g = fadeGain
            for i in 0..<n {
                g = max(0, g - fadeStep)
                output[0][i] *= g
                output[1][i] *= g
            }
            fadeGain = g
            if g == 0 { fadedOut.store(true, ordering: .releasing) }
        }
    }

    /// `current`, retained once more so that the render thread never drops the last reference.
    var currentPointer: UnsafeMutableRawPointer?

    @inline(__always)
    private func renderEngine(_ engine: RenderEngine, frames n: Int, input: AudioBus?) {
        let host = engine.plan.hostInput
        for c in 0..<host.channelCount {
            if let input, c < input.channelCount {
                host[c].update(from: input[c], count: n)
            } else {
                host[c].update(repeating: 0, count: n)
            }
        }
        engine.render(frameCount: n)
    }
}
