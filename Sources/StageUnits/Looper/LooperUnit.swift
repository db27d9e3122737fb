import StageCore
import Synchronization

/// `looper`: records a phrase from its input and plays it back in a loop under the live
/// signal; overdubs add layers; the last layer can be undone and redone. Commands come from
/// `midi.map` actions (`"looper.record"`, `"looper.cycle"` for one footswitch), on the frame
/// of the press. See racks/README.md, section "Looper".
public struct LooperUnitType: UnitType {
    public init() {}
    public var name: String { "looper" }
    public var summary: String { "records a phrase and loops it under the live input: overdub, undo/redo, one-button control" }

    public var settings: [SettingSpec] {
        [
            SettingSpec(key: "maxLength", kind: .number(1...600), help: "the longest loop in seconds, preallocated (default 60)"),
            SettingSpec(key: "bars", kind: .integer(1...64), help: "bars the first loop holds when its length sets the rack's tempo (default 1)"),
            SettingSpec(key: "beatsPerBar", kind: .integer(1...16), help: "beats in a bar (default 4)"),
            SettingSpec(
                key: "quantize", kind: .choice(LooperGrid.Mode.allCases.map(\.rawValue)),
                help: "with a tempo from clock, taps or the song: recording starts on the next bar (or beat) and lasts whole bars (default bar)"),
        ]
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(id: "level", name: "Loop level", unit: .decibels, range: -96...12, defaultValue: 0, help: "the loop's playback level; −96 dB is silence"),
            ParameterSpec(id: "dry", name: "Dry level", unit: .decibels, range: -96...12, defaultValue: 0, help: "the live input's level through the looper; −96 dB is silence"),
        ]
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.any], outputs: [.sameAsInput(0)])
    }

    public func commands(_ settings: UnitSettings) -> [String] { LooperUnit.Command.allCases.map(\.name) }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        let unit = LooperUnit(maxSeconds: settings.double("maxLength") ?? 60)
        unit.grid = LooperGrid(
            bars: settings.int("bars") ?? 1, beatsPerBar: settings.int("beatsPerBar") ?? 4,
            mode: settings.string("quantize").flatMap(LooperGrid.Mode.init(rawValue:)) ?? .bar)
        return unit
    }
}

/// The looper. Two loop buffers: the playing layer and the one before it (undo). An
/// overdub writes the new layer (old + input) into the other buffer as the loop passes,
/// reading the old one, so starting, undoing and redoing a layer is a swap, never a copy.
/// Memory: 2 × channels × `maxLength` seconds, allocated in `prepare`.
/// Thread: render (after prepare); the transport readings from any thread.
public final class LooperUnit: RackUnit, UnitTransport, UnitTempoReporter {
    enum Parameter {
        static let level = 0
        static let dry = 1
    }

    /// The commands, in the order `LooperUnitType.commands` lists them.
    enum Command: Int, CaseIterable {
        case record, overdub, play, stop, undo, redo, clear, cycle
        var name: String { "\(self)" }
    }

    enum State: Int {
        case empty, recording, playing, overdubbing, stopped
    }

    let maxSeconds: Double
    var sampleRate = 48000.0
    var channels = 0
    var capacity = 0
    var buffers: [UnsafeMutablePointer<Float>] = []  // 2 × channels, channel-major: buffers[b * channels + c]
    /// The buffer that plays (0 or 1).
    var current = 0
    var state = State.empty
    var length = 0
    var position = 0
    /// An overdub (or its completion) in progress: frames of the new layer written so far,
    /// starting at `layerStart`; the new layer is the other buffer.
    var layerCovered = -1
    var layerStart = 0
    /// Whether the layer in progress has had input (a pass that only copies is no layer).
    var layerHasInput = false
    /// Whether the other buffer holds a layer to redo (after an undo) or the previous
    /// layer to undo to.
    var canUndo = false
    var canRedo = false
    /// The seam: the first `seamFrames` of the loop are crossfaded with what the input
    /// played right after the loop was closed (`seamLeft` frames still to write).
    var seamFrames = 0
    var seamLeft = 0
    /// A 10 ms fade of the loop's output: −1 fading out (to stopped, or empty with `clearAfterFade`), +1 fading in.
    var fadeFrames = 0
    var fadeLeft = 0
    var fadeDirection = 0
    var clearAfterFade = false
    // One-button cycle: the last press (absolute frame), whether it is held.
    var lastPress: Int64 = -1_000_000_000
    /// The absolute frame of the command being performed.
    var commandFrame: Int64 = 0
    var pressedAt: Int64 = -1
    var holdHandled = false
    var stateBeforeLastPress = State.empty
    var layerStartedByLastPress = false

