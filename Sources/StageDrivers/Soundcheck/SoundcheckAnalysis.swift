import Foundation

/// Why a soundcheck recording cannot be used: silent, clipping, no voice in it, no quiet
/// start for the noise floor. The message says what to do. Nothing is written then.
public struct SoundcheckError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
    public init(_ message: String) { self.message = message }
}

/// What a soundcheck recording holds, measured in 10 ms frames: the noise floor (the first
/// seconds, which the singer keeps silent), the frames with voice in them ("active": 12 dB
/// or more over the floor), the loud phrases (the loudest 30 % of the active frames), the
/// sibilants (active frames with a third or more of their power above the de-esser's
/// split) and the voice's lowest fundamental (the 5th percentile of an autocorrelation
/// pitch track). Levels are RMS in dBFS.
///
/// Bad recordings throw `SoundcheckError`: silent, clipping (runs of full-scale samples), no
/// quiet start, no voice (too little above the floor, or too little of it pitched).
/// Thread: control (offline analysis; Foundation is fine here).
public struct SoundcheckAnalysis: Sendable {
    public static let frameSeconds = 0.01
    /// The first seconds, kept silent, that give the noise floor.
    public static let floorSeconds = 2.0
    /// How far over the floor a frame must be to hold voice.
    public static let activeMargin: Float = 12
    /// Voice needed, in seconds of active frames.
    public static let minimumVoiceSeconds = 2.0

    public let sampleRate: Double
    public let frameLength: Int
    /// RMS level of each frame (dBFS).
    public let levels: [Float]
    /// The median frame level of the first `floorSeconds` (dBFS).
    public let noiseFloor: Float
    public let active: [Bool]
    public let loud: [Bool]
    public let sibilant: [Bool]
    /// The power mean of the loud frames (dBFS).
    public let loudLevel: Float
    /// The 10th percentile of the active frames' levels (dBFS): the soft words.
    public let quietVoiceLevel: Float
    /// The 5th percentile of the voice's fundamental (Hz).
    public let lowestFundamental: Double
    /// The share of active frames found pitched (0…1).
    public let voicedShare: Double
    /// The largest sample magnitude.
    public let peak: Float

    /// Analyses `samples` (mono, at `sampleRate`); sibilants are judged above `sibilantSplit` Hz.
    public init(samples: [Float], sampleRate: Double, sibilantSplit: Double = 6000) throws(SoundcheckError) {
        self.sampleRate = sampleRate
        frameLength = max(1, Int((sampleRate * Self.frameSeconds).rounded()))
        peak = samples.reduce(0) { max($0, abs($1)) }
        let peakDB = Self.decibels(peak * peak)
        guard peakDB > -60 else {
            throw SoundcheckError(
                "the input is silent (peak \(Self.format(peakDB)) dBFS): check the microphone, its cable and the input channel")
        }
        try Self.checkClipping(samples)
        let levels = Self.frameLevels(samples, frameLength)
        self.levels = levels
        let floorFrames = min(levels.count, Int(Self.floorSeconds / Self.frameSeconds))
        guard floorFrames >= 50, levels.count > floorFrames + 100 else {
            throw SoundcheckError("the input is too short: record about 3 s of silence, then sing and speak for about 20 s")
        }
        let noiseFloor = Self.percentile(Array(levels[0..<floorFrames]), 0.5)
        self.noiseFloor = noiseFloor
        let active = levels.enumerated().map { $0.offset >= floorFrames && $0.element > noiseFloor + Self.activeMargin && $0.element > -70 }
        self.active = active
        let activeLevels = zip(levels, active).filter(\.1).map(\.0)
        let overall = Self.percentile(levels, 0.97)
        guard Double(activeLevels.count) * Self.frameSeconds >= Self.minimumVoiceSeconds else {
            if overall < noiseFloor + Self.activeMargin && Self.percentile(Array(levels[0..<floorFrames]), 0.97) > -60 {
                throw SoundcheckError(
                    "no voice found above the noise floor (\(Self.format(noiseFloor)) dBFS), or the first seconds were not quiet: "
                        + "start the recording with about 3 s of silence, then sing and speak at show level")
            }
            throw SoundcheckError(
                "no voice found: only \(Self.format(Double(activeLevels.count) * Self.frameSeconds)) s rise \(Self.format(Self.activeMargin)) dB "
                    + "over the noise floor (\(Self.format(noiseFloor)) dBFS): sing and speak at show level for about 20 s")
        }
        let loudFrom = Self.percentile(activeLevels, 0.7)
        let loud = zip(levels, active).map { $0.1 && $0.0 >= loudFrom }
        self.loud = loud
        loudLevel = Self.powerMean(zip(levels, loud).filter(\.1).map(\.0))
        quietVoiceLevel = Self.percentile(activeLevels, 0.1)
        let frameLength = self.frameLength
        let pitch = PitchTrack(samples: samples, sampleRate: sampleRate, frameLength: frameLength, active: active)
        let voicedShare = pitch.voicedShare
        self.voicedShare = voicedShare
        guard voicedShare >= 0.2, !pitch.fundamentals.isEmpty else {
            throw SoundcheckError(
                "no voice found: the sound over the noise floor is not pitched like a voice (\(Self.format(voicedShare * 100)) % pitched): "
                    + "sing and speak at show level for about 20 s")
        }
        lowestFundamental = Double(Self.percentile(pitch.fundamentals.map { Float($0) }, 0.05))
        sibilant = Self.sibilantFrames(samples, sampleRate, frameLength, split: sibilantSplit, active: active, levels: levels)
    }

