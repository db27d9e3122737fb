import StageCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The feedback suppressor; see `FeedbackUnitType` for its parameters and commands.
///
/// The input is kept in a history ring and goes out through the notch bank. Every `step`
/// samples (32), at fixed absolute sample times so the sound does not depend on the block
/// size, each notch's depth moves one step towards its target; every hop of the detector
/// (512 samples at 48 kHz: 10.7 ms) `FeedbackDetector` looks at the input and each howl it
/// finds is notched: a notch already within reach is deepened by 3 dB (and widened up to
/// 1/10 octave to cover the howl if it moved to its flank), otherwise a new notch 1/40
/// octave wide starts 6 dB deep. Live notches are bounded by `liveNotches`, the oldest
/// taken when a new one needs its place, and lift at 6 dB/s once their frequency has not
/// rung for `release` seconds; in ring-out mode the notches found are fixed (kept, and
/// saved with the rack as its `"state"`). At most 12 notches in all. Memory is allocated
/// in `prepare`; `render` and `reset` allocate, lock and format nothing.
/// Thread: render (after prepare); readouts and saved state: any but render.
public final class FeedbackUnit: RackUnit, UnitReadout, UnitSavedState {
    /// The commands, in the order `FeedbackUnitType.commands` lists them. Thread: any (values).
    public enum Command: Int, CaseIterable {
        case ringOut, clear
        public var name: String { self == .ringOut ? "ring-out" : "clear" }
    }
    static let step = 32
    static let firstDepth: Float = 6
    static let depthStep: Float = 3
    static let firstWidth = 1.0 / 40
    static let widestWidth = 1.0 / 10

    let bank = FeedbackNotchBank()
    /// The rack's fixed notches, installed by `prepare` and `reset`.
    let startingNotches: [FeedbackNotchReading]
    var detector: FeedbackDetector?
    var ring: UnsafeMutablePointer<Float>?
    var mask = 0
    var now: Int64 = 0
    var sampleRate = 48000.0
    var ringOut = false
    /// Whether ring-out mode is on. Written by the render thread, read by any.
    let ringOutFlag = Atomic<Bool>(false)

    init(notches: [FeedbackNotchReading]) { startingNotches = notches }

    deinit { free() }

    func free() {
        ring?.deallocate()
        ring = nil
        detector?.deallocate()
        detector = nil
    }

