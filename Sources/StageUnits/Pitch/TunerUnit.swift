import StageCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The tuner; see `TunerUnitType` for its parameters.
///
/// The input passes through unchanged (or muted) and is kept in a history ring. Every
/// `hop` input samples (1,024 at 48 kHz: 21 ms), at fixed absolute sample times so the
/// readings do not depend on the block size, it is analysed in two steps:
/// 1. `PitchDetector` (YIN, the pitch and tune units' detector) on a copy decimated to
///    about 12 kHz (cut-off 2.4 kHz), lags for 38–2,100 Hz: the period to a few cents,
///    and whether there is a note at all (silence under −60 dBFS, noise and chords with no
///    clear period give none);
/// 2. `PitchRefinement` on the full-rate input: the period to a fraction of a cent.
///
/// The render thread publishes the frequency (0: no note) and the reference as one 64-bit
/// atomic (so the two never come from different blocks); the control thread turns them
/// into the note and cents (`readouts`, `readoutText`). The first reading comes once the
/// history holds the longest lag (about 55 ms) and a hop has ended: under 100 ms from the
/// onset (TunerTests). Memory is allocated in `prepare`; `render` and `reset` allocate,
/// lock and format nothing. Thread: render (after prepare); the readouts: any but render.
public final class TunerUnit: RackUnit, UnitReadout {
    static let low = 38.0
    static let high = 2100.0
    static let analysisRate = 12000.0

    var ring: UnsafeMutablePointer<Float>?
    var size = 0
    var mask = 0
    var now: Int64 = 0
    var hopMask: Int64 = 0
    var detector: PitchDetector?
    var window = 0
    var refineLag = 0
    var sampleRate = 48000.0
    /// The last reading: frequency bits (high 32) and reference bits (low 32). Thread: any.
    let published = Atomic<UInt64>(0)

    init() {}

    deinit { free() }

    func free() {
        ring?.deallocate()
        ring = nil
        detector?.deallocate()
        detector = nil
    }

    /// Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        free()
        guard spec.sampleRate >= 16000 else { throw UnitError("tuner: sample rate \(spec.sampleRate) is too low (16 kHz at least)") }
        let sr = spec.sampleRate
        sampleRate = sr
        window = (Int(0.01 * sr) + 7) / 8 * 8
        refineLag = Int(0.03 * sr)
        let history = max(
            PitchDetector.historyNeeded(sampleRate: sr, low: Self.low, rate: Self.analysisRate), window + refineLag + 16)
        var s = 1
        while s < history + 64 { s <<= 1 }
        size = s
        mask = s - 1
        ring = .allocate(capacity: 2 * s)
        detector = PitchDetector(sampleRate: sr, low: Self.low, high: Self.high, rate: Self.analysisRate)
        var hop = 1
        while Double(hop * 2) <= sr * 0.0214 { hop *= 2 }
        hopMask = Int64(hop - 1)
        reset()
    }

    /// Thread: render, or control while not rendering.
    public func reset() {
        guard let ring else { return }
        ring.update(repeating: 0, count: 2 * size)
        detector?.reset()
        now = 0
        published.store(0, ordering: .relaxed)
    }

    public func render(_ context: RenderContext) {
        guard let ring, detector != nil else { return }
        let n = context.frameCount
        let input = context.inputs[0][0]
        let output = context.outputs[0][0]
        let p = context.parameters
        let reference = p.value(0)
        if p.isSteady(1) && p.value(1) == 0 {
            output.update(from: input, count: n)
        } else {
            let mute = p[1]
            for i in 0..<n { output[i] = input[i] * (1 - mute[i]) }
        }
        var i = 0
        while i < n {
            // Up to the end of the block or of the current hop, whichever comes first.
            let toHop = Int(hopMask - (now & hopMask)) + 1
            let count = min(n - i, toHop)
            let slot = Int(now & Int64(mask))
            let first = min(count, size - slot)
            (ring + slot).update(from: input + i, count: first)
            (ring + slot + size).update(from: input + i, count: first)
            if first < count {
                ring.update(from: input + i + first, count: count - first)
                (ring + size).update(from: input + i + first, count: count - first)
            }
            now += Int64(count)
            i += count
            if now & hopMask == 0 { analyze(reference: reference) }
        }
    }

    /// One analysis of the history up to `now − 1`; publishes the result. Thread: render.
    func analyze(reference: Float) {
        guard let ring else { return }
        detector!.analyze(ring: ring, mask: mask, now: now - 1)
        var frequency: Float = 0
        if detector!.voiced && detector!.period > 0 {
            let period = PitchRefinement.refine(
                period: detector!.period, ring: ring, mask: mask, now: now - 1, window: window, maxLag: refineLag)
            if period > 0 { frequency = Float(sampleRate / period) }
        }
        published.store(UInt64(frequency.bitPattern) << 32 | UInt64(reference.bitPattern), ordering: .relaxed)
    }

    /// The latest reading: the frequency in Hz (0: no note) and the reference. Thread: any.
    public var reading: (frequency: Float, reference: Float) {
        let v = published.load(ordering: .relaxed)
        return (Float(bitPattern: UInt32(v >> 32)), Float(bitPattern: UInt32(truncatingIfNeeded: v)))
    }

    /// The nearest note (MIDI key) and the deviation from it in cents, nil when there is no
    /// note. Thread: any.
    public var note: (key: Int, cents: Double, frequency: Double)? {
        let r = reading
        guard r.frequency > 0, r.reference > 0 else { return nil }
        let semitones = 69 + 12 * log2(Double(r.frequency) / Double(r.reference))
        let key = Int(semitones.rounded())
        return (key, (semitones - Double(key)) * 100, Double(r.frequency))
    }

    /// `hz`, `note` (MIDI key) and `cents`; all 0 when there is no note. Thread: any (not render).
    public var readouts: [(name: String, value: Float)] {
        guard let n = note else { return [("hz", 0), ("note", 0), ("cents", 0)] }
        return [("hz", Float(n.frequency)), ("note", Float(n.key)), ("cents", Float(n.cents))]
    }

    /// `tuner: A4 +0.3 cents (440.08 Hz)`, or `tuner: no note`. Thread: any (not render).
    public func readoutText(unitID: String) -> String {
        guard let n = note else { return "\(unitID): no note" }
        let cents = (n.cents * 10).rounded() / 10
        let sign = cents > 0 ? "+" : cents < 0 ? "" : "±"
        return "\(unitID): \(KeyRange.name(n.key)) \(sign)\(formatNumber(cents)) cents (\(formatNumber((n.frequency * 100).rounded() / 100)) Hz)"
    }
}
