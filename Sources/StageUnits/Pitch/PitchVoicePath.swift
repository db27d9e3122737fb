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
    /// Density compensation when it was placed (block rendering; `process` applies the
    /// current one to all grains).
    var gain: Float = 1
    /// Absolute time after which it is silent (a voice put to sleep; block rendering).
    var stop: Int64 = .max
}

/// The synthesis half of TD-PSOLA: one output voice placing grains on the marks of a
/// `PitchMarkTracker` (which may drive several voices).
///
/// Synthesis marks advance by the local analysis period ÷ ratio (or by a fixed `period`,
/// for a voice that sings a given note whatever the input sings). Each takes the analysis
/// mark nearest to itself minus `latency` and plays a grain of the input around it: a
/// rising half-Hann over the period before the mark and a falling one over the period
/// after it (two periods, Hann: classic TD-PSOLA). The output thus keeps the spectral
/// envelope (formants) and changes the pitch. At ratio 1 the grains are complementary and
/// the output is the input delayed by exactly `latency`. With a `formant` ratio other than
/// 1, each grain reads the input that much faster around its mark (linear interpolation),
/// which moves the spectral envelope up by that ratio.
///
/// Latency: a grain must start `rise` samples before its synthesis mark, and its analysis
/// mark (found up to 0.2 periods after it) must be known then. With the nearest mark within
/// half a period of `synthesis − latency`, full two-period Hann grains fit when
/// 1.7·period + 13 ≤ latency: periods up to 8.4 ms (voices above 120 Hz at 14.5 ms). For
/// lower voices the rise and fall shorten to `latency − 0.7·period − 13` samples (a
/// flat-topped window, still complementary at ratio 1): at 80 Hz, 44 % of a period.
///
/// Unvoiced input makes no grains. `fallback` tells the owner how much of another path to
/// add: all of it while no grains play, and 1 − (sum of grain windows) while the first
/// grain of a voiced stretch rises and while the last ones fall, so a handover is a
/// crossfade by the grains' own windows. Between, PSOLA plays alone. The share never rises
/// faster than a 5 ms ramp or the grains' fall, so a stretch that ends in a gap between
/// grains fades. Thread: render; memory is allocated in `init` (control) and freed by
/// `deallocate`.
struct PsolaSynthesis {
    let latency: Int
    var active = false
    var nextSynthesis: Double = 0
    var firstCenter: Int64 = 0
    var decideAt: Int64 = 0
    let grainCapacity: Int
    let grains: UnsafeMutablePointer<PsolaGrain>
    var grainCount = 0
    /// Grains whose `right` is not known yet (block rendering resolves only while some are).
    var unresolved = 0

    /// How much of the other path the owner adds (0…1), for the current sample.
    var fallback: Float = 1
    var lastCoverage: Float = 0
    let fallbackStep: Float

    /// Thread: control. `grainCapacity`: grains alive at once (block rendering keeps a
    /// block's finished grains until the block is rendered: see PsolaBlockSynthesis.swift).
    init(sampleRate: Double, latency: Int, grainCapacity: Int = 16) {
        self.latency = latency
        self.grainCapacity = grainCapacity
        grains = .allocate(capacity: grainCapacity)
        fallbackStep = Float(1 / (0.005 * sampleRate))
    }

    /// Thread: control.
    func deallocate() { grains.deallocate() }

    /// Thread: render (or control while idle). Allocates nothing.
    mutating func reset() {
        active = false
        nextSynthesis = 0
        firstCenter = 0
        decideAt = 0
        grainCount = 0
        unresolved = 0
        fallback = 1
        lastCoverage = 0
    }

    /// True when the voice contributes nothing.
    var idle: Bool { !active && grainCount == 0 }

    /// True when `process` at `now` may read `ratio` and `period` (the owner may compute
    /// them only then). Thread: render.
    @inline(__always)
    func needsStep(at now: Int64) -> Bool { !active || now >= decideAt }

