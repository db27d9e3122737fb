#if canImport(Glibc)
import Glibc
#endif

/// Finds acoustic feedback in the `feedback` unit's input, one analysis a hop.
///
/// Each analysis takes the last `size` samples (2,048 at 48 kHz: 43 ms) through a Hann
/// window and an FFT (FFTW's, through `FeedbackFFT`), then:
/// 1. **Peaks**: local maxima from 60 Hz to 16 kHz above −80 dBFS that stand out from
///    their neighbourhood (the mean power 3–10 bins either side) by the prominence the
///    sensitivity asks (14–30 dB): a narrowband tone; noise, consonants and the dense
///    harmonics of a low voice do not.
/// 2. **Tracks**: each peak continues the track within one bin of it (up to 16 tracks),
///    its frequency measured to a fraction of a hertz from the phase advance over the hop
///    (the phase vocoder's estimate) and its level kept. A track that moves by more than
///    4 cents starts its measurement over; one that moved by 10 cents or more (a vibrato's
///    swing, a glide) must then hold still for 12 hops (128 ms) before it may count.
/// 3. **Decision**: a track is feedback once it has lasted `persistence` hops (3–8 with the
///    sensitivity), its frequency has moved by less than 4 cents (and 1 Hz) over its life
///    (a sung note's vibrato moves it tens of cents), its level has not fallen by more than
///    3 dB (a howl grows or holds; a note's partial decays), and no prominent peak sits at
///    twice, three times, a half or a third of its frequency (a voice's harmonic series; a
///    howl is a single tone).
/// 4. **Lasting**: a track is found the first time only once it has stood out for
///    `firstFindSeconds` (85 ms) since it began, however often its measurement started
///    over. A voice whose pitch holds dead still with weak harmonics (espeak-ng's en+f3)
///    passes every test above, but its fundamental stands out alone and still for at most
///    4 hops (43 ms) before the syllable moves on; a howl keeps ringing.
/// A track that is found is re-armed, so a howl that still rings after its notch is found
/// again (and the notch deepened) two hops later. Memory is allocated in `init`;
/// `analyze` allocates nothing. Thread: made on the control thread; used on the render thread.
final class FeedbackDetector {
    /// One tone followed from hop to hop. Thread: render (value).
    struct Track {
        var active = false
        var bin = 0
        var hz: Double = 0
        var hops = 0
        var missed = 0
        var firstLevel: Float = 0
        var level: Float = 0
        var lowHz: Double = 0
        var highHz: Double = 0
        /// Hops since the tone last moved by 10 cents or more (a vibrato's swing).
        var sinceMove = 1000
        /// Hops since the track began (not restarted when its measurement starts over).
        var age = 0
        /// Whether it has been found (then re-found every two hops while it rings).
        var found = false
    }

    /// Hops a tone that moved must then hold still before it can be feedback: more than
    /// half a slow vibrato's cycle (5 Hz), so a sung note is not caught at its turning points.
    static let stillAfterMove = 12

    /// How long a track must have stood out before it is found the first time: twice the
    /// longest a still voice's fundamental stood out alone in espeak-ng's speech (43 ms); at
    /// 75 ms en+f3 spoken slowly (90 words a minute) was notched again.
    static let firstFindSeconds = 0.085

    static let trackCount = 16
    static let candidateCount = 8
    let size: Int
    let hop: Int
    let sampleRate: Double
    /// FFTW's plan, its windowed input and this analysis's and the last one's spectra.
    var fft: FeedbackFFT
    let window: UnsafeMutablePointer<Float>
    let power: UnsafeMutablePointer<Float>
    let tracks: UnsafeMutablePointer<Track>
    let candidates: UnsafeMutablePointer<Int>
    /// This analysis's findings (frequency, and how many dB it grew while it was
    /// watched), `foundCount` of them.
    let found: UnsafeMutablePointer<(hz: Double, growth: Float)>
    private(set) var foundCount = 0
    let lowBin: Int
    let highBin: Int
    /// `firstFindSeconds` in hops.
    let firstFindHops: Int
    /// Power of a full-scale sine's peak bin (for dBFS).
    let fullScale: Float

