/// The live values of one unit's parameters: targets, linear ramps toward them, and the
/// per-sample values of the current block that the unit reads.
///
/// Smoothing is computed sample by sample from absolute event times, so the values do not
/// depend on how the stream is cut into blocks. Thread: render, except `init` and
/// `setImmediately` (control, before rendering starts).
public final class ParameterBank: @unchecked Sendable {
    public let specs: [ParameterSpec]
    public let count: Int
    public let maxFrames: Int
    let values: UnsafeMutablePointer<Float>
    let steady: UnsafeMutablePointer<Bool>
    let current: UnsafeMutablePointer<Float>
    let target: UnsafeMutablePointer<Float>
    let step: UnsafeMutablePointer<Float>
    let remaining: UnsafeMutablePointer<Int>
    let rampFrames: UnsafeMutablePointer<Int>
    /// The value every sample of the buffer already holds, or NaN when it is not uniform.
    let uniformFill: UnsafeMutablePointer<Float>
    /// How many frames from the start of the buffer hold `uniformFill`.
    let uniformCount: UnsafeMutablePointer<Int>
    var filled = 0
    /// Every parameter steady and its whole row (`maxFrames`) already holding its value:
    /// a block with no event for the unit needs no work at all (most blocks of a show).
    var settled = false

    public init(specs: [ParameterSpec], sampleRate: Double, maxFrames: Int) {
        self.specs = specs
        count = specs.count
        self.maxFrames = maxFrames
        let n = max(count, 1)
        values = .allocate(capacity: n * maxFrames)
        values.initialize(repeating: 0, count: n * maxFrames)
        steady = .allocate(capacity: n)
        steady.initialize(repeating: true, count: n)
        current = .allocate(capacity: n)
        target = .allocate(capacity: n)
        step = .allocate(capacity: n)
        step.initialize(repeating: 0, count: n)
        remaining = .allocate(capacity: n)
        remaining.initialize(repeating: 0, count: n)
        rampFrames = .allocate(capacity: n)
        uniformFill = .allocate(capacity: n)
        uniformFill.initialize(repeating: .nan, count: n)
        uniformCount = .allocate(capacity: n)
        uniformCount.initialize(repeating: 0, count: n)
        for (i, s) in specs.enumerated() {
            current[i] = s.defaultValue
            target[i] = s.defaultValue
            rampFrames[i] = max(0, Int((Double(s.smoothingSeconds) * sampleRate).rounded()))
        }
    }

    deinit {
        values.deallocate()
        steady.deallocate()
        current.deallocate()
        target.deallocate()
        step.deallocate()
        remaining.deallocate()
        rampFrames.deallocate()
        uniformFill.deallocate()
        uniformCount.deallocate()
    }

    /// Sets a value with no ramp. Thread: control, before rendering (or render).
    public func setImmediately(_ index: Int, _ value: Float) {
        let v = specs[index].clamped(value)
        current[index] = v
        target[index] = v
        remaining[index] = 0
        uniformFill[index] = .nan
        settled = false
    }

    /// The value the parameter is heading to. Thread: render (or control when idle).
    public func targetValue(_ index: Int) -> Float { target[index] }

    /// The value at the last rendered frame. Thread: render (or control when idle).
    public func currentValue(_ index: Int) -> Float { current[index] }

    /// The values for the unit's render call.
    public var renderValues: ParameterValues {
        ParameterValues(base: values, steady: UnsafePointer(steady), stride: maxFrames, count: count)
    }

    /// Starts a block: nothing is filled yet. Thread: render.
    @inline(__always)
    public func beginBlock() {
        filled = 0
        if settled { return }
        for i in 0..<count { steady[i] = remaining[i] == 0 }
    }

    /// Starts a ramp toward `value` from the frame filled so far. Thread: render.
    @inline(__always)
    public func setTarget(_ index: Int, _ value: Float, rampFrames ramp: Int = -1) {
        guard index >= 0 && index < count else { return }
        let v = specs[index].clamped(value)
        if v == target[index] { return }
        target[index] = v
        steady[index] = false
        settled = false
        // Choices never ramp; others use the requested ramp or their own smoothing.
        let frames = specs[index].unit == .choice ? 0 : (ramp >= 0 ? ramp : rampFrames[index])
        if frames <= 1 {
            current[index] = v
            remaining[index] = 0
        } else {
            remaining[index] = frames
            step[index] = (v - current[index]) / Float(frames)
        }
    }

    /// Writes the values of frames `filled ..< frame`. Thread: render.
    @inline(__always)
    public func fill(upTo frame: Int) {
        let start = filled
        guard frame > start else { return }
        filled = frame
        if settled { return }
        // Settles when this fill leaves every row uniform over all `maxFrames` frames.
        var settles = frame == maxFrames
        for i in 0..<count {
            let out = values + i * maxFrames
            if remaining[i] == 0 {
                let v = current[i]
                // Frames that already hold this value (a steady parameter) need no write.
                if uniformFill[i] == v && uniformCount[i] >= start {
                    if uniformCount[i] < frame {
                        (out + uniformCount[i]).update(repeating: v, count: frame - uniformCount[i])
                        uniformCount[i] = frame
                    }
                    continue
                }
                (out + start).update(repeating: v, count: frame - start)
                if start == 0 {
                    uniformFill[i] = v
                    uniformCount[i] = frame
                } else {
                    uniformFill[i] = .nan
                    settles = false
                }
            } else {
                settles = false
                uniformFill[i] = .nan
                var cur = current[i]
                var left = remaining[i]
                let inc = step[i]
                let tgt = target[i]
                var f = start
                while f < frame && left > 0 {
                    left -= 1
                    cur = left == 0 ? tgt : cur + inc
                    out[f] = cur
                    f += 1
                }
                if f < frame { (out + f).update(repeating: tgt, count: frame - f) }
                current[i] = cur
                remaining[i] = left
            }
        }
        // Every row holds one value over the block (an event at frame 0 that set a value at
        // once cleared its `steady`): steady now, and for every block until the next change.
        if settles { steady.update(repeating: true, count: count) }
        settled = settles
    }
}
