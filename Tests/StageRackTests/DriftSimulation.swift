import StageCore
import StageDrivers
import StageTestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Two sound cards simulated, rendered as fast as the CPU allows: a capture card whose
/// clock runs `ppm(t)` off the playback card's, its position moving in steps of
/// `positionStep` frames (48: a USB packet a millisecond; a whole period on some cards).
/// As `play` runs it (`CaptureThread`): a capture thread wakes when the card holds a
/// period, up to `jitter` seconds late, reads what the card holds and feeds the time and
/// the position to a `CardClock`; the audio thread, waking each playback period (as
/// late), takes those blocks into a `DriftCompensator` and counts what the card has
/// captured since, by the clock's line. The "microphone" hears a 1 kHz sine on channel 0
/// (THD+N) and a 10 Hz sine on channel 1 (its phase in the output gives the latency, to a
/// fraction of a frame): real-world tones sampled by the capture card's own clock.
struct DriftSimulation {
    var sampleRate = 48000.0
    var capturePeriod = 256
    var playbackPeriod = 128
    var seconds = 120.0
    /// The capture clock's offset (ppm) at time t (s).
    var ppm: (Double) -> Double = { _ in 100 }
    var jitter = 50e-6
    var positionStep = 48
    var quality = DriftCompensator.Quality.medium
    /// THD+N is measured on one second in every `thdEvery` after `settle`.
    var thdEvery = 10
    var settle = 60.0
    /// Seconds after `settle` not checked (a step of the clock and its settling).
    var unchecked: ClosedRange<Double>? = nil

    struct Result {
        /// Latency (s) in each one-second window, from the 10 Hz tone's phase.
        var latencies: [Double] = []
        var thd: [(second: Int, decibels: Double)] = []
        var shortFrames = 0
        var droppedFrames = 0
        var minimumFill = Int.max
        var maximumFill = 0
        var driftPPM = 0.0
        var ratio = 1.0
        var target = 0
        var allowance = 0
    }