    /// Bars, beats and quantising (LooperUnit+Tempo.swift), and where the grid is this block.
    var grid = LooperGrid()
    var blockGrid = LooperGrid.Block()
    /// Recording waits to start at this absolute frame (−1: not waiting).
    var pendingStart: Int64 = -1
    /// The loop closes at this absolute frame (−1: not waiting), then plays or stops.
    var pendingClose: Int64 = -1
    var pendingCloseThenPlay = true
    /// The recording in progress started on the grid: its length becomes whole bars of
    /// `recordBarFrames` frames; else its length gives the rack's tempo.
    var recordQuantized = false
    var recordBarFrames = 0.0
    /// The tempo the first loop gives the rack (0: none). Thread: render.
    public private(set) var reportedTempo = 0.0
    /// The looper's bar (`beatsPerBar`), the rack's bar for a shared session (`UnitTempoReporter`).
    public var beatsPerBar: Int { grid.beatsPerBar }

    let publishedState = Atomic<Int>(0)
    let publishedPosition = Atomic<Int>(0)
    let publishedLength = Atomic<Int>(0)

    init(maxSeconds: Double) { self.maxSeconds = maxSeconds }

    deinit { for b in buffers { b.deallocate() } }

    public func prepare(_ spec: PrepareSpec) throws {
        sampleRate = spec.sampleRate
        channels = max(spec.outputChannels.first ?? 1, 1)
        capacity = Int(maxSeconds * spec.sampleRate)
        for b in buffers { b.deallocate() }
        buffers = (0..<(2 * channels)).map { _ in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
            p.initialize(repeating: 0, count: capacity)
            return p
        }
        fadeFrames = max(1, Int(0.01 * spec.sampleRate))
        seamFrames = max(1, Int(0.005 * spec.sampleRate))
    }

    public func reset() {
        pendingStart = -1
        pendingClose = -1
        reportedTempo = 0
        state = .empty
        length = 0
        position = 0
        layerCovered = -1
        canUndo = false
        canRedo = false
        seamLeft = 0
        fadeLeft = 0
        fadeDirection = 0
        lastPress = -1_000_000_000
        pressedAt = -1
        publish()
    }

    // MARK: - Readings (any thread)

    public var transportState: String {
        let published = publishedState.load(ordering: .relaxed)
        if published == Self.armedState { return "armed" }
        switch State(rawValue: published) ?? .empty {
        case .empty: return "empty"
        case .recording: return "recording"
        case .playing: return "playing"
        case .overdubbing: return "overdubbing"
        case .stopped: return "stopped"
        }
    }
    public var positionSeconds: Double { Double(publishedPosition.load(ordering: .relaxed)) / sampleRate }
    public var remainingSeconds: Double? {
        let l = publishedLength.load(ordering: .relaxed)
        return l > 0 ? Double(l - publishedPosition.load(ordering: .relaxed)) / sampleRate : nil
    }
    public var underruns: Int { 0 }
    public var stopCommand: Int { Command.stop.rawValue }
    /// The loop's length in frames (0 while empty or recording the first time).
    public var loopFrames: Int { publishedLength.load(ordering: .relaxed) }

    /// The published state while recording waits for the grid (`pendingStart`).
    static let armedState = -1

    private func publish() {
        publishedState.store(pendingStart >= 0 ? Self.armedState : state.rawValue, ordering: .relaxed)
        publishedPosition.store(position, ordering: .relaxed)
        publishedLength.store(state == .recording ? 0 : length, ordering: .relaxed)
    }

    @inline(__always)
    func buffer(_ b: Int, _ c: Int) -> UnsafeMutablePointer<Float> { buffers[b * channels + c] }

    // MARK: - Render

    public func render(_ context: RenderContext) {
        let n = context.frameCount
        let input = context.inputs[0]
        let output = context.outputs[0]
        var pos = 0
        blockGrid = LooperGrid.Block(context)
        for e in context.events {
            guard let index = UnitCommand.index(of: e.message), let command = Command(rawValue: index) else { continue }
            let offset = min(max(Int(e.frameOffset), pos), n)
            runUntilPending(input, output, from: pos, to: offset, context.parameters)
            pos = offset
            perform(command, pressed: UnitCommand.isPress(e.message), at: context.sampleTime + Int64(offset))
        }
        runUntilPending(input, output, from: pos, to: n, context.parameters)
        if state == .stopped && layerCovered >= 0 { completeLayer(limit: 8192) }
        checkHold(at: context.sampleTime + Int64(n))
        publish()
    }

