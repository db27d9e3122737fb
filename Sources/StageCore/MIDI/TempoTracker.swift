/// Tempo from MIDI clock (24 ticks per quarter note) and from taps.
///
/// Clock: the tick interval is the least-squares slope over the last `clockWindow` ticks
/// (four beats), so the timing jitter of single ticks averages out. A new tempo is
/// reported once `clockMinimumTicks` are in, and then whenever the estimate moves by more
/// than `clockHysteresis` BPM and by more than three standard errors of the estimate (the
/// ticks' own timing noise), so a jittery clock does not wobble tempo-synced delay times.
/// A real change is caught early: when the slope of the last `clockRecentTicks` differs
/// from the long one by more than four combined standard errors (and 0.5 %), the older
/// ticks are dropped. A gap of more than `clockTimeout` seconds, or Start, begins a new
/// estimate (the tempo stays until then).
///
/// Taps: the tempo is 60 / the mean of the last 4 intervals; a pause longer than
/// `tapTimeout` starts a new series, and an interval more than 40 % off the mean restarts
/// the average from that interval (the performer changed the tempo). Reported from the
/// second tap on. Tempos are clamped to 20…400 BPM (the rack's range).
///
/// No allocation after init. Thread: the MIDI thread.
public struct TempoTracker {
    public static let tempoRange = 20.0...400.0
    public static let clockWindow = 96
    public static let clockRecentTicks = 12
    public static let clockMinimumTicks = 24
    public static let clockHysteresis = 0.2
    /// Longer than a tick at 20 BPM (0.125 s).
    public static let clockTimeout = 0.3
    public static let tapTimeout = 3.0
    public static let tapIntervals = 4

    var ticks: [Double]
    var tickCount = 0
    var tickHead = 0
    var taps: [Double]
    var tapCount = 0
    var lastTap = -Double.infinity
    /// The last tempo reported (clock or taps); 0 before any.
    public private(set) var tempo: Double = 0
    /// Whether Start/Continue came more recently than Stop.
    public private(set) var running = false
    /// Whether Stop came more recently than Start/Continue: the clock gives no tempo then
    /// (many devices send ticks while stopped).
    public private(set) var stopped = false
    /// The time of the last tick (−∞ before any).
    public private(set) var lastTick = -Double.infinity
    /// The next estimate is reported whatever the hysteresis says (a new series of ticks:
    /// the clock claims the tempo again, `TempoSources`).
    var announce = true

    public init() {
        ticks = Array(repeating: 0, count: Self.clockWindow)
        taps = Array(repeating: 0, count: Self.tapIntervals)
    }

    /// One clock tick at `seconds`. Returns a tempo to apply, if it changed.
    public mutating func clockTick(at seconds: Double) -> Double? {
        if tickCount > 0 {
            let last = ticks[(tickHead + Self.clockWindow - 1) % Self.clockWindow]
            if seconds - last > Self.clockTimeout || seconds < last {
                tickCount = 0
                announce = true
            }
        }
        lastTick = seconds
        ticks[tickHead] = seconds
        tickHead = (tickHead + 1) % Self.clockWindow
        tickCount = min(tickCount + 1, Self.clockWindow)
        guard tickCount >= Self.clockMinimumTicks, let long = slope(last: tickCount), long.slope > 0 else { return nil }
        var interval = long.slope
        let jitter = tickJitter()
        var error = jitter / long.spread.squareRoot()
        if tickCount >= 2 * Self.clockRecentTicks, let recent = slope(last: Self.clockRecentTicks) {
            let recentError = jitter / recent.spread.squareRoot()
            let difference = abs(recent.slope - interval)
            if difference > 5 * (error * error + recentError * recentError).squareRoot() && difference > 0.005 * interval {
                tickCount = Self.clockRecentTicks  // the tempo changed: keep only the new ticks
                interval = recent.slope
                error = recentError
            }
        }
        let bpm = clamp(60 / (interval * 24))
        let noise = 3 * bpm * error / interval
        if !announce && abs(bpm - tempo) < max(Self.clockHysteresis, noise) { return nil }
        announce = false
        tempo = (bpm * 100).rounded() / 100
        return tempo
    }

