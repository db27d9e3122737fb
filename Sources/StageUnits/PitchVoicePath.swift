#if canImport(Glibc)
import Glibc
#endif

/// One PSOLA grain: the input read at a fixed delay (synthesis mark − analysis mark),
/// windowed around its synthesis mark. Thread: render.
struct PsolaGrain {
    /// Absolute time of the synthesis mark (the window's centre).
    var center: Int64
    /// Samples between the synthesis mark and its analysis mark.
    var delay: Int
    /// Length of the rising half-Hann before the centre.
    var rise: Int
    /// Samples from the centre to the grain's end: one analysis period (0 = not known yet).
    var right: Int
    /// Length of the falling half-Hann ending at `right`.
    var fall: Int
    /// The analysis mark's index, to learn `right` when the next mark is found.
    var mark: Int64
    var segment: Int32
    var riseScale: Float
    var fallScale: Float
    /// `right` to use if the next mark never comes (the period before the mark).
    var predictedRight: Int
}

/// The `voice`-mode pitch shifter for one channel: time-domain pitch-synchronous
/// overlap-add (TD-PSOLA) driven by `PitchDetector`.
///
/// Analysis: the detector (every `hop` samples, at fixed absolute times) gives the period
/// and voicing. While voiced, a tracker places one pitch mark per period on the peaks of a
/// 1 kHz low-passed copy of the input (polarity chosen at the voiced onset), searching
/// ±10 % around one period after the previous mark, and corrected for the filter's group
/// delay. Marks are integer sample times; their spacing, not the detector's estimate, sets
/// the output period, so the output frequency is exact on average.
///
/// Synthesis: synthesis marks advance by the local analysis period ÷ ratio. Each takes the
/// analysis mark nearest to itself minus `latency` and plays a grain of the input around
/// it: a rising half-Hann over the period before the mark and a falling one over the period
/// after it (two periods, Hann: classic TD-PSOLA). The output thus keeps the spectral
/// envelope (formants) and changes the pitch. At ratio 1 the grains are complementary and
/// the output is the input delayed by exactly `latency`.
///
/// Latency: a grain must start `rise` samples before its synthesis mark, and its analysis
/// mark (found up to 0.2 periods after it) must be known then. With the nearest mark within
/// half a period of `synthesis − latency`, full two-period Hann grains fit when
/// 1.7·period + 13 ≤ latency: periods up to 8.4 ms (voices above 120 Hz at 14.5 ms). For
/// lower voices the rise and fall shorten to `latency − 0.7·period − 13` samples (a
/// flat-topped window, still complementary at ratio 1): at 80 Hz, 44 % of a period.
///
/// Unvoiced input makes no grains. `fallback` tells the channel how much of the other
/// path to add (granular at a voiced onset, the delayed input while unvoiced: see
/// `PitchChannel`): all of it while no grains play, and 1 − (sum of grain windows) while the
/// first grain of a voiced stretch rises and while the last ones fall, so the handover is
/// a crossfade by the grains' own windows (exact at ratio 1: both paths are then the same
/// delay). Between, PSOLA plays alone. The share never rises faster than a 5 ms ramp or
/// the grains' fall, so a stretch that ends in a gap between grains fades. Thread: render; memory is allocated in `init`
/// (control) and freed by `deallocate`.
struct VoicePath {
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

    // Synthesis.
    var active = false
    var nextSynthesis: Double = 0
    var firstCenter: Int64 = 0
    var decideAt: Int64 = 0
    let grainCapacity = 16
    let grains: UnsafeMutablePointer<PsolaGrain>
    var grainCount = 0