    /// Frames `a ..< b` of the block: dry input plus the loop, recording or overdubbing.
    func run(_ input: AudioBus, _ output: AudioBus, from a: Int, to b: Int, _ params: ParameterValues) {
        guard b > a else { return }
        let levels = params[Parameter.level]
        let dries = params[Parameter.dry]
        for i in a..<b {
            let dry = decibelsToGainOrSilence(dries[i])
            let level = decibelsToGainOrSilence(levels[i])
            let loopGain = level * fadeGain()
            for c in 0..<channels {
                let x = input[min(c, input.channelCount - 1)][i]
                output[c][i] = x * dry + loopGain * frame(c, x)
            }
            advance()
        }
    }

    /// The loop's sample for channel `c` at the current position (and what recording or
    /// overdubbing writes there), given the input `x`.
    @inline(__always)
    private func frame(_ c: Int, _ x: Float) -> Float {
        switch state {
        case .empty:
            return 0
        case .stopped where fadeLeft == 0:
            return 0
        case .recording:
            buffer(current, c)[position] = x
            return 0
        default:
            break
        }
        var value = buffer(current, c)[position]
        if seamLeft > 0 {  // the first pass after closing: fold the post-roll into the start
            let k = seamFrames - seamLeft
            let w = Float(k) / Float(seamFrames)
            value = value * w + x * (1 - w)
            buffer(current, c)[position] = value
            let heard = buffer(current, c)[position] - x * (1 - w)
            return heard
        }
        if layerCovered >= 0 {  // a new layer is being written into the other buffer
            let other = buffer(1 - current, c)
            let add = state == .overdubbing ? x : 0
            if state == .overdubbing { layerHasInput = true }
            other[position] = value + add
            return value + add
        }
        return value
    }

    @inline(__always)
    private func fadeGain() -> Float {
        guard fadeLeft > 0 else { return 1 }
        let g = Float(fadeLeft) / Float(fadeFrames)
        return fadeDirection < 0 ? g : 1 - g
    }

    /// One frame on: position, seam, layer coverage, fades.
    @inline(__always)
    private func advance() {
        if fadeLeft > 0 {
            fadeLeft -= 1
            if fadeLeft == 0 && fadeDirection < 0 { fadeOutDone() }
        }
        switch state {
        case .recording:
            position += 1
            length = position
            if position >= capacity { closeLoopNow(thenPlay: true) }  // the buffer is full: close it here
            return
        case .playing, .overdubbing:
            break
        case .stopped where fadeLeft > 0:
            break
        default:
            return
        }
        if seamLeft > 0 { seamLeft -= 1 }
        if layerCovered >= 0 {
            layerCovered += 1
            if layerCovered >= length { finishLayer() }
        }
        position += 1
        if position >= length { position = 0 }
    }

    private func fadeOutDone() {
        if clearAfterFade {
            clearAfterFade = false
            reportedTempo = 0
            state = .empty
            length = 0
            canUndo = false
            canRedo = false
            layerCovered = -1
        } else {
            state = .stopped  // a layer in progress is completed while stopped (`completeLayer`)
        }
        position = 0
    }

    /// The new layer is complete: it becomes the playing one; the old one is the undo.
    private func finishLayer() {
        if layerHasInput {
            current = 1 - current
            canUndo = true
            canRedo = false
        }
        layerCovered = -1
        layerHasInput = false
        if state == .overdubbing {  // the next pass is a new layer
            layerCovered = 0
            layerStart = (position + 1) % max(length, 1)
        }
    }

    /// Completes a layer in progress from the old one while the loop does not play (after
    /// a stop), up to `limit` frames per call: the new layer is whole before play resumes.
    private func completeLayer(limit: Int) {
        var done = 0
        while layerCovered >= 0 && done < limit {
            let p = (layerStart + layerCovered) % length
            for c in 0..<channels { buffer(1 - current, c)[p] = buffer(current, c)[p] }
            done += 1
            layerCovered += 1
            if layerCovered >= length { finishLayer() }
        }
    }

    // MARK: - Commands

    private func perform(_ command: Command, pressed: Bool, at frame: Int64) {
        commandFrame = frame
        if pendingStart >= 0 {
            // Waiting for the grid to start recording: stop, clear, record or cycle cancels it.
            switch command {
            case .stop, .clear, .record, .cycle: if pressed { pendingStart = -1 }
            default: break
            }
            if command == .cycle && !pressed { pressedAt = -1 }
            return
        }
        if command == .cycle {
            cycle(pressed: pressed, at: frame)
            return
        }
        guard pressed else { return }
        switch command {
        case .record:
            switch state {
            case .empty: startRecording()
            case .recording: closeLoop(thenPlay: true)
            default:
                clearNow()
                startRecording()
            }
        case .overdub:
            switch state {
            case .playing: startOverdub()
            case .overdubbing: endOverdub()
            case .recording:
                closeLoop(thenPlay: true)
                if state == .playing { startOverdub() }
            default: break
            }
        case .play:
            switch state {
            case .recording: closeLoop(thenPlay: true)
            case .overdubbing: endOverdub()
            case .stopped where length > 0: startPlaying()
            default: break
            }
        case .stop:
            switch state {
            case .recording: closeLoop(thenPlay: false)
            case .playing, .overdubbing: fadeOut(thenClear: false)
            default: break
            }
        case .undo: undo()
        case .redo: redo()
        case .clear:
            if state == .playing || state == .overdubbing { fadeOut(thenClear: true) } else { clearNow() }
        case .cycle: break
        }
    }