    /// Makes the detector, whose FFTW plan is made here (FFTW's planner is not thread-safe:
    /// `FeedbackFFT` serialises plan creation and destruction across every unit, prepared on
    /// whichever control thread; none is made or destroyed on the render thread).
    /// Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        free()
        guard spec.sampleRate >= 16000 else { throw UnitError("feedback: sample rate \(spec.sampleRate) is too low (16 kHz at least)") }
        if let failure = FeedbackFFT.libraryFailure { throw UnitError("feedback: \(failure)") }
        sampleRate = spec.sampleRate
        let d = FeedbackDetector(sampleRate: sampleRate)
        detector = d
        var s = 1
        while s < d.size * 2 { s <<= 1 }
        mask = s - 1
        ring = .allocate(capacity: s)
        bank.clear(keepFixed: false)
        reset()
    }

    /// Clears the live notches and the filters' state; the fixed notches stay (those found by
    /// ring-out too). Thread: render, or control while not rendering.
    public func reset() {
        guard let ring, let detector else { return }
        ring.update(repeating: 0, count: mask + 1)
        detector.reset()
        bank.clear(keepFixed: true)
        if bank.count == 0 { installStartingNotches() }
        now = 0
    }

    func installStartingNotches() {
        for (i, n) in startingNotches.prefix(FeedbackNotchBank.capacity).enumerated() {
            var notch = FeedbackNotch()
            notch.active = true
            notch.fixed = true
            notch.hz = n.hz
            notch.width = n.width
            notch.depth = Float(n.depth)
            notch.target = Float(n.depth)
            notch.design(sampleRate: sampleRate)
            bank.notches[i] = notch
            bank.publish(i)
        }
    }

    public func render(_ context: RenderContext) {
        guard let ring, let detector else { return }
        let n = context.frameCount
        let input = context.inputs[0][0]
        let output = context.outputs[0][0]
        let p = context.parameters
        output.update(from: input, count: n)
        var eventIndex = 0
        var i = 0
        while i < n {
            while eventIndex < context.events.count && Int(context.events[eventIndex].frameOffset) <= i {
                perform(context.events[eventIndex].message)
                eventIndex += 1
            }
            var count = min(n - i, Self.step - Int(now & Int64(Self.step - 1)))
            if eventIndex < context.events.count { count = min(count, max(1, Int(context.events[eventIndex].frameOffset) - i)) }
            store(input + i, count, ring: ring)
            bank.run(output + i, count)
            now += Int64(count)
            i += count
            if now & Int64(Self.step - 1) == 0 {
                let release = Int64(Double(p[3][i - 1]) * sampleRate)
                bank.advance(now: now, stepFrames: Self.step, releaseFrames: release, sampleRate: sampleRate)
            }
            if now % Int64(detector.hop) == 0 && now >= Int64(detector.size) {
                detector.analyze(ring: ring, mask: mask, now: now, sensitivity: p[0][i - 1] / 100)
                for f in 0..<detector.foundCount {
                    notch(detector.found[f].hz, growth: detector.found[f].growth, liveLimit: Int(p[1][i - 1].rounded()), maxDepth: p[2][i - 1])
                }
            }
        }
        while eventIndex < context.events.count {
            perform(context.events[eventIndex].message)
            eventIndex += 1
        }
    }

    /// Appends `count` input samples to the history. Thread: render.
    @inline(__always)
    func store(_ input: UnsafePointer<Float>, _ count: Int, ring: UnsafeMutablePointer<Float>) {
        let slot = Int(now & Int64(mask))
        let first = min(count, mask + 1 - slot)
        (ring + slot).update(from: input, count: first)
        if first < count { ring.update(from: input + first, count: count - first) }
    }

    /// A pressed command. Thread: render.
    func perform(_ message: MIDIMessage) {
        guard let index = UnitCommand.index(of: message), UnitCommand.isPress(message) else { return }
        switch Command(rawValue: index) {
        case .ringOut?:
            ringOut.toggle()
            ringOutFlag.store(ringOut, ordering: .relaxed)
        case .clear?:
            bank.clear(keepFixed: false)
        case nil:
            break
        }
    }

    /// Notches a howl at `hz`: deepens the notch that covers it, or places a new one; a howl
    /// that grew by 6 dB or more while it was watched gets 3 dB more. Thread: render.
    func notch(_ hz: Double, growth: Float, liveLimit: Int, maxDepth: Float) {
        let extra: Float = growth >= 6 ? Self.depthStep : 0
        let notches = bank.notches
        var nearest = -1
        var nearestDistance = Double.infinity
        for i in 0..<FeedbackNotchBank.capacity where notches[i].active && notches[i].target > 0 {
            let d = abs(log2(hz / notches[i].hz))
            if d < nearestDistance {
                nearest = i
                nearestDistance = d
            }
        }
        if nearest >= 0 && nearestDistance <= Self.widestWidth / 2 {
            var n = notches[nearest]
            if nearestDistance > n.width * 0.3 {
                // The howl moved to the notch's flank: widen it to cover both.
                let low = min(log2(n.hz) - n.width / 2, log2(hz) - n.width / 4)
                let high = max(log2(n.hz) + n.width / 2, log2(hz) + n.width / 4)
                n.width = min(Self.widestWidth, high - low)
                n.hz = pow(2, (low + high) / 2)
            }
            n.target = min(maxDepth, n.target + Self.depthStep + extra)
            n.lastRung = now
            if ringOut { n.fixed = true }
            n.design(sampleRate: sampleRate)
            notches[nearest] = n
            bank.publish(nearest)
            return
        }
        guard let slot = freeSlot(liveLimit: liveLimit) else { return }
        var n = FeedbackNotch()
        n.active = true
        n.fixed = ringOut
        n.hz = hz
        n.width = Self.firstWidth
        n.target = min(maxDepth, Self.firstDepth + extra)
        n.lastRung = now
        n.design(sampleRate: sampleRate)
        notches[slot] = n
        bank.publish(slot)
    }

    /// A slot for a new notch: a free one within the limits, else the live notch rung
    /// longest ago; nil when there is none (every slot fixed, or no live notches allowed).
    /// Thread: render.
    func freeSlot(liveLimit: Int) -> Int? {
        let notches = bank.notches
        let live = bank.count(fixed: false)
        if ringOut || live < liveLimit {
            for i in 0..<FeedbackNotchBank.capacity where !notches[i].active { return i }
        }
        guard ringOut || liveLimit > 0 else { return nil }
        var oldest = -1
        for i in 0..<FeedbackNotchBank.capacity where notches[i].active && !notches[i].fixed {
            if oldest < 0 || notches[i].lastRung < notches[oldest].lastRung { oldest = i }
        }
        if oldest >= 0 { notches[oldest].s1 = 0; notches[oldest].s2 = 0 }
        return oldest >= 0 ? oldest : nil
    }

    // MARK: - Readouts and saved state (not the render thread)

    /// The notches in place, lowest first. Thread: any (not render).
    public var notchReadings: [FeedbackNotchReading] {
        (0..<FeedbackNotchBank.capacity).compactMap { bank.reading($0) }.sorted { $0.hz < $1.hz }
    }

    /// Whether ring-out mode is on. Thread: any.
    public var isRingingOut: Bool { ringOutFlag.load(ordering: .relaxed) }

    /// `notches`, `fixed`, `ringOut`, then per notch N (lowest first) `hzN` and `depthN`.
    /// Thread: any (not render).
    public var readouts: [(name: String, value: Float)] {
        let all = notchReadings
        var out: [(name: String, value: Float)] = [
            ("notches", Float(all.count)), ("fixed", Float(all.filter(\.fixed).count)), ("ringOut", isRingingOut ? 1 : 0),
        ]
        for (i, n) in all.enumerated() {
            out.append(("hz\(i + 1)", Float(n.hz)))
            out.append(("depth\(i + 1)", Float(n.depth)))
        }
        return out
    }

    /// `feedback: 2 notches: 1250 Hz -9 dB fixed, 3150 Hz -6 dB`, `feedback: no notches`,
    /// with `ringing out, ` after the colon in ring-out mode. Thread: any (not render).
    public func readoutText(unitID: String) -> String {
        let all = notchReadings
        let mode = isRingingOut ? "ringing out, " : ""
        guard !all.isEmpty else { return "\(unitID): \(mode)no notches" }
        let list = all.map { "\(formatNumber($0.hz.rounded())) Hz -\(formatNumber($0.depth.rounded())) dB\($0.fixed ? " fixed" : "")" }
        return "\(unitID): \(mode)\(all.count) notch\(all.count == 1 ? "" : "es"): " + list.joined(separator: ", ")
    }

    /// The fixed notches as the unit's `"state"`: `{ "notches": [ { "hz": …, "depth": …,
    /// "width": … } ] }`; nil when there are none. Thread: control.
    public func savedStateJSON() throws -> String? {
        let fixed = notchReadings.filter(\.fixed)
        guard !fixed.isEmpty else { return nil }
        let lines = fixed.map {
            "    { \"hz\": \(formatNumber(($0.hz * 10).rounded() / 10)), \"depth\": \(formatNumber($0.depth)), \"width\": \(formatNumber(($0.width * 10000).rounded() / 10000)) }"
        }
        return "{\n  \"notches\": [\n" + lines.joined(separator: ",\n") + "\n  ]\n}"
    }
}
