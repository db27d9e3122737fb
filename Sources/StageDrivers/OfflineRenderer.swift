import CStageShim
import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// The "generic output" of AUGraph: the same plan, driven by a file clock instead of a
/// sound card. Input audio and MIDI come from memory, output goes to a file.
/// Thread: control (it is not real-time, but it runs the render path exactly as live does).
public final class OfflineRenderer {
    public struct Options {
        public var blockSize: Int = 256
        /// nil: the longer of the input and the MIDI, plus the rack's tail.
        public var duration: Double?
        /// Longest tail added to the default duration.
        public var maxTail: Double = 10
        public init() {}
    }

    public struct Summary: Sendable {
        public var frames: Int
        public var sampleRate: Double
        public var peak: Float
        public var cpuSeconds: Double
        public var safety: SafetyCounters
        public var seconds: Double { Double(frames) / sampleRate }
        public var peakDBFS: Float { peak > 0 ? 20 * log10f(peak) : -240 }
        /// Audio seconds per CPU second.
        public var realTimeFactor: Double { cpuSeconds > 0 ? seconds / cpuSeconds : .infinity }
    }

    public let plan: RenderPlan
    public let engine: RenderEngine
    public let mapper: MIDIMapper

    public init(plan: RenderPlan) {
        self.plan = plan
        engine = RenderEngine(plan: plan)
        mapper = MIDIMapper(plan: plan)
    }

    /// The frames a render covers when no duration is given.
    public func defaultFrames(input: AudioData?, midi: StandardMIDIFile?, maxTail: Double) -> Int {
        let inputSeconds = input.map { Double($0.frameCount) / plan.sampleRate } ?? 0
        let midiSeconds = midi?.duration ?? 0
        let tail = min(plan.tailSeconds, maxTail) + Double(plan.latencyFrames) / plan.sampleRate
        return Int(((max(inputSeconds, midiSeconds) + tail) * plan.sampleRate).rounded(.up))
    }

    /// Renders into `sink` (called after each block with the host output and its frame
    /// count). `input` must already be at the plan's rate. `extraEvents` are engine events
    /// at absolute frames, merged with the MIDI file's.
    @discardableResult
    public func render(
        input: AudioData?, midi: StandardMIDIFile?, frames: Int, blockSize: Int,
        progress: ((Double) -> Void)? = nil, sink: (AudioBus, Int) throws -> Void
    ) rethrows -> Summary {
        precondition(blockSize > 0 && blockSize <= plan.maxFrames)
        stage_enable_flush_to_zero()
        // MIDI file → engine events, through the same mapping layer as live MIDI.
        var events: [EngineEvent] = []
        if let midi {
            for m in midi.messages {
                let t = Int64((m.seconds * plan.sampleRate).rounded())
                mapper.handle(m.message, at: t) { events.append($0) }
            }
            // 14-bit halves still waiting for a partner apply at their own time.
            mapper.flush { events.append($0) }
            if zip(events, events.dropFirst()).contains(where: { $0.sampleTime > $1.sampleTime }) {
                events = events.enumerated().sorted { ($0.element.sampleTime, $0.offset) < ($1.element.sampleTime, $1.offset) }
                    .map(\.element)
            }
        }
        var nextEvent = 0
        let host = plan.hostInput
        var peak: Float = 0
        let cpuStart = threadCPUSeconds()
        var lastProgress = cpuStart
        var done = 0
        while done < frames {
            let n = min(blockSize, frames - done)
            let blockEnd = Int64(done + n)
            while nextEvent < events.count, events[nextEvent].sampleTime < blockEnd {
                if !engine.events.push(events[nextEvent]) { break }  // full: the rest next block
                nextEvent += 1
            }
            for c in 0..<host.channelCount {
                let dst = host[c]
                if let input, c < input.channels.count {
                    let src = input.channels[c]
                    let available = max(0, min(n, src.count - done))
                    src.withUnsafeBufferPointer { p in
                        if available > 0 { dst.update(from: p.baseAddress! + done, count: available) }
                    }
                    if available < n { (dst + available).update(repeating: 0, count: n - available) }
                } else {
                    dst.update(repeating: 0, count: n)
                }
            }
            engine.render(frameCount: n)
            let out = plan.hostOutput
            for c in 0..<out.channelCount {
                let p = out[c]
                for i in 0..<n { peak = max(peak, abs(p[i])) }
            }
            try sink(out, n)
            done += n
            if let progress {
                let now = threadCPUSeconds()
                if now - lastProgress > 0.1 {
                    lastProgress = now
                    progress(Double(done) / Double(frames))
                }
            }
        }
        return Summary(
            frames: frames, sampleRate: plan.sampleRate, peak: peak, cpuSeconds: threadCPUSeconds() - cpuStart,
            safety: engine.safety)
    }
}

/// CPU time used by the calling thread, in seconds. Thread: any.
public func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
