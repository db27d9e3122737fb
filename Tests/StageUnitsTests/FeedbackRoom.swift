import Foundation
import StageCore
import StageUnits

/// A room for the closed-loop tests of the `feedback` unit: what the microphone hears of
/// the speaker, `delay` samples later, through a speaker band (high-pass 120 Hz, low-pass
/// 7 kHz, second order) and a few resonances (cookbook peaking biquads). Doubles. Thread: test.
struct FeedbackRoom {
    struct Biquad {
        var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
        var z1 = 0.0, z2 = 0.0

        mutating func run(_ x: Double) -> Double {
            let y = b0 * x + z1
            z1 = b1 * x - a1 * y + z2
            z2 = b2 * x - a2 * y
            return y
        }

        /// The response at `w` radians per sample.
        func response(_ w: Double) -> (re: Double, im: Double) {
            let c1 = cos(w), s1 = -sin(w), c2 = cos(2 * w), s2 = -sin(2 * w)
            let nr = b0 + b1 * c1 + b2 * c2, ni = b1 * s1 + b2 * s2
            let dr = 1 + a1 * c1 + a2 * c2, di = a1 * s1 + a2 * s2
            let d = dr * dr + di * di
            return ((nr * dr + ni * di) / d, (ni * dr - nr * di) / d)
        }

        static func make(_ b: [Double], _ a: [Double]) -> Biquad {
            Biquad(b0: b[0] / a[0], b1: b[1] / a[0], b2: b[2] / a[0], a1: a[1] / a[0], a2: a[2] / a[0])
        }

        static func peak(_ f: Double, _ gainDB: Double, q: Double, sr: Double) -> Biquad {
            let a = pow(10, gainDB / 40), w = 2 * Double.pi * f / sr, alpha = sin(w) / (2 * q)
            return make([1 + alpha * a, -2 * cos(w), 1 - alpha * a], [1 + alpha / a, -2 * cos(w), 1 - alpha / a])
        }

        static func highPass(_ f: Double, sr: Double) -> Biquad {
            let w = 2 * Double.pi * f / sr, alpha = sin(w) / (2 * 0.7071), c = cos(w)
            return make([(1 + c) / 2, -(1 + c), (1 + c) / 2], [1 + alpha, -2 * c, 1 - alpha])
        }

        static func lowPass(_ f: Double, sr: Double) -> Biquad {
            let w = 2 * Double.pi * f / sr, alpha = sin(w) / (2 * 0.7071), c = cos(w)
            return make([(1 - c) / 2, 1 - c, (1 - c) / 2], [1 + alpha, -2 * c, 1 - alpha])
        }
    }

    let name: String
    let delay: Int
    var filters: [Biquad]

    init(name: String, delayMs: Double, peaks: [(hz: Double, dB: Double, q: Double)], sr: Double = 48000) {
        self.name = name
        delay = Int(delayMs * sr / 1000)
        filters = [Biquad.highPass(120, sr: sr), Biquad.lowPass(7000, sr: sr)] + peaks.map { Biquad.peak($0.hz, $0.dB, q: $0.q, sr: sr) }
    }

    /// Three rooms: a small club with a hard monitor peak, a hall with a long path and
    /// close modes, a bright stage with a high ring.
    static let rooms: [FeedbackRoom] = [
        FeedbackRoom(name: "club", delayMs: 3, peaks: [(250, 9, 4), (1200, 12, 6), (3100, 8, 5)]),
        FeedbackRoom(name: "hall", delayMs: 9, peaks: [(400, 10, 8), (900, 6, 3), (2500, 12, 10)]),
        FeedbackRoom(name: "stage", delayMs: 5, peaks: [(180, 8, 5), (1700, 10, 6), (5000, 11, 8)]),
    ]

    mutating func run(_ x: Double) -> Double {
        var y = x
        for i in filters.indices { y = filters[i].run(y) }
        return y
    }

    /// The loop gain (dB) at which the loop without the unit starts to howl: the inverse of
    /// the room's largest gain at a frequency where the loop's phase (room and delay) is a
    /// whole number of turns, and that frequency.
    func criticalGain(sr: Double = 48000) -> (dB: Double, hz: Double) {
        var best = 0.0, bestHz = 0.0
        var lastIm = 0.0
        var f = 40.0
        while f < 16000 {
            let w = 2 * Double.pi * f / sr
            var re = cos(w * Double(delay)), im = -sin(w * Double(delay))
            for b in filters {
                let r = b.response(w)
                (re, im) = (re * r.re - im * r.im, re * r.im + im * r.re)
            }
            if re > 0 && (im >= 0) != (lastIm >= 0) {
                let m = (re * re + im * im).squareRoot()
                if m > best { best = m; bestHz = f }
            }
            lastIm = im
            f += 0.05
        }
        return (-20 * log10(best), bestHz)
    }
}

/// A closed loop: the unit's output (or the input itself with no unit) goes back into its
/// input through `room` at a loop gain that may change every block, plus an excitation
/// (noise or a voice); the microphone clips softly (tanh) so a howl stays finite.
/// Thread: test.
final class FeedbackLoop {
    var room: FeedbackRoom
    let harness: UnitHarness?
    let block = 32
    var history: [Float] = []
    var seed: UInt32 = 99

    init(room: FeedbackRoom, unit: Bool, parameters: [String: Float] = [:]) throws {
        self.room = room
        harness = unit ? try UnitHarness(type: FeedbackUnitType(), parameters: parameters, maxFrames: 32) : nil
        history = [Float](repeating: 0, count: room.delay)
    }

    var unit: FeedbackUnit? { harness?.unit as? FeedbackUnit }

    func noise(_ level: Float) -> Float {
        seed = seed &* 1_664_525 &+ 1_013_904_223
        return (Float(seed >> 8) / Float(1 << 24) - 0.5) * level * 3.46
    }

    /// Runs `frames` more samples; `gainDB(t)` is the loop gain at block start `t` (frames
    /// since this loop began); `excitation` is added at the microphone (white noise of RMS
    /// `noiseLevel` when nil). `each` is called after every block. Returns the output.
    @discardableResult
    func run(frames: Int, noiseLevel: Float = 0.003, excitation: [Float]? = nil, gainDB: (Int) -> Double, each: ((Int) -> Void)? = nil) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(frames)
        var input = [Float](repeating: 0, count: block)
        var done = 0
        while done < frames {
            let t = history.count - room.delay
            let g = pow(10, gainDB(t) / 20)
            for j in 0..<block {
                let back = room.run(Double(history[t + j]))
                let e = excitation.map { done + j < $0.count ? $0[done + j] : 0 } ?? noise(noiseLevel)
                input[j] = Float(tanh(Double(e) + g * back))
            }
            let y = harness.map { $0.render(input: [input], frames: block)[0] } ?? input
            history.append(contentsOf: y)
            out.append(contentsOf: y)
            done += block
            each?(t + block)
        }
        return out
    }
}