    /// One footswitch: press records, closes and plays, overdubs, plays (in turn); two
    /// presses within 0.4 s stop (the first one's overdub, if it started one, is dropped);
    /// holding it 1 s clears.
    private func cycle(pressed: Bool, at frame: Int64) {
        guard pressed else {
            pressedAt = -1
            return
        }
        let doublePress = frame - lastPress < Int64(0.4 * sampleRate)
        lastPress = frame
        pressedAt = frame
        holdHandled = false
        if doublePress && (state == .playing || state == .overdubbing || stateBeforeLastPress == .recording) {
            if layerStartedByLastPress {
                layerCovered = -1  // the overdub the first press began is dropped
                state = .playing
            }
            if state == .playing || state == .overdubbing { fadeOut(thenClear: false) }
            layerStartedByLastPress = false
            return
        }
        stateBeforeLastPress = state
        layerStartedByLastPress = false
        switch state {
        case .empty: startRecording()
        case .recording: closeLoop(thenPlay: true)
        case .playing:
            startOverdub()
            layerStartedByLastPress = true
        case .overdubbing: endOverdub()
        case .stopped: if length > 0 { startPlaying() } else { startRecording() }
        }
    }

    private func checkHold(at frame: Int64) {
        guard pressedAt >= 0, !holdHandled, frame - pressedAt >= Int64(sampleRate) else { return }
        holdHandled = true
        if state == .playing || state == .overdubbing { fadeOut(thenClear: true) } else { clearNow() }
    }

    func startRecordingNow() {
        reportedTempo = 0
        pendingClose = -1
        state = .recording
        position = 0
        length = 0
        canUndo = false
        canRedo = false
        layerCovered = -1
        fadeLeft = 0
    }

    func closeLoopNow(thenPlay: Bool) {
        pendingClose = -1
        defer { if !recordQuantized && length > 0 { reportedTempo = grid.tempo(loopFrames: length, sampleRate: sampleRate) } }
        guard length > 0 else {
            state = .empty
            return
        }
        position = 0
        if thenPlay {
            state = .playing
            seamLeft = min(seamFrames, length)
        } else {
            // Stopped right away: the seam is a short fade-in of the loop's start instead.
            for c in 0..<channels {
                let p = buffer(current, c)
                for k in 0..<min(seamFrames, length) { p[k] *= Float(k) / Float(seamFrames) }
            }
            state = .stopped
        }
    }

    private func startPlaying() {
        if layerCovered >= 0 { completeLayer(limit: .max) }  // rare: play within a second of a stop
        state = .playing
        position = 0
        fadeDirection = 1
        fadeLeft = fadeFrames
    }

    private func startOverdub() {
        state = .overdubbing
        if layerCovered < 0 {
            layerCovered = 0
            layerStart = position
            layerHasInput = false
        }
    }

    /// The overdub ends; the layer is completed from the old one as the loop passes.
    private func endOverdub() {
        state = .playing
        if layerCovered >= 0 && !layerHasInput { layerCovered = -1 }  // nothing was added
    }

    private func fadeOut(thenClear: Bool) {
        clearAfterFade = thenClear
        fadeDirection = -1
        fadeLeft = fadeFrames
        if state == .overdubbing { state = .playing }
    }

    func clearNow() {
        pendingStart = -1
        pendingClose = -1
        reportedTempo = 0
        state = .empty
        length = 0
        position = 0
        canUndo = false
        canRedo = false
        layerCovered = -1
        fadeLeft = 0
    }

    private func undo() {
        if layerCovered >= 0 {  // a layer in progress is dropped
            layerCovered = -1
            if state == .overdubbing { state = .playing }
            return
        }
        guard canUndo else { return }
        current = 1 - current
        canUndo = false
        canRedo = true
    }

    private func redo() {
        guard canRedo, layerCovered < 0 else { return }
        current = 1 - current
        canRedo = false
        canUndo = true
    }
}

/// dB to a factor, −96 dB and below silence, 0 dB exactly 1 (a loop plays back bit for bit).
/// Thread: any.
@inline(__always)
func decibelsToGainOrSilence(_ db: Float) -> Float {
    db == 0 ? 1 : db <= -96 ? 0 : Curves.decibelsToGain(db)
}
