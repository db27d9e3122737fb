#if canImport(Glibc)
import Glibc
#endif

/// The analysis half of TD-PSOLA for one channel: the pitch detector and the pitch marks.
/// One tracker can drive any number of `PsolaSynthesis` voices (the `pitch` unit has one,
/// `harmony` up to four: the detector runs once for all of them).
///
/// The detector (every `hop` samples, at fixed absolute times) gives the period and
/// voicing. While voiced, the tracker places one pitch mark per period on the peaks of a
/// 1 kHz low-passed copy of the input (polarity chosen at the voiced onset), searching
/// ±10 % around one period after the previous mark, and corrected for the filter's group
/// delay. Marks are integer sample times; their spacing, not the detector's estimate, sets
/// the output period of a shifted voice, so its frequency is exact on average.
///
/// Thread: render; memory is allocated in `init` (control) and freed by `deallocate`.
struct PitchMarkTracker {
    let latency: Int
    let minimumRise: Int
    /// Mark search reaches ±delta periods around the prediction.
    let delta: Double = 0.1
    let hopMask: Int64
    var detector: PitchDetector

    // Pitch marks (analysis), in a ring of `markCapacity`.
    let markCapacity = 64
    let marks: UnsafeMutablePointer<Int64>
    let markSegments: UnsafeMutablePointer<Int32>
    var markCount: Int64 = 0
    var segmentFirst: Int64 = 0
    var segment: Int32 = 0

    // Low-passed input for peak picking (biquad, transposed direct form II).
    let smooth: UnsafeMutablePointer<Float>
    let smoothMask: Int
    let b0: Float, b1: Float, b2: Float, a1: Float, a2: Float
    var z1: Float = 0
    var z2: Float = 0
    let groupDelay: Int
    var smoothRunning = false
    var smoothSince: Int64 = 0

    // Tracker.
    var tracking = false
    var lastPeak: Int64 = 0
    var searchAt: Int64 = .max
    var polarity: Float = 1
    var period: Double = 0

    /// Thread: control.
    init(sampleRate: Double, latency: Int, historySize: Int) {
        self.latency = latency
        minimumRise = max(8, Int((sampleRate * 0.00067).rounded()))
        var hop = 1
        while Double(hop * 2) <= sampleRate * 0.0054 { hop *= 2 }
        hopMask = Int64(hop - 1)
        detector = PitchDetector(sampleRate: sampleRate)
        marks = .allocate(capacity: markCapacity)
        marks.initialize(repeating: 0, count: markCapacity)
        markSegments = .allocate(capacity: markCapacity)
        markSegments.initialize(repeating: 0, count: markCapacity)
        smooth = .allocate(capacity: historySize)
        smooth.initialize(repeating: 0, count: historySize)
        smoothMask = historySize - 1
        let w0 = 2 * Double.pi * 1000 / sampleRate
        let alpha = sin(w0) / (2 * 0.7071067811865476)
        let a0 = 1 + alpha
        b0 = Float((1 - cos(w0)) / 2 / a0)
        b1 = Float((1 - cos(w0)) / a0)
        b2 = Float((1 - cos(w0)) / 2 / a0)
        a1 = Float(-2 * cos(w0) / a0)
        a2 = Float((1 - alpha) / a0)
        groupDelay = Int((2.0.squareRoot() / (2 * Double.pi * 1000) * sampleRate).rounded())
    }

    /// Thread: control.
    func deallocate() {
        detector.deallocate()
        marks.deallocate()
        markSegments.deallocate()
        smooth.deallocate()
    }

    /// Thread: render (or control while idle). Allocates nothing.
    mutating func reset() {
        detector.reset()
        marks.update(repeating: 0, count: markCapacity)
        markSegments.update(repeating: 0, count: markCapacity)
        markCount = 0
        segmentFirst = 0
        segment = 0
        smooth.update(repeating: 0, count: smoothMask + 1)
        z1 = 0
        z2 = 0
        smoothRunning = false
        smoothSince = 0
        tracking = false
        lastPeak = 0
        searchAt = .max
        polarity = 1
        period = 0
    }

