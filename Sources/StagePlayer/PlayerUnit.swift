import StageCore
import Synchronization

/// Plays a track: transport commands at their frames, the preloads then the disk's chunks,
/// a fade on stop, a crossfade when a start cuts into a playing track, the gain; a transpose
/// switch (the disk thread renders the track again from a frame a little ahead, the render
/// thread crossfades there: see `placeSwitch`).
///
/// Thread: render (`render`, `reset`); the transport readings (`UnitTransport`) from any
/// thread; made and released on the control thread (the release stops the disk thread).
public final class PlayerUnit: RackUnit, UnitTransport {
    enum Parameter {
        static let gain = 0
        static let transpose = 1
    }

    /// A transpose switch lands at least this far (frames) after the change: the disk
    /// thread's time to render the new stream (4096 frames: 85 ms at 48 kHz).
    static let switchLead: Int64 = 4096

    enum Command: Int {
        case play = 0, stop, toggle, restart
        /// `cue k` is command `firstCue + k`.
        static let firstCue = 4
    }

    let stream: TrackStream
    let reader: TrackReader
    let trigger: TriggerMode
    let startOnLoad: Bool
    let sampleRate: Double
    /// Offline renders wait for the disk instead of playing silence (`UnitBuildContext.realTime`).
    public var waitsForDisk = false
    /// Stop fades and the crossfade of a start over a playing track or of a transpose
    /// switch: 10 ms.
    let fadeFrames: Int
    /// Where the start points and the loop sit at the engine's rate (frames).
    let startEngineFrames: [Double]
    let loopEngine: (start: Double, end: Double)?
    let fileEngineFrames: Double?

    // Render-thread state.
    private var playing = false
    private var pendingStartOnLoad: Bool
    private var generation: UInt32 = 0
    private var startPoint = 0
    /// Frames played since the start point.
    private var streamFrame: Int64 = 0
    private var currentChunk = -1
    /// Frames left in the stop fade (0: no fade running).
    private var fadeLeft = 0
    /// The old track's next frames when a start cut into it, faded out over `fadeFrames`.
    private let tail: UnsafeMutablePointer<Float>
    private var tailLeft = 0
    private var maxFrames = 0
    /// The generation's preload frames played (0 for a transposed start: the disk streams
    /// it from its first frame) and whether the track ends within them.
    private var preloadEnd = 0
    private var endsInPreload = false
    /// The preload playing: the start point's, or the primed one at the song's transpose.
    private var preload: UnsafeMutablePointer<Float>
    /// The primed preload is still to be played (the disk's shifter untouched since).
    private var primedUnused: Bool
    /// A transposed start waits for its first chunk (its position held at 0).
    private var awaitingFirstChunk = false
    /// The transpose of the audio playing, the one the parameter asks for, and the stream
    /// frame where it asked (block-size independent: the frame of the change).
    private var semitones = 0
    private var wantedSemitones = 0
    private var wantedSince: Int64 = 0
    /// The placed switch: its frame (−1: none) and generation; the last switch's frame.
    private var switchFrame: Int64 = -1
    private var switchGeneration: UInt32 = 0
    private var switchSemitones = 0
    private var lastSwitchFrame: Int64 = 0

    // Published once per block.
    private let playingFlag = Atomic<Bool>(false)
    private let positionFrames = Atomic<Int>(0)
    private let underrunCount = Atomic<Int>(0)
    private let underrunFrameCount = Atomic<Int>(0)

    init(stream: TrackStream, reader: TrackReader, settings: PlayerSettings, sampleRate: Double) {
        self.stream = stream
        self.reader = reader
        self.sampleRate = sampleRate
        trigger = settings.trigger
        startOnLoad = settings.startOnLoad
        pendingStartOnLoad = settings.startOnLoad
        fadeFrames = stream.fadeFrames
        let ratio = reader.ratio
        startEngineFrames = stream.startFrames.map { Double($0) * ratio }
        loopEngine = reader.loop.map { (Double($0.lowerBound) * ratio, Double($0.upperBound) * ratio) }
        fileEngineFrames = reader.fileFrames >= 0 ? Double(reader.fileFrames) * ratio : nil
        tail = .allocate(capacity: fadeFrames * 2)
        tail.initialize(repeating: 0, count: fadeFrames * 2)
        preload = stream.preloads[0]
        primedUnused = stream.primedSemitones != 0
    }

