import CLoadOnUse
import CRubberBand
import StageCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The player's stream after the reader: the track as read (transpose 0: untouched, not
/// through librubberband at all) or pitch-shifted by whole semitones with librubberband,
/// time ratio 1, so output frame k is the time of input frame k (the engine's start delay
/// is fed as its preferred padding and dropped, offline-style: the disk thread runs ahead, so
/// nothing of the shifter's latency reaches the output).
///
/// Engine: R3 (`EngineFiner`: pitch exact to 0.002 cent in the tests) with its standard
/// window (1.32–1.44 billion instructions a second of audio, callgrind: most of a Raspberry
/// Pi 4 core; Benchmarks/transpose). Its short window (`WindowShort`, 0.50–0.53 billion)
/// meets every test with Debian 12's librubberband 3.1.2 but not with Debian 13's 3.3.0
/// (Pi OS trixie's): there +5 semitones measured 1,114 cents off; so not used. In
/// real-time mode (fed in steps as the disk reads), formants shifted with the pitch
/// (preserving them took a sine 11 dB down at +5), channels together (the mix's stereo
/// image kept), one thread (the disk thread; deterministic output). R2 (`EngineFaster`) is
/// cheaper still but turns a steady sine into components a few hertz apart that beat (10 to
/// 65 cents off, whatever its options): not used.
///
/// The stream keeps the last `historyFrames` frames it read (untransposed), so a change of
/// transpose re-renders from a frame already streamed (`restart`): the new shifter is primed
/// with `primeFrames` of the audio before it, and its first `fadeFrames` fade in under the
/// old stream's fade-out (the render thread's crossfade).
///
/// Frames are counted from the start point (engine frames), as `TrackStream` counts them.
/// Thread: made on the control thread; then the disk thread only.
final class TrackTransposer {
    static let primeFrames = 8192
    private let reader: TrackReader
    private var shifter: OpaquePointer
    private let sampleRate: Double
    private let blockFrames = 1024
    let historyFrames: Int
    /// Interleaved stereo ring: stream frame f at index f % historyFrames.
    private let history: UnsafeMutablePointer<Float>
    /// Planar blocks in and out of librubberband, and one interleaved read block.
    private let inL: UnsafeMutablePointer<Float>
    private let inR: UnsafeMutablePointer<Float>
    private let outL: UnsafeMutablePointer<Float>
    private let outR: UnsafeMutablePointer<Float>
    private let block: UnsafeMutablePointer<Float>
    private let inPlanes: UnsafeMutablePointer<UnsafePointer<Float>?>
    private let outPlanes: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>

    private(set) var semitones = 0
    /// The next frame the reader gives; the history holds `historyStart ..< inputFrame`.
    private var inputFrame: Int64 = 0
    private var historyStart: Int64 = 0
    /// The end of the track (the reader ran out), or nil.
    private var endFrame: Int64?
    /// The next frame fed to the shifter (from the history while below `inputFrame`).
    private var feedFrame: Int64 = 0
    /// The next frame `read` returns.
    private(set) var outputFrame: Int64 = 0
    /// Shifter output still to drop (its start delay, then the priming).
    private var discard = 0
    private var flushed = false
    /// Frames of the fade-in left, of `fadeLength`.
    private var fadeLeft = 0
    private var fadeLength = 1

    init(reader: TrackReader, sampleRate: Double, historyFrames: Int) {
        self.reader = reader
        self.historyFrames = historyFrames
        self.sampleRate = sampleRate
        // Opens librubberband if the unit's `make` has not (a stream made alone, in tests):
        // without it, rubberband_new stops the program naming itself.
        _ = Self.libraryFailure
        shifter = Self.makeShifter(sampleRate: sampleRate, semitones: 0, blockFrames: blockFrames)
        history = .allocate(capacity: historyFrames * 2)
        history.initialize(repeating: 0, count: historyFrames * 2)
        inL = .allocate(capacity: blockFrames)
        inR = .allocate(capacity: blockFrames)
        outL = .allocate(capacity: blockFrames)
        outR = .allocate(capacity: blockFrames)
        block = .allocate(capacity: blockFrames * 2)
        for p in [inL, inR, outL, outR] { p.initialize(repeating: 0, count: blockFrames) }
        inPlanes = .allocate(capacity: 2)
        inPlanes.initialize(from: [UnsafePointer(inL), UnsafePointer(inR)], count: 2)
        outPlanes = .allocate(capacity: 2)
        outPlanes.initialize(from: [outL, outR], count: 2)
    }

