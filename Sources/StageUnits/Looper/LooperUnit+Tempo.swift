import StageCore

/// The looper's bars and beats: how long the first loop is in the rack's tempo, and the
/// grid recording snaps to (racks/README.md, "Looper", "Tempo").
///
/// - No tempo source above the loop (no clock, taps or song tempo): recording starts and
///   stops on the presses; the first loop holds `bars` bars of `beatsPerBar` beats, so its
///   length gives the rack's tempo (`TempoSource.loop`, the lowest precedence).
/// - A tempo from clock, taps or the song: with `quantize` `bar` (or `beat`), recording
///   starts on the next bar (beat) of the rack's beat grid (`RenderContext.beatPosition`),
///   and the closing press makes the loop a whole number of bars (the nearest, at least
///   one): a late press drops the extra frames (they cross-fade into the loop's start, the
///   loop plays on in time), an early one records on until the bar line.
/// Thread: render.
struct LooperGrid {
    enum Mode: String, CaseIterable {
        case bar, beat, off
    }

    var bars = 1
    var beatsPerBar = 4
    var mode = Mode.bar

    /// The tempo of a first loop of `loopFrames` frames holding `bars` bars.
    func tempo(loopFrames: Int, sampleRate: Double) -> Double {
        60 * sampleRate * Double(bars * beatsPerBar) / Double(loopFrames)
    }

    /// Where the rack's beat grid is in this block.
    struct Block {
        var quantizes = false
        var start: Int64 = 0
        var beat0 = 0.0
        /// Frames per beat at the block's tempo.
        var beatFrames = 0.0

        init() {}

        init(_ context: RenderContext) {
            let source = context.tempoSource
            quantizes = source != nil && source != .loop && context.tempo > 0
            start = context.sampleTime
            beat0 = context.beatPosition
            beatFrames = 60 * context.sampleRate / max(context.tempo, 1)
        }

        /// The first frame at or after `frame` where a beat that is a multiple of `unit` begins.
        func next(multipleOf unit: Int, atOrAfter frame: Int64) -> Int64 {
            let beat = beat0 + Double(frame - start) / beatFrames
            let u = Double(unit)
            var target = (beat / u).rounded(.up) * u
            if target - beat < 1e-6 { target = beat }
            return frame + Int64(((target - beat) * beatFrames).rounded())
        }
    }
}

extension LooperUnit {
    /// Starts recording now, or at the next bar (beat) when a tempo leads and `quantize` is on.
    func startRecording() {
        recordQuantized = blockGrid.quantizes && grid.mode != .off
        recordBarFrames = blockGrid.beatFrames * Double(grid.beatsPerBar)
        guard recordQuantized else {
            startRecordingNow()
            return
        }
        let unit = grid.mode == .bar ? grid.beatsPerBar : 1
        let at = blockGrid.next(multipleOf: unit, atOrAfter: commandFrame)
        if at <= commandFrame {
            startRecordingNow()
        } else {
            state = .empty
            length = 0
            pendingStart = at
        }
    }

    /// Closes the loop now, or (recording on the grid) at a whole number of bars.
    func closeLoop(thenPlay: Bool) {
        guard recordQuantized, state == .recording, length > 0, recordBarFrames > 0 else {
            closeLoopNow(thenPlay: thenPlay)
            return
        }
        var bars = max(1, (Double(length) / recordBarFrames).rounded())
        while bars > 1 && Int((bars * recordBarFrames).rounded()) > capacity { bars -= 1 }
        let target = min(Int((bars * recordBarFrames).rounded()), capacity)
        if target > length {
            pendingClose = commandFrame + Int64(target - length)
            pendingCloseThenPlay = thenPlay
        } else if target < length {
            closeTruncated(to: target, thenPlay: thenPlay)
        } else {
            closeLoopNow(thenPlay: thenPlay)
        }
    }

    /// A late close: the loop is the first `target` frames; what was recorded after them
    /// cross-fades into the loop's start (the seam), and the loop plays on from where that
    /// leaves it, so it stays on the grid.
    func closeTruncated(to target: Int, thenPlay: Bool) {
        let extra = length - target
        let fade = min(seamFrames, extra, target)
        for c in 0..<channels {
            let p = buffer(current, c)
            for k in 0..<fade {
                let w = Float(k) / Float(fade)
                p[k] = p[k] * w + p[target + k] * (1 - w)
            }
        }
        length = target
        if thenPlay {
            closeLoopNow(thenPlay: true)
            seamLeft = 0
            position = extra % target
        } else {
            state = .stopped
            position = 0
            pendingClose = -1
        }
    }

    /// Renders frames `a ..< b`, starting or closing a recording where the grid said.
    func runUntilPending(_ input: AudioBus, _ output: AudioBus, from a: Int, to b: Int, _ params: ParameterValues) {
        var from = a
        while true {
            var end = b
            if pendingStart >= 0 { end = min(end, max(from, Int(pendingStart - blockGrid.start))) }
            if pendingClose >= 0 { end = min(end, max(from, Int(pendingClose - blockGrid.start))) }
            run(input, output, from: from, to: end, params)
            from = end
            let now = blockGrid.start + Int64(end)
            if pendingStart >= 0 && pendingStart <= now {
                pendingStart = -1
                startRecordingNow()
            } else if pendingClose >= 0 && pendingClose <= now {
                closeLoopNow(thenPlay: pendingCloseThenPlay)
            } else if end >= b {
                return
            }
        }
    }
}