    /// One output sample at absolute time `now`, after `marks.advance` for it. `ratio` (and
    /// `period` when > 0: the output period in samples, overriding the ratio) are read only
    /// when a grain is placed. `gain` compensates the grain density when shifting up
    /// (1/√ratio keeps the RMS); when shifting down it is 1, so each pulse keeps its level
    /// and the RMS falls with the pulse rate, as in a lower voice. `formant` is the rate at
    /// which grains read the input (1 keeps the formants). `analyze` false stops placing
    /// grains (those playing finish). Thread: render.
    @inline(__always)
    mutating func process(
        marks m: UnsafePointer<PitchMarkTracker>, ring: UnsafePointer<Float>, mask: Int, now: Int64, ratio: Float,
        period: Double = 0, gain: Float, formant: Float = 1, analyze: Bool, riseTable: UnsafePointer<Float>
    ) -> Float {
        if analyze {
            if !active && m.pointee.tracking && m.pointee.markCount > m.pointee.segmentFirst { tryActivate(m, now: now) }
        } else {
            active = false
        }
        if active && now >= decideAt { schedule(m, now: now, ratio: ratio, period: period) }

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
                if grain.pointee.right == 0 { resolveRight(m, grain, j: j) }
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
            if formant == 1 {
                sum += w * ring[Int((now - Int64(grain.pointee.delay)) & Int64(mask))]
            } else {
                // Read around the analysis mark at `formant` times the rate, never ahead of now.
                let mark = Double(grain.pointee.center - Int64(grain.pointee.delay))
                let t = min(mark + Double(formant) * Double(j), Double(now))
                let whole = t.rounded(.down)
                let f = Float(t - whole)
                let i0 = Int64(whole)
                let a = ring[Int(i0 & Int64(mask))]
                let b = ring[Int((i0 + 1) & Int64(mask))]
                sum += w * (a + f * (b - a))
            }
            coverage += w
            g += 1
        }
        let target: Float = active && now >= firstCenter ? 0 : max(0, 1 - coverage)
        let rise = max(fallbackStep, lastCoverage - coverage)
        fallback = min(target, fallback + rise)
        lastCoverage = coverage
        return sum * gain
    }

    /// Sets a grain's right extent from the next mark of its segment, or from the
    /// prediction once the fall must begin; never so that the window jumps. Thread: render.
    @inline(__always)
    mutating func resolveRight(_ m: UnsafePointer<PitchMarkTracker>, _ grain: UnsafeMutablePointer<PsolaGrain>, j: Int) {
        let next = grain.pointee.mark + 1
        var right = 0
        if next < m.pointee.markCount && m.pointee.markCount - next < Int64(m.pointee.markCapacity)
            && m.pointee.markSegments[Int(next & Int64(m.pointee.markCapacity - 1))] == grain.pointee.segment
        {
            right = Int(m.pointee.mark(next) - m.pointee.mark(grain.pointee.mark))
        } else {
            let predicted = grain.pointee.predictedRight
            if j >= predicted - m.pointee.riseLength(predicted) { right = predicted }
        }
        if right > 0 {
            let fall = min(m.pointee.riseLength(right), right)
            // A mark found late (after the fall should have begun): fall from here instead
            // of jumping into the fall or past the grain's end.
            if j > right - fall { right = j + fall }
            grain.pointee.right = right
            unresolved -= 1
            grain.pointee.fall = fall
            grain.pointee.fallScale = 1024 / Float(fall)
        }
    }

    /// Starts synthesis on the newest mark if its grain can still start on time.
    mutating func tryActivate(_ m: UnsafePointer<PitchMarkTracker>, now: Int64) {
        let newest = m.pointee.markCount - 1
        let a = m.pointee.mark(newest)
        let left = newest > m.pointee.segmentFirst ? Int(a - m.pointee.mark(newest - 1)) : Int(m.pointee.period.rounded())
        let rise = m.pointee.riseLength(left)
        if a + Int64(latency - rise) >= now {
            active = true
            nextSynthesis = Double(a + Int64(latency))
            firstCenter = a + Int64(latency)
            decideAt = a + Int64(latency - rise)
        }
    }

    /// Places the grain of the next synthesis mark and advances it. Thread: render.
    mutating func schedule(_ m: UnsafePointer<PitchMarkTracker>, now: Int64, ratio: Float, period: Double, gain: Float = 1) {
        let newestIndex = m.pointee.markCount - 1
        let oldestIndex = max(m.pointee.segmentFirst, m.pointee.markCount - Int64(m.pointee.markCapacity) + 1)
        guard newestIndex >= oldestIndex else {
            active = false
            return
        }
        let center = Int64(nextSynthesis.rounded())
        let t = nextSynthesis - Double(latency)
        let newest = m.pointee.mark(newestIndex)
        let lastSpacing = newestIndex > oldestIndex ? Double(newest - m.pointee.mark(newestIndex - 1)) : m.pointee.period
        if !m.pointee.tracking && t > Double(newest) + 0.5 * lastSpacing {
            active = false
            return
        }
        // The analysis mark nearest to t.
        var best = newestIndex
        var bestDistance = abs(Double(newest) - t)
        var k = newestIndex - 1
        while k >= oldestIndex {
            let mk = Double(m.pointee.mark(k))
            let d = abs(mk - t)
            if d < bestDistance {
                best = k
                bestDistance = d
            } else if mk < t {
                break
            }
            k -= 1
        }
        let a = m.pointee.mark(best)
        let delay = Int(center - a)
        if delay < 0 || delay > 3 * latency {
            active = false
            return
        }
        if center > now && grainCount < grainCapacity {
            let left = best > oldestIndex ? Int(a - m.pointee.mark(best - 1)) : Int(m.pointee.period.rounded())
            let rise = max(1, min(m.pointee.riseLength(left), Int(center - now)))
            var right = 0
            var fall = 1
            if best < newestIndex {
                right = Int(m.pointee.mark(best + 1) - a)
                fall = min(m.pointee.riseLength(right), right)
            }
            grains[grainCount] = PsolaGrain(
                center: center, delay: delay, rise: rise, right: right, fall: fall, mark: best,
                segment: m.pointee.markSegments[Int(best & Int64(m.pointee.markCapacity - 1))],
                riseScale: 1024 / Float(rise), fallScale: 1024 / Float(fall), predictedRight: max(left, 1), gain: gain)
            grainCount += 1
            if right == 0 { unresolved += 1 }
        }
        let local = max(m.pointee.localPeriod(t, oldest: oldestIndex, newest: newestIndex), 2)
        nextSynthesis += period > 0 ? max(period, 2) : local / Double(ratio)
        decideAt = Int64(nextSynthesis.rounded()) - Int64(m.pointee.riseLength(Int(local.rounded()))) - 2
    }
}