    deinit {
        rubberband_delete(shifter)
        history.deallocate()
        for p in [inL, inR, outL, outR, block] { p.deallocate() }
        inPlanes.deallocate()
        outPlanes.deallocate()
    }

    /// A shifter: R3 with its short window, real time, channels together, on the calling
    /// thread only.
    /// nil once librubberband is open, else why not (opened on first use, once, by the
    /// player unit's `make` on the control thread: CLoadOnUse). Thread: control.
    static let libraryFailure: String? = libraryLoadFailure { stage_load_rubberband($0, $1) }

    private static func makeShifter(sampleRate: Double, semitones: Int, blockFrames: Int) -> OpaquePointer {
        let engine: Int32 = Int32(RubberBandOptionEngineFiner.rawValue)
        let options: Int32 =
            Int32(RubberBandOptionProcessRealTime.rawValue) | engine
            | Int32(RubberBandOptionChannelsTogether.rawValue) | Int32(RubberBandOptionThreadingNever.rawValue)
        let s = rubberband_new(UInt32(sampleRate), 2, options, 1.0, pitchScale(semitones))!
        rubberband_set_max_process_size(s, UInt32(blockFrames))
        return s
    }

    /// The pitch factor of `semitones`: 2^(n/12).
    static func pitchScale(_ semitones: Int) -> Double { exp2(Double(semitones) / 12) }

    /// Starts the stream at the start point (the reader was just started there); `read`
    /// returns frames from `outputFrom` on (the frames before it are read into the history).
    func begin(semitones: Int, outputFrom: Int64) {
        inputFrame = 0
        historyStart = 0
        endFrame = nil
        while inputFrame < outputFrom && endFrame == nil { readInput(frames: Int(min(Int64(blockFrames), outputFrom - inputFrame))) }
        restart(semitones: semitones, at: min(outputFrom, inputFrame), fadeFrames: 0)
    }

    /// Renders the stream again from `frame` (within the history, or at its end) at
    /// `semitones`, fading in over `fadeFrames`.
    func restart(semitones: Int, at frame: Int64, fadeFrames: Int) {
        self.semitones = semitones
        let at = min(max(frame, historyStart), inputFrame)
        outputFrame = at
        fadeLength = max(fadeFrames, 1)
        fadeLeft = fadeFrames
        guard semitones != 0 else { return }
        // A new shifter, not `rubberband_reset`: after a reset R3's output still depends on
        // what it processed before (measured: an offline render differed with a slow disk).
        rubberband_delete(shifter)
        shifter = Self.makeShifter(sampleRate: sampleRate, semitones: semitones, blockFrames: blockFrames)
        feedFrame = max(at - Int64(Self.primeFrames), historyStart, inputFrame - Int64(historyFrames) + 1)
        discard = Int(rubberband_get_start_delay(shifter)) + Int(at - feedFrame)
        flushed = false
        var pad = Int(rubberband_get_preferred_start_pad(shifter))
        inL.update(repeating: 0, count: blockFrames)
        inR.update(repeating: 0, count: blockFrames)
        while pad > 0 {
            let k = min(pad, blockFrames)
            process(frames: k, final: false)
            pad -= k
        }
    }

    /// Jumps ahead to `frame` (the disk was late: what lies before is already past).
    func jump(to frame: Int64, scratch: UnsafeMutablePointer<Float>, scratchFrames: Int) {
        if frame > inputFrame && endFrame == nil {
            reader.skip(frames: Int(frame - inputFrame), scratch: scratch, scratchFrames: scratchFrames)
            inputFrame = frame
            historyStart = frame
        }
        restart(semitones: semitones, at: frame, fadeFrames: 0)
    }

    /// Reads up to `frames` interleaved stereo frames of the stream into `out`; fewer only
    /// at the track's end.
    func read(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let n = semitones == 0 ? readDirect(into: out, frames: frames) : readShifted(into: out, frames: frames)
        if fadeLeft > 0 { fadeIn(out, frames: n) }
        outputFrame += Int64(n)
        return n
    }