    init(sampleRate: Double) {
        self.sampleRate = sampleRate
        var n = 1024
        while Double(n) < 0.04 * sampleRate { n *= 2 }
        size = n
        hop = n / 4
        fft = FeedbackFFT(size: n)
        window = .allocate(capacity: n)
        for i in 0..<n { window[i] = Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))) }
        power = .allocate(capacity: n / 2 + 1)
        tracks = .allocate(capacity: Self.trackCount)
        candidates = .allocate(capacity: Self.candidateCount)
        found = .allocate(capacity: Self.candidateCount)
        found.initialize(repeating: (0, 0), count: Self.candidateCount)
        lowBin = max(4, Int(60 * Double(n) / sampleRate))
        highBin = min(n / 2 - 14, Int(min(16000, 0.45 * sampleRate) * Double(n) / sampleRate))
        fullScale = Float(n * n) / 16
        firstFindHops = max(1, Int((Self.firstFindSeconds * sampleRate / Double(n / 4)).rounded()))
        reset()
    }

    func deallocate() {
        fft.deallocate()
        for p in [window, power] { p.deallocate() }
        tracks.deallocate()
        candidates.deallocate()
        found.deallocate()
    }

    /// Forgets every track. Thread: render, or control while not rendering.
    func reset() {
        tracks.initialize(repeating: Track(), count: Self.trackCount)
        fft.clear()
        foundCount = 0
    }

    func dB(_ p: Float) -> Float { 10 * log10f(max(p, 1e-30) / fullScale) }

    /// Analyses the `size` samples of `ring` (a power-of-two ring, `mask`) ending at `now − 1`,
    /// with `sensitivity` 0…1; fills `found`. Thread: render.
    func analyze(ring: UnsafePointer<Float>, mask: Int, now: Int64, sensitivity: Float) {
        let start = Int((now - Int64(size)) & Int64(mask))
        let frame = fft.input
        for i in 0..<size { frame[i] = ring[(start + i) & mask] * window[i] }
        fft.transform()
        let bins = fft.spectrum
        for k in 0...(size / 2) { power[k] = bins[2 * k] * bins[2 * k] + bins[2 * k + 1] * bins[2 * k + 1] }
        let prominence = powf(10, (28 - 16 * sensitivity) / 10)
        let persistence = max(2, Int((6 - 6 * sensitivity).rounded()))
        let candidateTotal = findCandidates(prominence: prominence)
        updateTracks(candidateTotal, persistence: persistence)
    }

    /// The strongest prominent peaks, into `candidates`; returns how many. Thread: render.
    func findCandidates(prominence: Float) -> Int {
        var count = 0
        let floor = fullScale * 1e-8  // −80 dBFS
        for k in lowBin...highBin {
            let p = power[k]
            guard p > floor, p > power[k - 1], p >= power[k + 1] else { continue }
            guard p > prominence * neighbourhood(k) else { continue }
            if count < Self.candidateCount {
                candidates[count] = k
                count += 1
            } else {
                var weakest = 0
                for c in 1..<count where power[candidates[c]] < power[candidates[weakest]] { weakest = c }
                if p > power[candidates[weakest]] { candidates[weakest] = k }
            }
        }
        return count
    }

    /// The mean power 3–10 bins either side of `k`. Thread: render.
    @inline(__always)
    func neighbourhood(_ k: Int) -> Float {
        var sum: Float = 0
        for d in 3...10 {
            sum += power[k + d]
            sum += k - d >= 1 ? power[k - d] : power[k + d]
        }
        return sum / 16
    }

    /// The frequency of the peak at bin `k` from the phase advance since the last analysis. Thread: render.
    func frequency(bin k: Int) -> Double {
        let previous = fft.previousSpectrum, current = fft.spectrum
        let pr = Double(previous[2 * k]), pi = Double(previous[2 * k + 1])
        let cr = Double(current[2 * k]), ci = Double(current[2 * k + 1])
        // Phase of current × conj(previous).
        let advance = atan2(ci * pr - cr * pi, cr * pr + ci * pi)
        let expected = 2 * Double.pi * Double(k) * Double(hop) / Double(size)
        var deviation = advance - expected
        deviation -= 2 * Double.pi * (deviation / (2 * Double.pi)).rounded()
        let bins = Double(k) + deviation * Double(size) / (2 * Double.pi * Double(hop))
        return bins * sampleRate / Double(size)
    }

    /// Continues, starts and ends tracks, and decides which are feedback. Thread: render.
    func updateTracks(_ candidateTotal: Int, persistence: Int) {
        foundCount = 0
        for t in 0..<Self.trackCount where tracks[t].active { tracks[t].missed += 1 }
        for c in 0..<candidateTotal {
            let k = candidates[c]
            let hz = frequency(bin: k)
            let level = dB(power[k])
            var slot = -1
            for t in 0..<Self.trackCount where tracks[t].active && tracks[t].missed > 0 && abs(tracks[t].bin - k) <= 1 {
                slot = t
                break
            }
            if slot < 0 {
                // A tone that jumped 2–3 bins in a hop (a wide vibrato) continues its track, moved.
                for t in 0..<Self.trackCount where tracks[t].active && tracks[t].missed > 0 && abs(tracks[t].bin - k) <= 3 {
                    slot = t
                    tracks[t].sinceMove = -1
                    tracks[t].lowHz = hz
                    tracks[t].highHz = hz
                    tracks[t].hops = 1
                    break
                }
            }
            if slot < 0 {
                for t in 0..<Self.trackCount where !tracks[t].active {
                    slot = t
                    break
                }
                guard slot >= 0 else { continue }
                tracks[slot] = Track(active: true, bin: k, hz: hz, hops: 0, missed: 1, firstLevel: level, level: level, lowHz: hz, highHz: hz)
            }
            var t = tracks[slot]
            t.bin = k
            t.hz = hz
            t.missed = 0
            t.level = level
            t.hops += 1
            t.age += 1
            let spread = max(t.highHz, hz) - min(t.lowHz, hz)
            t.sinceMove += 1
            if t.hops > 2 && spread > max(allowedSpread(hz), hz * 0.0058) { t.sinceMove = 0 }
            if t.hops == 2 || (t.hops > 2 && spread > allowedSpread(hz)) {
                // Measured afresh: the first hop's phase advance came from a spectrum without
                // this peak, and a tone that moved (vibrato, a glide, noise) starts over.
                t.lowHz = hz
                t.highHz = hz
                t.hops = 2
                t.firstLevel = level
            } else if t.hops > 2 {
                t.lowHz = min(t.lowHz, hz)
                t.highHz = max(t.highHz, hz)
            }
            let lasted = t.found || t.age >= firstFindHops
            if t.hops >= persistence && t.sinceMove >= Self.stillAfterMove && lasted && isFeedback(t, bin: k) {
                if foundCount < Self.candidateCount {
                    found[foundCount] = (hz, level - t.firstLevel)
                    foundCount += 1
                }
                // Re-armed: found again two hops later if it still rings.
                t.found = true
                t.hops = max(0, persistence - 2)
                t.firstLevel = level
                t.lowHz = hz
                t.highHz = hz
            }
            tracks[slot] = t
        }
        for t in 0..<Self.trackCount where tracks[t].active && tracks[t].missed > 1 { tracks[t].active = false }
    }

    /// How far a steady tone's frequency may move over its track: 4 cents, at least 1 Hz.
    @inline(__always)
    func allowedSpread(_ hz: Double) -> Double { max(1.0, hz * 0.0023) }

    /// Steady in frequency, not decaying, and alone (no harmonic series). Thread: render.
    func isFeedback(_ t: Track, bin k: Int) -> Bool {
        guard t.highHz - t.lowHz <= allowedSpread(t.hz) else { return false }
        guard t.level >= t.firstLevel - 3 else { return false }
        return !hasHarmonicRelative(t.hz, bin: k)
    }

    /// True when a prominent peak within 20 dB of bin `k` sits where a voice's harmonic
    /// would be: at ½ or ⅓ of `hz`, or next to it as harmonic n. Thread: render.
    func hasHarmonicRelative(_ hz: Double, bin k: Int) -> Bool {
        let binHz = sampleRate / Double(size)
        let limit = power[k] * 0.01
        // Harmonic 2 or 3 of a stronger tone (a voice's, or a clipped howl's own).
        for d in 2...3 where isProminentPeak(near: hz / Double(d), binHz: binHz, above: limit, awayFrom: k) { return true }
        // Harmonic n (1…16) of a fundamental from 75 Hz up: a harmonic next to it, at
        // (n − 1)/n or (n + 1)/n of `hz`; from n = 9 on, both (the loop's own modes, about
        // 1/delay apart, would otherwise pass for a series).
        for n in 1...16 {
            let f0 = hz / Double(n)
            guard f0 >= 3.2 * binHz else { break }
            let below = n > 1 && isProminentPeak(near: hz - f0, binHz: binHz, above: limit, awayFrom: k)
            let above = isProminentPeak(near: hz + f0, binHz: binHz, above: limit, awayFrom: k)
            if n <= 8 ? (below || above) : (below && above) { return true }
        }
        return false
    }

    /// True when a local peak over `limit`, 10 dB over its neighbourhood, lies within a bin
    /// of `hz` (and 3 bins or more from bin `k`). Thread: render.
    func isProminentPeak(near hz: Double, binHz: Double, above limit: Float, awayFrom k: Int) -> Bool {
        let centre = Int((hz / binHz).rounded())
        guard centre - 1 > 3, centre + 1 < size / 2 - 10 else { return false }
        for b in (centre - 1)...(centre + 1) where abs(b - k) >= 3 {
            let p = power[b]
            if p > limit && p > power[b - 1] && p >= power[b + 1] && p > 10 * neighbourhood(b) { return true }
        }
        return false
    }
}