    deinit {
        stream.shutdown()
        tail.deallocate()
    }

    public func prepare(_ spec: PrepareSpec) throws { maxFrames = spec.maxFrames }

    /// Stops the track; a `startOnLoad` track starts again at the next block. Thread: render
    /// (or control while not rendering). Touches no queue: stale chunks are recognised by
    /// their generation and given back by the next `render`.
    public func reset() {
        playing = false
        fadeLeft = 0
        tailLeft = 0
        streamFrame = 0
        switchFrame = -1
        pendingStartOnLoad = startOnLoad
        positionFrames.store(0, ordering: .relaxed)
        playingFlag.store(false, ordering: .relaxed)
    }

    /// The render side of the stream's queues (`filled` popped, `free` and `requests`
    /// pushed) goes to the next thread that renders (after `RenderEngine.warmUp` on the
    /// control thread). Thread: control, while nothing renders the unit.
    public func handOverRenderThread() {
        stream.filled.handOverConsumer()
        stream.free.handOverProducer()
        stream.requests.handOverProducer()
    }

    // MARK: - Transport readings (any thread)

    public var isPlaying: Bool { playingFlag.load(ordering: .relaxed) }
    public var transportState: String { isPlaying ? "playing" : "stopped" }
    public var positionSeconds: Double { Double(positionFrames.load(ordering: .relaxed)) / sampleRate }
    public var remainingSeconds: Double? {
        guard loopEngine == nil, let total = fileEngineFrames else { return nil }
        return max(0, total - Double(positionFrames.load(ordering: .relaxed))) / sampleRate
    }
    public var underruns: Int { underrunCount.load(ordering: .relaxed) }
    public var stopCommand: Int { Command.stop.rawValue }
    /// Frames of silence played because the disk was late.
    public var underrunFrames: Int { underrunFrameCount.load(ordering: .relaxed) }
    /// Test hook: the disk thread sleeps this long after each chunk it reads.
    public func slowDiskForTesting(nanosecondsPerChunk: Int) {
        stream.diskDelayNanoseconds.store(nanosecondsPerChunk, ordering: .relaxed)
    }

    // MARK: - Render

    public func render(_ context: RenderContext) {
        let n = context.frameCount
        let out = context.outputs[0]
        let l = out[0]
        let r = out[1]
        giveBackStaleChunks()
        readTranspose(context.parameters, n)
        var pos = 0
        if pendingStartOnLoad {
            pendingStartOnLoad = false
            start(at: 0)
        }
        var underran = false
        for e in context.events {
            guard let index = UnitCommand.index(of: e.message), UnitCommand.isPress(e.message) else { continue }
            let offset = min(max(Int(e.frameOffset), pos), n)
            underran = produce(l + pos, r + pos, frames: offset - pos) || underran
            pos = offset
            perform(index)
        }
        underran = produce(l + pos, r + pos, frames: n - pos) || underran
        applyGain(context.parameters, l, r, n)
        if underran { underrunCount.add(1, ordering: .relaxed) }
        playingFlag.store(playing, ordering: .relaxed)
        positionFrames.store(position(), ordering: .relaxed)
        stream.renderFrame.store(Int(streamFrame), ordering: .relaxed)
        stream.renderGeneration.store(generation, ordering: .releasing)
    }

    /// A pressed command.
    private func perform(_ index: Int) {
        switch Command(rawValue: index) {
        case .play?:
            if !playing || fadeLeft > 0 {
                start(at: 0)
            } else {
                switch trigger {
                case .oneShot: start(at: 0)
                case .loop: break
                case .toggle: stop()
                }
            }
        case .stop?: stop()
        case .toggle?: if playing && fadeLeft == 0 { stop() } else { start(at: 0) }
        case .restart?: start(at: 0)
        case nil:
            let cue = index - Command.firstCue + 1
            if cue >= 1 && cue < stream.startFrames.count { start(at: cue) }
        }
    }