    // MARK: - Input and its history

    /// Reads up to `frames` (≤ blockFrames) from the reader into the history; notes the end.
    private func readInput(frames: Int) {
        let n = reader.read(into: block, frames: frames)
        for f in 0..<n {
            let i = Int((inputFrame + Int64(f)) % Int64(historyFrames))
            history[2 * i] = block[2 * f]
            history[2 * i + 1] = block[2 * f + 1]
        }
        inputFrame += Int64(n)
        if inputFrame - historyStart > Int64(historyFrames) { historyStart = inputFrame - Int64(historyFrames) }
        if n < frames { endFrame = inputFrame }
    }

    /// Copies history frames `from ..< from + count` out, interleaved.
    private func copyHistory(from: Int64, count: Int, into out: UnsafeMutablePointer<Float>) {
        for f in 0..<count {
            let i = Int((from + Int64(f)) % Int64(historyFrames))
            out[2 * f] = history[2 * i]
            out[2 * f + 1] = history[2 * i + 1]
        }
    }

    /// Transpose 0: the frames as read (from the history first after a restart).
    private func readDirect(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        var done = 0
        while done < frames {
            let at = outputFrame + Int64(done)
            if at >= inputFrame {
                if endFrame != nil { break }
                readInput(frames: min(blockFrames, frames - done))
                if at >= inputFrame { break }
            }
            let k = min(frames - done, Int(inputFrame - at))
            copyHistory(from: at, count: k, into: out + 2 * done)
            done += k
        }
        return done
    }

    /// Transposed: the shifter's output, aligned to the input's frames, as long as the input.
    private func readShifted(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        var done = 0
        while done < frames {
            if let end = endFrame, outputFrame + Int64(done) >= end { break }
            let available = Int(rubberband_available(shifter))
            if available > 0 {
                // Only what is wanted: the drop, then up to the request and the track's end.
                let toEnd = endFrame.map { Int($0 - outputFrame) - done } ?? Int.max
                let k = min(available, blockFrames, discard + min(frames - done, toEnd))
                let got = Int(rubberband_retrieve(shifter, outPlanes, UInt32(k)))
                let skip = min(discard, got)
                discard -= skip
                for f in skip..<max(got, skip) {
                    out[2 * done] = outL[f]
                    out[2 * done + 1] = outR[f]
                    done += 1
                }
                if got == 0 { break }
                continue
            }
            if flushed {  // the shifter is drained: silence to the input's length
                out[2 * done] = 0
                out[2 * done + 1] = 0
                done += 1
                continue
            }
            feedBlock()
        }
        return done
    }

    /// Feeds the next block of input (history, then the reader); the last one as final.
    /// Always whole blocks from the restart's frame, wherever the reading has got to: the
    /// shifter's output depends on how its input is cut, and must not depend on timing.
    private func feedBlock() {
        while feedFrame + Int64(blockFrames) > inputFrame && endFrame == nil {
            readInput(frames: Int(feedFrame + Int64(blockFrames) - inputFrame))
        }
        let k = Int(min(Int64(blockFrames), inputFrame - feedFrame))
        for f in 0..<max(k, 0) {
            let i = Int((feedFrame + Int64(f)) % Int64(historyFrames))
            inL[f] = history[2 * i]
            inR[f] = history[2 * i + 1]
        }
        feedFrame += Int64(max(k, 0))
        let final = endFrame != nil && feedFrame >= inputFrame
        process(frames: max(k, 0), final: final)
        if final { flushed = true }
    }

    private func process(frames: Int, final: Bool) {
        rubberband_process(shifter, inPlanes, UInt32(frames), final ? 1 : 0)
    }

    private func fadeIn(_ out: UnsafeMutablePointer<Float>, frames: Int) {
        let scale = 1 / Float(fadeLength)
        var f = 0
        while f < frames && fadeLeft > 0 {
            let g = Float(fadeLength - fadeLeft) * scale
            out[2 * f] *= g
            out[2 * f + 1] *= g
            fadeLeft -= 1
            f += 1
        }
    }
}
