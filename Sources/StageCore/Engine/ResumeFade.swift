/// What a unit hears in its first 30 ms after it was skipped (EngineSilence): its inputs
/// faded in from silence, so that it starts as a fresh unit hearing a voice begin. Reset
/// and fed the live signal at once, a delay line or a pitch shifter would play a step
/// (a click, or an echo of one later on); faded in, its outputs, echoes and tails are smooth.
///
/// The ramp runs on absolute frames from the frame the unit was heard again, so it does not
/// depend on the block size. The unit's own input buses are never written (they are other
/// units' outputs): the faded copy lives in memory of its own, sized at init.
/// Thread: render (init on control).
final class ResumeFade {
    /// The fade's length: longer than a pitch shifter's start (its latency and first grains).
    static let seconds = 0.03
    let frames: Int64
    let storage: BusStorage
    /// Channel pointers of the faded buses, and the buses themselves.
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let buses: UnsafeMutablePointer<AudioBus>
    let channelCapacity: Int
    let busCapacity: Int

    init(plan: RenderPlan) {
        frames = max(1, Int64((Self.seconds * plan.sampleRate).rounded()))
        var channels = 1
        var buses = 1
        for step in plan.steps {
            channels = max(channels, step.inputs.reduce(0) { $0 + $1.channelCount })
            buses = max(buses, step.inputs.count)
        }
        channelCapacity = channels
        busCapacity = buses
        storage = BusStorage(bufferCount: channels, maxFrames: plan.maxFrames)
        pointers = .allocate(capacity: channels)
        for c in 0..<channels { (pointers + c).initialize(to: storage.buffer(c)) }
        self.buses = .allocate(capacity: buses)
    }

    deinit {
        pointers.deallocate()
        buses.deallocate()
    }

    /// True while a unit heard again at `resumedAt` still fades in at `start`.
    @inline(__always)
    func isFading(resumedAt: Int64, start: Int64) -> Bool {
        resumedAt != .min && start < resumedAt &+ frames
    }

    /// `inputs` faded in from `resumedAt`, for the `count` frames from `start`. Thread: render.
    func fadedInputs(_ inputs: UnsafeBufferPointer<AudioBus>, resumedAt: Int64, start: Int64, count: Int)
        -> UnsafeBufferPointer<AudioBus>
    {
        var channel = 0
        let fade = Float(frames)
        for (b, bus) in inputs.enumerated() {
            let first = channel
            for c in 0..<bus.channelCount {
                let src = bus[c]
                let dst = pointers[channel]
                for f in 0..<count {
                    let elapsed = Float(start + Int64(f) - resumedAt)
                    dst[f] = src[f] * min(max(elapsed / fade, 0), 1)
                }
                channel += 1
            }
            (buses + b).initialize(to: AudioBus(channelPointers: UnsafePointer(pointers + first), channelCount: bus.channelCount))
        }
        return UnsafeBufferPointer(start: buses, count: inputs.count)
    }
}