    /// Starts from start point `point` at this frame; a playing track's next 10 ms fade out
    /// under it.
    private func start(at point: Int) {
        if playing { captureTail() }
        generation &+= 1
        startPoint = point
        streamFrame = 0
        fadeLeft = 0
        playing = true
        if currentChunk >= 0 {
            _ = stream.free.push(Int32(currentChunk))
            currentChunk = -1
        }
        semitones = wantedSemitones
        wantedSince = 0
        lastSwitchFrame = 0
        switchFrame = -1
        // The file's first start at the song's transpose plays the primed preload; any other
        // transposed start waits for the disk's first chunk.
        let primed = primedUnused && point == 0 && semitones != 0 && semitones == stream.primedSemitones
        primedUnused = false
        preload = primed ? stream.primedPreload : stream.preloads[point]
        preloadEnd = semitones == 0 ? stream.preloadLengths[point] : primed ? stream.primedLength : 0
        endsInPreload = (semitones == 0 && preloadEnd < stream.preloadFrames) || (primed && !stream.primedGoesOn)
        awaitingFirstChunk = semitones != 0 && !primed
        _ = stream.requests.push(
            StreamRequest(
                generation: generation, startPoint: Int32(point), fromFrame: Int64(preloadEnd), semitones: Int32(semitones),
                continues: false, primed: primed))
    }

    private func stop() {
        guard playing, fadeLeft == 0 else { return }
        fadeLeft = fadeFrames
    }

    /// Copies what the track would play next into `tail` (as much as is at hand), without
    /// moving, so a start can fade it out.
    private func captureTail() {
        var got = 0
        var frame = streamFrame
        var chunk = currentChunk
        while got < fadeFrames {
            if frame < Int64(preloadEnd) {
                let k = min(fadeFrames - got, preloadEnd - Int(frame))
                (tail + 2 * got).update(from: preload + 2 * Int(frame), count: 2 * k)
                got += k
                frame += Int64(k)
                continue
            }
            guard chunk >= 0 else { break }
            let offset = Int(frame - stream.chunkStart[chunk])
            let k = min(fadeFrames - got, stream.chunkFrameCount[chunk] - offset)
            if k <= 0 { break }
            (tail + 2 * got).update(from: stream.chunk(chunk) + 2 * offset, count: 2 * k)
            got += k
            frame += Int64(k)
            chunk = -1
        }
        if got < fadeFrames { (tail + 2 * got).update(repeating: 0, count: 2 * (fadeFrames - got)) }
        // With a stop fade running, the tail starts at its level.
        if fadeLeft > 0 {
            for f in 0..<fadeFrames {
                let g = Float(max(fadeLeft - f, 0)) / Float(fadeFrames)
                tail[2 * f] *= g
                tail[2 * f + 1] *= g
            }
        }
        tailLeft = fadeFrames
    }

    /// Writes `frames` frames of the track (or silence) into `l`, `r`; true when the disk
    /// was late.
    private func produce(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, frames: Int) -> Bool {
        guard frames > 0 else { return false }
        var done = 0
        var late = false
        while done < frames && playing {
            let k = playFrames(l + done, r + done, frames: frames - done, late: &late)
            if k == 0 { break }
            // Piece by piece: a transpose switch's tail starts at the piece it starts.
            if fadeLeft > 0 || tailLeft > 0 { applyFades(l + done, r + done, frames: k) }
            done += k
        }
        if done < frames {
            (l + done).update(repeating: 0, count: frames - done)
            (r + done).update(repeating: 0, count: frames - done)
            if fadeLeft > 0 || tailLeft > 0 { applyFades(l + done, r + done, frames: frames - done) }
        }
        return late
    }