    /// How much of the granular path the channel adds (0…1), for the current sample.
    var fallback: Float = 1
    var lastCoverage: Float = 0
    let fallbackStep: Float

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
        grains = .allocate(capacity: grainCapacity)
        fallbackStep = Float(1 / (0.005 * sampleRate))
    }

    /// Thread: control.
    func deallocate() {
        detector.deallocate()
        marks.deallocate()
        markSegments.deallocate()
        smooth.deallocate()
        grains.deallocate()
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
        active = false
        nextSynthesis = 0
        firstCenter = 0
        decideAt = 0
        grainCount = 0
        fallback = 1
        lastCoverage = 0
    }

    /// True when the path contributes nothing and may stop being called.
    var idle: Bool { !active && grainCount == 0 }

    /// Called when the channel stops calling `process` (so the smoothing restarts cleanly).
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

    /// One output sample of the PSOLA path at absolute time `now` (ring holds `x` there).
    /// `gain` compensates the grain density when shifting up (1/√ratio keeps the RMS); when
    /// shifting down it is 1, so each pulse keeps its level and the RMS falls with the pulse
    /// rate, as in a lower voice, and no peak ever exceeds the input's. Thread: render.
    @inline(__always)
    mutating func process(
        ring: UnsafePointer<Float>, mask: Int, now: Int64, x: Float, ratio: Float, gain: Float,
        voiceMode: Bool, riseTable: UnsafePointer<Float>
    ) -> Float {
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

        if voiceMode {
            if (now + 1) & hopMask == 0 {
                detector.analyze(ring: ring, mask: mask, now: now)
                updateTracker(now: now)
            }
            if tracking && now >= searchAt { findMark(now: now) }
            if !active && tracking && markCount > segmentFirst { tryActivate(now: now) }
        } else {
            tracking = false
            active = false
        }
        if active && now >= decideAt { schedule(now: now, ratio: ratio) }

        var sum: Float = 0
        var coverage: Float = 0
        var g = 0
        while g < grainCount {
            let grain = grains + g
            let j = Int(now - grain.pointee.center)
            var w: Float
            if j < 0 {
                let i = j + grain.pointee.rise
                if i < 0 {
                    g += 1
                    continue
                }
                w = VoicePath.lookup(riseTable, Float(i) * grain.pointee.riseScale)
            } else {
                if grain.pointee.right == 0 { resolveRight(grain, j: j) }
                let fallStart = grain.pointee.right - grain.pointee.fall
                if grain.pointee.right == 0 || j < fallStart {
                    w = 1
                } else if j < grain.pointee.right {
                    w = VoicePath.lookup(riseTable, 1024 - Float(j - fallStart) * grain.pointee.fallScale)
                } else {
                    grainCount -= 1
                    grains[g] = grains[grainCount]
                    continue
                }
            }
            sum += w * ring[Int((now - Int64(grain.pointee.delay)) & Int64(mask))]
            coverage += w
            g += 1
        }
        // The granular share fills what the grains leave, but rises no faster than a 5 ms
        // ramp or the grains' own fall (so it stays their exact complement at ratio 1,
        // and fades in smoothly when voicing ends in a gap between grains, ratio < 1).
        let target: Float = active && now >= firstCenter ? 0 : max(0, 1 - coverage)
        let rise = max(fallbackStep, lastCoverage - coverage)
        fallback = min(target, fallback + rise)
        lastCoverage = coverage
        return sum * gain
    }

    /// Linear interpolation in a 1025-entry table at position `x` in 0…1024.
    @inline(__always)
    static func lookup(_ table: UnsafePointer<Float>, _ x: Float) -> Float {
        let c = min(max(x, 0), 1024)
        let i = min(Int(c), 1023)
        let f = c - Float(i)
        return table[i] + f * (table[i + 1] - table[i])
    }

    /// Sets a grain's right extent from the next mark of its segment, or from the
    /// prediction once the fall must begin; never so that the window jumps. Thread: render.
    @inline(__always)
    mutating func resolveRight(_ grain: UnsafeMutablePointer<PsolaGrain>, j: Int) {
        let next = grain.pointee.mark + 1
        var right = 0
        if next < markCount && markCount - next < Int64(markCapacity)
            && markSegments[Int(next & Int64(markCapacity - 1))] == grain.pointee.segment
        {
            right = Int(mark(next) - mark(grain.pointee.mark))
        } else {
            let predicted = grain.pointee.predictedRight
            if j >= predicted - riseLength(predicted) { right = predicted }
        }
        if right > 0 {
            let fall = min(riseLength(right), right)
            // A mark found late (after the fall should have begun): fall from here instead
            // of jumping into the fall or past the grain's end.
            if j > right - fall { right = j + fall }
            grain.pointee.right = right
            grain.pointee.fall = fall
            grain.pointee.fallScale = 1024 / Float(fall)
        }
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

    /// Starts synthesis on the newest mark if its grain can still start on time.
    mutating func tryActivate(now: Int64) {
        let newest = markCount - 1
        let a = mark(newest)
        let left = newest > segmentFirst ? Int(a - mark(newest - 1)) : Int(period.rounded())
        let rise = riseLength(left)
        if a + Int64(latency - rise) >= now {
            active = true
            nextSynthesis = Double(a + Int64(latency))
            firstCenter = a + Int64(latency)
            decideAt = a + Int64(latency - rise)
        }
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

    /// Places the grain of the next synthesis mark and advances it. Thread: render.
    mutating func schedule(now: Int64, ratio: Float) {
        let newestIndex = markCount - 1
        let oldestIndex = max(segmentFirst, markCount - Int64(markCapacity) + 1)
        guard newestIndex >= oldestIndex else {
            active = false
            return
        }
        let center = Int64(nextSynthesis.rounded())
        let t = nextSynthesis - Double(latency)
        let newest = mark(newestIndex)
        let lastSpacing = newestIndex > oldestIndex ? Double(newest - mark(newestIndex - 1)) : period
        if !tracking && t > Double(newest) + 0.5 * lastSpacing {
            active = false
            return
        }
        // The analysis mark nearest to t.
        var best = newestIndex
        var bestDistance = abs(Double(newest) - t)
        var k = newestIndex - 1
        while k >= oldestIndex {
            let m = Double(mark(k))
            let d = abs(m - t)
            if d < bestDistance {
                best = k
                bestDistance = d
            } else if m < t {
                break
            }
            k -= 1
        }
        let a = mark(best)
        let delay = Int(center - a)
        if delay < 0 || delay > 3 * latency {
            active = false
            return
        }
        if center > now && grainCount < grainCapacity {
            let left = best > oldestIndex ? Int(a - mark(best - 1)) : Int(period.rounded())
            let rise = max(1, min(riseLength(left), Int(center - now)))
            var right = 0
            var fall = 1
            if best < newestIndex {
                right = Int(mark(best + 1) - a)
                fall = min(riseLength(right), right)
            }
            grains[grainCount] = PsolaGrain(
                center: center, delay: delay, rise: rise, right: right, fall: fall, mark: best,
                segment: markSegments[Int(best & Int64(markCapacity - 1))],
                riseScale: 1024 / Float(rise), fallScale: 1024 / Float(fall), predictedRight: max(left, 1))
            grainCount += 1
        }
        let local = max(localPeriod(t, oldest: oldestIndex, newest: newestIndex), 2)
        nextSynthesis += local / Double(ratio)
        decideAt = Int64(nextSynthesis.rounded()) - Int64(riseLength(Int(local.rounded()))) - 2
    }
}