    /// The median level (dBFS) of the first `floorSeconds` after a high-pass at `frequency`
    /// (the floor the gate hears after the EQ's high-pass).
    public static func noiseFloor(_ samples: [Float], sampleRate: Double, highPass frequency: Double) -> Float {
        let n = min(samples.count, Int(floorSeconds * sampleRate))
        var filter = Biquad.highPass(frequency, sampleRate)
        let filtered = samples[0..<n].map { filter.process($0) }
        let frame = max(1, Int((sampleRate * frameSeconds).rounded()))
        let levels = frameLevels(Array(filtered), frame)
        return percentile(Array(levels.dropFirst(10)), 0.5)
    }

    static func frameLevels(_ samples: [Float], _ frameLength: Int) -> [Float] {
        stride(from: 0, to: samples.count - frameLength + 1, by: frameLength).map { start in
            var sum: Float = 0
            for i in start..<(start + frameLength) { sum += samples[i] * samples[i] }
            return decibels(sum / Float(frameLength))
        }
    }

    /// Throws when `samples` clip: five or more runs of full-scale samples. Check a file's
    /// own samples before resampling it (resampling rounds a clipped flat top into ripples).
    public static func checkClipping(_ samples: [Float]) throws(SoundcheckError) {
        let runs = clippedRuns(samples, peak: samples.reduce(0) { max($0, abs($1)) })
        guard runs < 5 else {
            throw SoundcheckError(
                "the input clips (\(runs) runs of full-scale samples): turn the interface's input gain down and record again")
        }
    }

    /// Runs of three or more samples within 0.1 % of a peak at full scale.
    static func clippedRuns(_ samples: [Float], peak: Float) -> Int {
        guard peak >= 0.98 else { return 0 }
        let limit = peak * 0.999
        var runs = 0, length = 0
        for s in samples {
            if abs(s) >= limit {
                length += 1
                if length == 3 { runs += 1 }
            } else {
                length = 0
            }
        }
        return runs
    }

    static func sibilantFrames(
        _ samples: [Float], _ rate: Double, _ frameLength: Int, split: Double, active: [Bool], levels: [Float]
    ) -> [Bool] {
        guard split < rate * 0.45 else { return active.map { _ in false } }
        var first = Biquad.highPass(split, rate), second = Biquad.highPass(split, rate)
        let high = samples.map { second.process(first.process($0)) }
        let highLevels = frameLevels(high, frameLength)
        return active.indices.map { i in active[i] && highLevels[i] >= levels[i] - 8 }
    }

    static func decibels(_ power: Float) -> Float { 10 * log10(max(power, 1e-14)) }