    /// Plays up to `frames` frames from the preload or the current chunk; 0 when the track
    /// ended. Counts a late disk as silence (or waits for it offline).
    private func playFrames(
        _ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, frames: Int, late: inout Bool
    ) -> Int {
        if switchFrame >= 0 && streamFrame >= switchFrame { performSwitch() }
        // Not past a placed switch.
        let frames = switchFrame >= 0 ? min(frames, Int(switchFrame - streamFrame)) : frames
        if streamFrame < Int64(preloadEnd) {
            let k = min(frames, preloadEnd - Int(streamFrame))
            deinterleave(preload + 2 * Int(streamFrame), l, r, k)
            streamFrame += Int64(k)
            return k
        }
        if endsInPreload {  // the file ended within the preload
            playing = false
            return 0
        }
        if currentChunk < 0 && awaitingFirstChunk && !nextChunk() {
            // A transposed start: silence until its first chunk, the position held.
            l.update(repeating: 0, count: frames)
            r.update(repeating: 0, count: frames)
            return frames
        }
        if currentChunk < 0 && !nextChunk() {
            // The disk is late: silence, and time goes on (the track stays in time).
            l.update(repeating: 0, count: frames)
            r.update(repeating: 0, count: frames)
            streamFrame += Int64(frames)
            underrunFrameCount.add(frames, ordering: .relaxed)
            late = true
            return frames
        }
        let c = currentChunk
        let count = stream.chunkFrameCount[c]
        let offset = Int(streamFrame - stream.chunkStart[c])
        if offset < 0 {  // the disk skipped ahead after being late: silence up to its chunk
            let k = min(frames, -offset)
            l.update(repeating: 0, count: k)
            r.update(repeating: 0, count: k)
            streamFrame += Int64(k)
            underrunFrameCount.add(k, ordering: .relaxed)
            late = true
            return k
        }
        if count == 0 || offset >= count {
            let ended = count < stream.chunkFrames
            _ = stream.free.push(Int32(c))
            currentChunk = -1
            if ended { playing = false }
            return ended ? 0 : playFrames(l, r, frames: frames, late: &late)
        }
        let k = min(frames, count - offset)
        deinterleave(stream.chunk(c) + 2 * offset, l, r, k)
        streamFrame += Int64(k)
        if offset + k == count {
            _ = stream.free.push(Int32(c))
            currentChunk = -1
            if count < stream.chunkFrames { playing = false }
        }
        return k
    }

    /// Takes the next chunk of this generation that is not wholly in the past; false when
    /// none is there (offline: waits for the disk, up to 10 s).
    private func nextChunk() -> Bool {
        var waited = 0
        while true {
            while let c32 = stream.filled.pop() {
                let c = Int(c32)
                let end = stream.chunkStart[c] + Int64(stream.chunkFrameCount[c])
                if stream.chunkGeneration[c] != generation || (end <= streamFrame && stream.chunkFrameCount[c] == stream.chunkFrames) {
                    _ = stream.free.push(c32)  // stale, or played as silence while the disk was late
                    continue
                }
                currentChunk = c
                awaitingFirstChunk = false
                placeSwitch()
                return true
            }
            guard waitsForDisk, waited < 100_000 else { return false }
            nap(nanoseconds: 100_000)  // offline only: the render loop is not real time
            waited += 1
        }
    }

    /// Gives back chunks of an older generation (a start threw them away) so the disk
    /// thread can refill them.
    private func giveBackStaleChunks() {
        while let c = stream.filled.peek(), stream.chunkGeneration[Int(c)] != generation,
            switchFrame < 0 || stream.chunkGeneration[Int(c)] != switchGeneration
        {
            _ = stream.filled.pop()
            _ = stream.free.push(c)
        }
    }

    @inline(__always)
    private func deinterleave(_ src: UnsafePointer<Float>, _ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ k: Int) {
        for f in 0..<k {
            l[f] = src[2 * f]
            r[f] = src[2 * f + 1]
        }
    }

    private func applyFades(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, frames: Int) {
        let scale = 1 / Float(fadeFrames)
        for f in 0..<frames {
            if fadeLeft > 0 {
                let g = Float(fadeLeft) * scale
                l[f] *= g
                r[f] *= g
                fadeLeft -= 1
                if fadeLeft == 0 {
                    playing = false
                    for z in (f + 1)..<max(frames, f + 1) {
                        l[z] = 0
                        r[z] = 0
                    }
                }
            }
            if tailLeft > 0 {
                let i = fadeFrames - tailLeft
                let g = Float(tailLeft) * scale
                l[f] += tail[2 * i] * g
                r[f] += tail[2 * i + 1] * g
                tailLeft -= 1
            }
        }
    }