/// The `voice`-mode pitch shifter for one channel: TD-PSOLA, one `PitchMarkTracker` and
/// one `PsolaSynthesis` (see both for the method, latency and the fallback). Thread:
/// render; memory is allocated in `init` (control) and freed by `deallocate`.
struct VoicePath {
    var marks: PitchMarkTracker
    var synthesis: PsolaSynthesis

    /// Thread: control.
    init(sampleRate: Double, latency: Int, historySize: Int) {
        marks = PitchMarkTracker(sampleRate: sampleRate, latency: latency, historySize: historySize)
        synthesis = PsolaSynthesis(sampleRate: sampleRate, latency: latency)
    }

    var detector: PitchDetector { marks.detector }
    /// How much of the granular path the channel adds (0…1), for the current sample.
    var fallback: Float { synthesis.fallback }
    /// True when the path contributes nothing and may stop being called.
    var idle: Bool { synthesis.idle }

    /// Thread: control.
    func deallocate() {
        marks.deallocate()
        synthesis.deallocate()
    }

    /// Thread: render (or control while idle). Allocates nothing.
    mutating func reset() {
        marks.reset()
        synthesis.reset()
    }

    /// Called when the channel stops calling `process` (so the smoothing restarts cleanly).
    mutating func sleep() { marks.sleep() }

    /// One output sample of the PSOLA path at absolute time `now` (ring holds `x` there).
    /// Thread: render.
    @inline(__always)
    mutating func process(
        ring: UnsafePointer<Float>, mask: Int, now: Int64, x: Float, ratio: Float, gain: Float,
        voiceMode: Bool, riseTable: UnsafePointer<Float>
    ) -> Float {
        marks.advance(ring: ring, mask: mask, now: now, x: x, analyze: voiceMode)
        return synthesis.process(
            marks: &marks, ring: ring, mask: mask, now: now, ratio: ratio, gain: gain, analyze: voiceMode,
            riseTable: riseTable)
    }

    /// Linear interpolation in a 1025-entry table at position `x` in 0…1024.
    @inline(__always)
    static func lookup(_ table: UnsafePointer<Float>, _ x: Float) -> Float {
        let c = min(max(x, 0), 1024)
        let i = min(Int(c), 1023)
        let f = c - Float(i)
        return table[i] + f * (table[i + 1] - table[i])
    }
}