    static func powerMean(_ levels: [Float]) -> Float {
        guard !levels.isEmpty else { return -140 }
        return decibels(levels.reduce(0) { $0 + pow(10, $1 / 10) } / Float(levels.count))
    }

    static func percentile(_ values: [Float], _ p: Double) -> Float {
        guard !values.isEmpty else { return -140 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count - 1) * p).rounded())))]
    }

    static func format(_ value: Float) -> String { String(format: "%.1f", Double(value)) }
    static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}

/// A second-order Butterworth high-pass (RBJ), for the analysis. Thread: the caller's.
struct Biquad {
    var b0, b1, b2, a1, a2: Float
    var x1: Float = 0, x2: Float = 0, y1: Float = 0, y2: Float = 0

    static func highPass(_ frequency: Double, _ rate: Double) -> Biquad {
        let w = 2 * Double.pi * frequency / rate
        let alpha = sin(w) / (2 * 0.5.squareRoot())
        let a0 = 1 + alpha
        let c = cos(w)
        return Biquad(
            b0: Float((1 + c) / 2 / a0), b1: Float(-(1 + c) / a0), b2: Float((1 + c) / 2 / a0),
            a1: Float(-2 * c / a0), a2: Float((1 - alpha) / a0))
    }

    mutating func process(_ x: Float) -> Float {
        let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        x2 = x1
        x1 = x
        y2 = y1
        y1 = y
        return y
    }
}

/// The voice's pitch on the active frames: normalised autocorrelation of 40 ms windows of
/// the signal averaged down to about 12 kHz, every other frame; a window is pitched when
/// its best lag (50…800 Hz) correlates at 0.6 or more, and the shortest lag within 10 % of
/// the best is taken (no octave-down errors). Thread: the caller's.
struct PitchTrack {
    var fundamentals: [Double] = []
    var voicedShare: Double = 0

    init(samples: [Float], sampleRate: Double, frameLength: Int, active: [Bool]) {
        let factor = max(1, Int(sampleRate / 12000))
        let rate = sampleRate / Double(factor)
        let reduced = stride(from: 0, to: samples.count - factor + 1, by: factor).map { start -> Float in
            var s: Float = 0
            for i in start..<(start + factor) { s += samples[i] }
            return s / Float(factor)
        }
        let window = Int(rate * 0.04)
        let shortest = Int(rate / 800), longest = Int(rate / 50)
        var tried = 0
        for frame in stride(from: 0, to: active.count, by: 2) where active[frame] {
            let start = frame * frameLength / factor
            guard start + window + longest <= reduced.count else { break }
            tried += 1
            if let lag = Self.bestLag(reduced, start: start, window: window, lags: shortest...longest) {
                fundamentals.append(rate / Double(lag))
            }
        }
        voicedShare = tried > 0 ? Double(fundamentals.count) / Double(tried) : 0
    }

    static func bestLag(_ x: [Float], start: Int, window: Int, lags: ClosedRange<Int>) -> Int? {
        var mean: Float = 0
        for i in start..<(start + window + lags.upperBound) { mean += x[i] }
        mean /= Float(window + lags.upperBound)
        var r = [Float](repeating: 0, count: lags.upperBound + 1)
        var energy0: Float = 0
        for i in start..<(start + window) { energy0 += (x[i] - mean) * (x[i] - mean) }
        guard energy0 > 0 else { return nil }
        for lag in lags {
            var cross: Float = 0, energy: Float = 0
            for i in start..<(start + window) {
                let a = x[i] - mean, b = x[i + lag] - mean
                cross += a * b
                energy += b * b
            }
            r[lag] = energy > 0 ? cross / (energy0 * energy).squareRoot() : 0
        }
        let best = lags.max { r[$0] < r[$1] }!
        guard r[best] >= 0.6 else { return nil }
        // The shortest lag at a local peak within 10 % of the best.
        for lag in lags where lag > lags.lowerBound && lag < lags.upperBound {
            if r[lag] >= 0.9 * r[best] && r[lag] >= r[lag - 1] && r[lag] >= r[lag + 1] { return lag }
        }
        return best
    }
}
