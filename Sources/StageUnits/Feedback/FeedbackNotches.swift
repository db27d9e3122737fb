import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One notch of the `feedback` unit: a cut (Simper's state-variable bell, so its depth can
/// move every few samples without a click) at `hz`, `width` octaves wide between its
/// half-depth points, `depth` dB deep now and moving to `target`. Thread: render (value).
struct FeedbackNotch {
    var active = false
    /// Found in ring-out mode or loaded from the rack's state: never released.
    var fixed = false
    var hz: Double = 1000
    var width: Double = 1.0 / 40
    var depth: Float = 0
    var target: Float = 0
    /// The sample time of the last detection at this notch (for the release).
    var lastRung: Int64 = 0
    var a1: Float = 1, a2: Float = 0, a3: Float = 0, m1: Float = 0
    var s1: Float = 0, s2: Float = 0

    /// The bell's coefficients for the current depth. Thread: render (no allocation).
    mutating func design(sampleRate: Double) {
        let w0 = 2 * Double.pi * min(hz, 0.45 * sampleRate) / sampleRate
        let q = 1 / (2 * sinh(log(2) / 2 * width * w0 / sin(w0)))
        let a = pow(10, -Double(depth) / 40)
        let g = tan(w0 / 2)
        let k = 1 / (q * a)
        let d1 = 1 / (1 + g * (g + k))
        a1 = Float(d1)
        a2 = Float(g * d1)
        a3 = Float(g * g * d1)
        m1 = Float(k * (a * a - 1))
    }

    /// Filters `n` samples of `buffer` in place. Thread: render.
    @inline(__always)
    mutating func run(_ buffer: UnsafeMutablePointer<Float>, _ n: Int) {
        var s1 = self.s1, s2 = self.s2
        for i in 0..<n {
            let x = buffer[i]
            let v3 = x - s2
            let v1 = a1 * s1 + a2 * v3
            let v2 = s2 + a2 * s1 + a3 * v3
            s1 = 2 * v1 - s1
            s2 = 2 * v2 - s2
            buffer[i] = x + m1 * v1
        }
        // Flush denormals in the silent tail.
        if abs(s1) < 1e-20 { s1 = 0 }
        if abs(s2) < 1e-20 { s2 = 0 }
        self.s1 = s1
        self.s2 = s2
    }
}

/// The unit's notches: at most `capacity` (12), each published for the readouts as one
/// 64-bit atomic word. Memory is allocated in `init`; everything else allocates nothing.
/// Thread: render, except `published` (any).
final class FeedbackNotchBank {
    static let capacity = 12
    /// How fast a notch deepens (dB per `FeedbackUnit.step` samples) and lifts once released
    /// (dB per second).
    static let attackPerStep: Float = 1.5
    static let releasePerSecond: Float = 6

    let notches: UnsafeMutablePointer<FeedbackNotch>
    /// Per notch: hz as Float bits (high 32), depth × 100 (16 bits), 1/width (8 bits), flags
    /// (bit 0 active, bit 1 fixed). Written by the render thread, read by any.
    let published: UnsafeMutablePointer<Atomic<UInt64>>

    init() {
        notches = .allocate(capacity: Self.capacity)
        notches.initialize(repeating: FeedbackNotch(), count: Self.capacity)
        published = .allocate(capacity: Self.capacity)
        for i in 0..<Self.capacity { (published + i).initialize(to: Atomic<UInt64>(0)) }
    }

    deinit {
        notches.deinitialize(count: Self.capacity)
        notches.deallocate()
        published.deinitialize(count: Self.capacity)
        published.deallocate()
    }

    var count: Int {
        var c = 0
        for i in 0..<Self.capacity where notches[i].active { c += 1 }
        return c
    }

    func count(fixed: Bool) -> Int {
        var c = 0
        for i in 0..<Self.capacity where notches[i].active && notches[i].fixed == fixed { c += 1 }
        return c
    }

    /// Filters `n` samples in place through every active notch. Thread: render.
    func run(_ buffer: UnsafeMutablePointer<Float>, _ n: Int) {
        for i in 0..<Self.capacity where notches[i].active && notches[i].depth > 0 { notches[i].run(buffer, n) }
    }

    /// Moves each depth one step towards its target (and releases live notches not rung for
    /// `releaseFrames`); frees a notch that has lifted completely. Called every
    /// `stepFrames` samples. Thread: render.
    func advance(now: Int64, stepFrames: Int, releaseFrames: Int64, sampleRate: Double) {
        let lift = Self.releasePerSecond * Float(stepFrames) / Float(sampleRate)
        for i in 0..<Self.capacity where notches[i].active {
            var n = notches[i]
            if !n.fixed && now - n.lastRung > releaseFrames { n.target = 0 }
            let old = n.depth
            if n.depth < n.target {
                n.depth = min(n.target, n.depth + Self.attackPerStep)
            } else if n.depth > n.target {
                n.depth = max(n.target, n.depth - lift)
            }
            if n.depth != old {
                n.design(sampleRate: sampleRate)
                if n.depth <= 0 && n.target <= 0 {
                    n = FeedbackNotch()
                }
                notches[i] = n
                publish(i)
            }
        }
    }

    /// Stores notch `i` for the readouts. Thread: render (or control while not rendering).
    func publish(_ i: Int) {
        let n = notches[i]
        var word: UInt64 = 0
        if n.active {
            let hz = UInt64(Float(n.hz).bitPattern) << 32
            let depth = UInt64(UInt16(min(max(n.target, 0), 600) * 100)) << 16
            let inverse = UInt64(UInt8(min(max((1 / n.width).rounded(), 1), 255))) << 8
            word = hz | depth | inverse | 1 | (n.fixed ? 2 : 0)
        }
        published[i].store(word, ordering: .relaxed)
    }

    /// Removes every notch (or only the live ones). Thread: render, or control while not rendering.
    func clear(keepFixed: Bool) {
        for i in 0..<Self.capacity where !(keepFixed && notches[i].fixed) {
            notches[i] = FeedbackNotch()
            publish(i)
        }
        for i in 0..<Self.capacity {
            notches[i].s1 = 0
            notches[i].s2 = 0
        }
    }

    /// A published notch: nil when the slot is free. Thread: any.
    func reading(_ i: Int) -> FeedbackNotchReading? {
        let w = published[i].load(ordering: .relaxed)
        guard w & 1 != 0 else { return nil }
        let inverse = Double((w >> 8) & 0xFF)
        return FeedbackNotchReading(
            hz: Double(Float(bitPattern: UInt32(w >> 32))), depth: Double((w >> 16) & 0xFFFF) / 100,
            width: 1 / max(inverse, 1), fixed: w & 2 != 0)
    }
}

/// A notch as the readouts and the saved state show it. Thread: any (value).
public struct FeedbackNotchReading: Equatable, Sendable {
    public var hz: Double
    /// How deep it is (or is going), dB.
    public var depth: Double
    /// Octaves between its half-depth points.
    public var width: Double
    public var fixed: Bool
}