    func run() throws -> Result {
        let fs = sampleRate
        let target = capturePeriod + playbackPeriod
        let compensator = try DriftCompensator(
            channels: 2, sampleRate: fs, targetBacklog: target, maxReadFrames: playbackPeriod, quality: quality,
            capturePeriod: capturePeriod)
        let captureStorage = BusStorage(bufferCount: 2, maxFrames: capturePeriod)
        let captureBus = captureStorage.bus(first: 0, channels: 2)
        let outStorage = BusStorage(bufferCount: 2, maxFrames: playbackPeriod)
        let outBus = outStorage.bus(first: 0, channels: 2)
        var generator = SeededGenerator(seed: 20)
        var result = Result()
        let window = Int(fs)
        var tone = [Float](repeating: 0, count: window)
        var slow = [Float](repeating: 0, count: window)
        var inWindow = 0
        var windowIndex = 0
        var captured = 0.0  // the capture card's position, continuous, at the block's start
        var read = 0  // frames the capture thread has read from the card
        var drained = 0  // frames the audio thread has taken from the capture thread
        var blocks: [Int] = []  // frame counts handed from the capture thread to the audio thread
        var clock = CardClock(sampleRate: fs, periodFrames: capturePeriod)
        var snapshot = clock.snapshot
        var playbackClock = CardClock(sampleRate: fs, periodFrames: playbackPeriod)
        var wake: Double? = nil  // the capture thread's next wake-up (s), when known
        var phaseTone = 0.0
        var phaseSlow = 0.0
        var captureBuffer = (tone: [Float](repeating: 0, count: 0), slow: [Float](repeating: 0, count: 0))
        captureBuffer.tone.reserveCapacity(4 * capturePeriod)
        let blockCount = Int(seconds * fs) / playbackPeriod
        for k in 0..<blockCount {
            let start = Double(k * playbackPeriod) / fs
            let end = Double((k + 1) * playbackPeriod) / fs
            let captureRate = fs * (1 + ppm(start) * 1e-6)
            func cardPosition(_ t: Double) -> Int { Int((captured + (t - start) * captureRate) / Double(positionStep)) * positionStep }
            let playWake = start + Double.random(in: 0...jitter, using: &generator)
            // The capture thread wakes when the card holds a period (its position has just
            // moved past one), a little late, and reads what it holds.
            while true {
                if wake == nil {
                    let due = ((read + capturePeriod + positionStep - 1) / positionStep) * positionStep
                    let t = start + (Double(due) - captured) / captureRate
                    if t >= end { break }
                    wake = t + Double.random(in: 0...jitter, using: &generator)
                }
                guard let t = wake, t < playWake else { break }
                let position = cardPosition(t)
                clock.observe(time: t, position: Double(position))
                while read < position {
                    let n = min(capturePeriod, position - read)
                    for _ in 0..<n {
                        captureBuffer.tone.append(Float(0.5 * sin(phaseTone)))
                        captureBuffer.slow.append(Float(0.5 * sin(phaseSlow)))
                        phaseTone = (phaseTone + 2 * Double.pi * 1000 / captureRate).truncatingRemainder(dividingBy: 2 * Double.pi)
                        phaseSlow = (phaseSlow + 2 * Double.pi * 10 / captureRate).truncatingRemainder(dividingBy: 2 * Double.pi)
                    }
                    blocks.append(n)
                    read += n
                }
                snapshot = clock.snapshot
                wake = nil
            }
            // The audio thread takes the blocks handed over and plays a period.
            var offset = 0
            for n in blocks {
                for i in 0..<n {
                    captureBus[0][i] = captureBuffer.tone[offset + i]
                    captureBus[1][i] = captureBuffer.slow[offset + i]
                }
                compensator.write(captureBus, frames: n)
                offset += n
                drained += n
            }
            blocks.removeAll(keepingCapacity: true)
            captureBuffer.tone.removeAll(keepingCapacity: true)
            captureBuffer.slow.removeAll(keepingCapacity: true)
            result.minimumFill = min(result.minimumFill, compensator.fill)
            result.maximumFill = max(result.maximumFill, compensator.fill)
            let pending = snapshot.valid ? min(max(snapshot.position(at: playWake) - Double(drained), 0), Double(capturePeriod + compensator.allowance + 2 * DriftCompensator.safetyFrames)) : 0
            playbackClock.observe(time: playWake, position: Double(k * playbackPeriod))
            let p = playbackClock.snapshot
            let measured = snapshot.settled && p.settled ? p.secondsPerFrame / snapshot.secondsPerFrame - 1 : nil
            compensator.read(into: outBus, frames: playbackPeriod, pendingFrames: pending, measuredDrift: measured)
            captured += Double(playbackPeriod) / fs * captureRate
            // One-second windows of the output.
            var i = 0
            while i < playbackPeriod {
                let n = min(playbackPeriod - i, window - inWindow)
                for j in 0..<n {
                    tone[inWindow + j] = outBus[0][i + j]
                    slow[inWindow + j] = outBus[1][i + j]
                }
                inWindow += n
                i += n
                if inWindow == window {
                    analyse(&result, second: windowIndex, tone: tone, slow: slow)
                    windowIndex += 1
                    inWindow = 0
                }
            }
        }
        result.target = Int(compensator.controller.targetBacklog.rounded())  // with the lookahead and the allowance
        result.allowance = compensator.allowance
        result.shortFrames = compensator.shortFrames
        result.droppedFrames = compensator.droppedFrames
        result.driftPPM = compensator.driftPPM
        result.ratio = compensator.ratio
        return result
    }

    private func analyse(_ result: inout Result, second: Int, tone: [Float], slow: [Float]) {
        let theta = SineFit.phase(slow[...], frequency: 10, sampleRate: sampleRate, firstFrame: second * Int(sampleRate))
        // y = sin(2π·10·(t − L)): the phase is −2π·10·L, modulo the tone's 0.1 s period.
        var latency = (-theta / (2 * Double.pi * 10)).truncatingRemainder(dividingBy: 0.1)
        if latency < 0 { latency += 0.1 }
        result.latencies.append(latency)
        if Double(second) >= settle, second % thdEvery == 0, !(unchecked?.contains(Double(second)) ?? false) {
            // THD+N as an analyser with a 20 Hz band edge measures it (AES17): a sine fitted
            // to each 0.1 s, so the loop's slow wander of the ratio (wow, well under 1 Hz)
            // is not counted as distortion; the worst tenth of the second is kept.
            let tenth = Int(sampleRate / 10)
            let worst = (0..<10).map {
                SineFit.thdPlusNoise(tone[($0 * tenth)..<(($0 + 1) * tenth)], frequency: 1000, sampleRate: sampleRate).decibels
            }.max()!
            result.thd.append((second, worst))
        }
    }
}