    /// Called when the owner stops calling `advance` (so the smoothing restarts cleanly).
    mutating func sleep() {
        smoothRunning = false
        tracking = false
    }

    @inline(__always)
    func mark(_ index: Int64) -> Int64 { marks[Int(index & Int64(markCapacity - 1))] }

    /// Rise (and fall) length of a grain whose neighbouring analysis period is `p`.
    @inline(__always)
    func riseLength(_ p: Int) -> Int {
        min(max(p, 1), max(minimumRise, latency - (7 * p) / 10 - groupDelay - 2))
    }

    /// Takes input sample `x` at absolute time `now` (the ring holds it there): smooths it,
    /// runs the detector at hop boundaries, and places marks when `analyze` (otherwise
    /// tracking stops). Returns true when the detector ran on this sample. Thread: render.
    @inline(__always) @discardableResult
    mutating func advance(ring: UnsafePointer<Float>, mask: Int, now: Int64, x: Float, analyze: Bool) -> Bool {
        if !smoothRunning {
            smoothRunning = true
            smoothSince = now
            z1 = 0
            z2 = 0
        }
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        if abs(z1) < 1e-20 { z1 = 0 }
        if abs(z2) < 1e-20 { z2 = 0 }
        smooth[Int(now & Int64(smoothMask))] = y
        guard analyze else {
            tracking = false
            return false
        }
        var analysed = false
        if (now + 1) & hopMask == 0 {
            detector.analyze(ring: ring, mask: mask, now: now)
            updateTracker(now: now)
            analysed = true
        }
        if tracking && now >= searchAt { findMark(now: now) }
        return analysed
    }

    /// After each analysis: start a segment of marks at a voiced onset, end it when
    /// unvoiced. Thread: render.
    mutating func updateTracker(now: Int64) {
        guard detector.voiced else {
            tracking = false
            return
        }
        period = max(detector.period, 8)
        if tracking {
            searchAt = lastPeak + Int64(period * (1 + delta) + 0.5)
            return
        }
        let p = Int(period.rounded())
        guard now - smoothSince > Int64(p + 16) else { return }
        var maxValue = -Float.infinity
        var minValue = Float.infinity
        var maxAt = now
        var minAt = now
        var t = now - Int64(p) - 4
        while t <= now - 4 {
            let v = smooth[Int(t & Int64(smoothMask))]
            if v > maxValue {
                maxValue = v
                maxAt = t
            }
            if v < minValue {
                minValue = v
                minAt = t
            }
            t += 1
        }
        polarity = maxValue >= -minValue ? 1 : -1
        segment &+= 1
        segmentFirst = markCount
        tracking = true
        appendMark(peak: polarity > 0 ? maxAt : minAt)
    }

    /// Records a mark at a peak of the smoothed signal. Thread: render.
    @inline(__always)
    mutating func appendMark(peak: Int64) {
        let slot = Int(markCount & Int64(markCapacity - 1))
        marks[slot] = peak - Int64(groupDelay)
        markSegments[slot] = segment
        markCount += 1
        lastPeak = peak
        searchAt = peak + Int64(period * (1 + delta) + 0.5)
    }

    /// The next mark: the strongest peak (in the onset's polarity) within ±delta periods of
    /// one period after the last. Thread: render.
    mutating func findMark(now: Int64) {
        let low = lastPeak + Int64(max(1, Int(period * (1 - delta))))
        let high = min(searchAt, now)
        var best = low
        var bestValue = -Float.infinity
        var t = low
        while t <= high {
            let v = polarity * smooth[Int(t & Int64(smoothMask))]
            if v > bestValue {
                bestValue = v
                best = t
            }
            t += 1
        }
        appendMark(peak: best)
    }

    /// The analysis period around input time `t`: the mark interval containing it, else
    /// the nearest known one, else the detector's. Thread: render.
    @inline(__always)
    func localPeriod(_ t: Double, oldest: Int64, newest: Int64) -> Double {
        var k = newest
        while k > oldest && Double(mark(k)) > t { k -= 1 }
        if k < newest { return Double(mark(k + 1) - mark(k)) }
        if k > oldest { return Double(mark(k) - mark(k - 1)) }
        return period
    }
}