    /// The ticks' timing noise (standard deviation, seconds), from the mean absolute second
    /// difference of the tick times: unlike the fit's residuals, a tempo change moves only
    /// two of its terms. For white jitter σ, E|Δ²t| = √6·σ·√(2/π).
    func tickJitter() -> Double {
        let n = tickCount
        guard n >= 3 else { return 0 }
        let start = (tickHead + Self.clockWindow - n) % Self.clockWindow
        var sum = 0.0
        for i in 2..<n {
            let a = ticks[(start + i - 2) % Self.clockWindow]
            let b = ticks[(start + i - 1) % Self.clockWindow]
            let c = ticks[(start + i) % Self.clockWindow]
            sum += abs(c - 2 * b + a)
        }
        return sum / Double(n - 2) / (6.0.squareRoot() * 0.797_884_6)
    }

    /// Least-squares fit of tick time over tick index for the last `n` ticks: the slope
    /// (seconds per tick), the sum of squared residuals, and Σ(i − ī)².
    func slope(last n: Int) -> (slope: Double, residuals: Double, spread: Double)? {
        guard n >= 3 else { return nil }
        let start = (tickHead + Self.clockWindow - n) % Self.clockWindow
        let t0 = ticks[start]
        var sumT = 0.0
        for i in 0..<n { sumT += ticks[(start + i) % Self.clockWindow] - t0 }
        let meanI = Double(n - 1) / 2
        let meanT = sumT / Double(n)
        var num = 0.0
        var den = 0.0
        for i in 0..<n {
            let di = Double(i) - meanI
            num += di * (ticks[(start + i) % Self.clockWindow] - t0 - meanT)
            den += di * di
        }
        guard den > 0 else { return nil }
        let b = num / den
        var residuals = 0.0
        for i in 0..<n {
            let r = ticks[(start + i) % Self.clockWindow] - t0 - meanT - b * (Double(i) - meanI)
            residuals += r * r
        }
        return (b, residuals, den)
    }

    /// MIDI Start: the next tick is a downbeat; the estimate begins again.
    public mutating func start() {
        running = true
        stopped = false
        tickCount = 0
        announce = true
    }

    public mutating func resume() {
        running = true
        stopped = false
        announce = true
    }

    public mutating func stop() {
        running = false
        stopped = true
    }

    /// The clock went quiet at `seconds` (no tick for `clockTimeout`): the next tick starts
    /// a new series.
    public mutating func timedOut() {
        tickCount = 0
        announce = true
    }

    /// One tap at `seconds`. Returns the tempo to apply from the second tap of a series on.
    public mutating func tap(at seconds: Double) -> Double? {
        let interval = seconds - lastTap
        lastTap = seconds
        guard interval > 0, interval <= Self.tapTimeout else {
            tapCount = 0
            return nil
        }
        if tapCount > 0 {
            let mean = taps[0..<tapCount].reduce(0, +) / Double(tapCount)
            if abs(interval - mean) > 0.4 * mean { tapCount = 0 }
        }
        if tapCount == Self.tapIntervals {
            for i in 1..<Self.tapIntervals { taps[i - 1] = taps[i] }
            tapCount -= 1
        }
        taps[tapCount] = interval
        tapCount += 1
        var sum = 0.0
        for i in 0..<tapCount { sum += taps[i] }
        tempo = (clamp(60 / (sum / Double(tapCount))) * 100).rounded() / 100
        return tempo
    }

    /// Records a tempo set elsewhere (the rack's own), so the clock reports only changes.
    public mutating func setTempo(_ bpm: Double) { tempo = bpm }

    func clamp(_ bpm: Double) -> Double { min(max(bpm, Self.tempoRange.lowerBound), Self.tempoRange.upperBound) }
}