    private func applyGain(_ params: ParameterValues, _ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int) {
        if params.isSteady(Parameter.gain) {
            let db = params.value(Parameter.gain)
            if db == 0 { return }
            let g: Float = db <= -96 ? 0 : Curves.decibelsToGain(db)
            for i in 0..<n {
                l[i] *= g
                r[i] *= g
            }
        } else {
            let db = params[Parameter.gain]
            for i in 0..<n {
                let g: Float = db[i] <= -96 ? 0 : Curves.decibelsToGain(db[i])
                l[i] *= g
                r[i] *= g
            }
        }
    }

    // MARK: - Transpose

    /// Notes where the `transpose` parameter asks for other whole semitones (the frame of
    /// the change, so offline renders do not depend on the block size) and places a switch.
    private func readTranspose(_ params: ParameterValues, _ n: Int) {
        if params.isSteady(Parameter.transpose) {
            noteWanted(params.value(Parameter.transpose), at: streamFrame)
        } else {
            let v = params[Parameter.transpose]
            for i in 0..<n { noteWanted(v[i], at: streamFrame + Int64(i)) }
        }
        placeSwitch()
    }

    private func noteWanted(_ value: Float, at frame: Int64) {
        let s = Int(min(max(value, -12), 12).rounded())
        if s != wantedSemitones {
            wantedSemitones = s
            wantedSince = frame
        }
    }

    /// Places a switch to the wanted transpose on the first frame, `switchLead` or more after
    /// the change, where the old audio can stop: any frame of the preload, else the start of
    /// a chunk's last `fadeFrames` (the crossfade takes the old audio from there). The queued
    /// chunks, all after it, go back to the disk thread, which renders the stream again from
    /// that frame at the new transpose.
    private func placeSwitch() {
        guard playing, fadeLeft == 0, switchFrame < 0, wantedSemitones != semitones, !awaitingFirstChunk else { return }
        let earliest = max(max(wantedSince, lastSwitchFrame) + Self.switchLead, streamFrame)
        let x = Int64(fadeFrames)
        let at: Int64
        if streamFrame < Int64(preloadEnd) && earliest + x <= Int64(preloadEnd) {
            at = earliest
        } else if currentChunk >= 0 {
            let c = currentChunk
            let end = stream.chunkStart[c] + Int64(stream.chunkFrameCount[c])
            guard stream.chunkFrameCount[c] == stream.chunkFrames, end - x >= earliest else { return }
            at = end - x
        } else {
            return
        }
        switchGeneration = generation &+ 1
        switchFrame = at
        switchSemitones = wantedSemitones
        while let c = stream.filled.pop() { _ = stream.free.push(c) }
        _ = stream.requests.push(
            StreamRequest(
                generation: switchGeneration, startPoint: Int32(startPoint), fromFrame: at, semitones: Int32(switchSemitones),
                continues: true))
    }

    /// At the switch's frame: the old audio's next `fadeFrames` fade out (the tail) while
    /// the new generation's, from the disk thread, fade in.
    private func performSwitch() {
        captureTail()
        generation = switchGeneration
        semitones = switchSemitones
        lastSwitchFrame = switchFrame
        switchFrame = -1
        preloadEnd = min(preloadEnd, Int(streamFrame))
        endsInPreload = false
        if currentChunk >= 0 {
            _ = stream.free.push(Int32(currentChunk))
            currentChunk = -1
        }
        placeSwitch()
    }

    /// The play position in engine frames of the file (the loop folded in).
    private func position() -> Int {
        var p = startEngineFrames[startPoint] + Double(streamFrame)
        if let loop = loopEngine, p >= loop.end, loop.end > loop.start {
            p = loop.start + (p - loop.start).truncatingRemainder(dividingBy: loop.end - loop.start)
        }
        return Int(p)
    }
}
