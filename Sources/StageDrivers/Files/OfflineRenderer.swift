import CStageShim
import StageCore
import StageControl

#if canImport(Glibc)
import Glibc
#endif

/// The "generic output" of AUGraph: the same racks, driven by a file clock instead of a
/// sound card. Input audio and MIDI come from memory, output goes to a sink (a file).
/// Program changes in the MIDI go through a `PresetSwitcher` exactly as live (loaded at
/// their time, switched at the block boundary before it, tails ringing out).
/// Thread: one control thread (it is not real-time, but it runs the render path as live does).
public final class OfflineRenderer {
    public struct Summary: Sendable {
        public var frames: Int
        public var sampleRate: Double
        public var peak: Float
        /// CPU (user + system) of the whole process while rendering.
        public var cpuSeconds: Double
        public var safety: SafetyCounters
        public var switches: Int
        public var seconds: Double { Double(frames) / sampleRate }
        public var peakDBFS: Float { peak > 0 ? 20 * log10f(peak) : -240 }
        /// Audio seconds per CPU second.
        public var realTimeFactor: Double { cpuSeconds > 0 ? seconds / cpuSeconds : .infinity }
    }

    public let plan: RenderPlan
    public let player: RackPlayer
    public let switcher: PresetSwitcher?
    let ownMapper: MIDIMapper
    let output: BusStorage

    /// Renders one rack; program changes only reach the units.
    public init(plan: RenderPlan) {
        self.plan = plan
        player = RackPlayer(engine: RenderEngine(plan: plan))
        switcher = nil
        ownMapper = MIDIMapper(plan: plan)
        output = BusStorage(bufferCount: plan.outputChannelCount, maxFrames: plan.maxFrames)
    }

    /// Renders a setlist starting at entry `index` (whose compiled plan is `plan`).
    public init(
        setlist: Setlist, index: Int, plan: RenderPlan, registry: UnitRegistry, options: GraphCompiler.Options,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.plan = plan
        player = RackPlayer(engine: RenderEngine(plan: plan))
        switcher = PresetSwitcher(
            setlist: setlist, index: index, player: player, firstPlan: plan, registry: registry, options: options, log: log)
        ownMapper = MIDIMapper(plan: plan)
        output = BusStorage(bufferCount: plan.outputChannelCount, maxFrames: plan.maxFrames)
    }

    /// The most MIDI messages taken in one block: a rack takes 1024 events a block (the
    /// player carries the rest to the next, late) and the player's queue holds 8191, so a
    /// file with more messages at once than that lost them; below 1024 leaves room for the
    /// engine's own events (all-notes-off on a switch).
    static let messagesPerBlock = 960

    /// The frames a render covers when no duration is given.
    public func defaultFrames(input: AudioData?, midi: StandardMIDIFile?, maxTail: Double) -> Int {
        let inputSeconds = input.map { Double($0.frameCount) / plan.sampleRate } ?? 0
        let midiSeconds = Self.midiSeconds(midi)
        let tail = min(plan.tailSeconds, maxTail) + Double(plan.latencyFrames) / plan.sampleRate
        return Int(((max(inputSeconds, midiSeconds) + tail) * plan.sampleRate).rounded(.up))
    }

    /// The frames of input and MIDI, without any tail.
    public func contentFrames(input: AudioData?, midi: StandardMIDIFile?) -> Int {
        let inputSeconds = input.map { Double($0.frameCount) / plan.sampleRate } ?? 0
        return Int((max(inputSeconds, Self.midiSeconds(midi)) * plan.sampleRate).rounded(.up))
    }

    /// The MIDI's length, never more than `StandardMIDIFile.maximumSeconds` (a sequence
    /// made in code is not checked by the file reader).
    public static func midiSeconds(_ midi: StandardMIDIFile?) -> Double {
        guard let d = midi?.duration, d.isFinite, d > 0 else { return 0 }
        return min(d, StandardMIDIFile.maximumSeconds)
    }

    /// Renders into `sink` (called after each block with the output and its frame count:
    /// every device channel of the first rack's outputs, `plan.outputChannelCount` wide). `input` must already be at the plan's rate. With `tailUntilSilent`, the
    /// render goes on after `frames` until the output has stayed under −80 dBFS for 100 ms
    /// (the racks' tails, measured rather than guessed), at most that many seconds more.
    @discardableResult
    public func render(
        input: AudioData?, midi: StandardMIDIFile?, frames: Int, blockSize: Int, tailUntilSilent: Double? = nil,
        progress: ((Double) -> Void)? = nil, sink: (AudioBus, Int) throws -> Void
    ) rethrows -> Summary {
        try render(
            source: input.map(MemorySource.init), midi: midi, frames: frames, blockSize: blockSize,
            tailUntilSilent: tailUntilSilent, progress: progress, sink: sink)
    }

    /// Renders `source` (streamed a block at a time: memory stays flat whatever its length)
    /// and `midi` into `sink`. `frames` nil renders the content: until the source has ended
    /// and the MIDI is over, plus the plan's latency. With `tailUntilSilent`, the render
    /// goes on after that until the output has stayed under −80 dBFS for 100 ms, at most
    /// that many seconds more. Thread: the caller's (one control thread).
    @discardableResult
    public func render(
        source: RenderSource?, midi: StandardMIDIFile?, frames: Int?, blockSize: Int, tailUntilSilent: Double? = nil,
        progress: ((Double) -> Void)? = nil, sink: (AudioBus, Int) throws -> Void
    ) rethrows -> Summary {
        precondition(blockSize > 0 && blockSize <= plan.maxFrames)
        stage_enable_flush_to_zero()
        let messages = midi?.messages ?? []
        var nextMessage = 0
        var lastMapper: MIDIMapper?
        var bankMSB = [Int](repeating: 0, count: 16)
        var bankLSB = [Int](repeating: 0, count: 16)
        let inputChannels = source?.channelCount ?? 0
        let inputStorage = BusStorage(bufferCount: max(inputChannels, 1), maxFrames: blockSize)
        let inputBus = inputStorage.bus(first: 0, channels: max(inputChannels, 1))
        let out = output.bus(first: 0, channels: output.bufferCount)
        var peak: Float = 0
        var switches = 0
        let cpuStart = ProcessUsage.now().cpuSeconds
        var lastProgress = threadCPUSeconds()
        var done = 0
        let silentNeeded = Int(0.1 * plan.sampleRate)
        let midiFrames = Int((Self.midiSeconds(midi) * plan.sampleRate).rounded(.up))
        // The content's end: given, or known once the source has ended.
        var contentEnd: Int? = frames ?? (source == nil ? midiFrames + plan.latencyFrames : nil)
        let expected = frames ?? max(midiFrames, source?.expectedFrames ?? 0) + plan.latencyFrames
        var sourceEnded = source == nil
        let tailFrames = Int((tailUntilSilent ?? 0) * plan.sampleRate)
        var silentFrames = 0
        while true {
            let end = contentEnd ?? Int.max
            let tailLimit = end == Int.max ? Int.max : end + tailFrames
            guard done < end || (tailUntilSilent != nil && done < tailLimit && silentFrames < silentNeeded) else { break }
            var n = done < end ? min(blockSize, end - done) : min(blockSize, tailLimit - done)
            // Dense MIDI: the block ends before the message that would exceed the budget, so
            // the engine's queues never overflow and each message keeps its sample (more than
            // the budget on one sample: the rest wait a frame per budget).
            if nextMessage + Self.messagesPerBlock < messages.count {
                let seconds = messages[nextMessage + Self.messagesPerBlock].seconds
                if seconds.isFinite && seconds * plan.sampleRate < Double(done + n) {
                    n = max(1, Int((seconds * plan.sampleRate).rounded(.down)) - done)
                }
            }
            let blockEnd = Double(done + n) / plan.sampleRate
            // MIDI due in this block: program changes switch first, the rest is mapped.
            let lastInBlock = min(messages.count, nextMessage + Self.messagesPerBlock)
            while nextMessage < lastInBlock, messages[nextMessage].seconds < blockEnd {
                let m = messages[nextMessage]
                nextMessage += 1
                guard m.seconds >= 0 else { continue }  // NaN and negative times are not events
                let t = Int64((m.seconds * plan.sampleRate).rounded())
                if m.message.kind == .controlChange && (m.message.controller == 0 || m.message.controller == 32) {
                    if m.message.controller == 0 { bankMSB[m.message.channel] = m.message.value } else {
                        bankLSB[m.message.channel] = m.message.value
                    }
                }
                if m.message.kind == .programChange, let switcher {
                    let bank = bankMSB[m.message.channel] * 128 + bankLSB[m.message.channel]
                    if switcher.perform(.program(m.message.data1 == 127 ? 128 : Int(m.message.data1) + 1, bank: bank), at: t) {
                        switches += 1
                    }
                    continue
                }
                let mapper = switcher?.mapper ?? ownMapper
                if mapper !== lastMapper {
                    if let lastMapper { mapper.takeOver(from: lastMapper) }  // knobs wait for pickup
                    lastMapper = mapper
                }
                let generation = switcher?.currentPlan.generation ?? 0
                mapper.handle(m.message, at: t) { e in
                    var tagged = e
                    tagged.generation = generation
                    _ = player.events.push(tagged)
                }
            }
            // A 14-bit half whose partner never came applies once its wait is over.
            let mapper = switcher?.mapper ?? ownMapper
            let generation = switcher?.currentPlan.generation ?? 0
            mapper.poll(seconds: blockEnd, sampleTime: Int64(done + n)) { e in
                var tagged = e
                tagged.generation = generation
                _ = player.events.push(tagged)
            }
            if let source, !sourceEnded {
                let got = source.read(into: inputBus, frames: n)
                if got < n {
                    sourceEnded = true
                    if contentEnd == nil { contentEnd = max(done + got, midiFrames) + plan.latencyFrames }
                    // The content's last block ends where the content does (then the tail).
                    if let contentEnd {
                        guard done < contentEnd else { continue }
                        n = min(n, contentEnd - done)
                    }
                }
            } else {
                inputBus.clear(frames: n)
            }
            player.render(frameCount: n, input: inputBus, output: out)
            player.collectRetired()
            var blockPeak: Float = 0
            for c in 0..<out.channelCount { blockPeak = max(blockPeak, Self.peak(out[c], n)) }
            peak = max(peak, blockPeak)
            silentFrames = blockPeak < RackPlayer.silenceThreshold ? silentFrames + n : 0
            try sink(out, n)
            done += n
            if let progress {
                let now = threadCPUSeconds()
                if now - lastProgress > 0.1 {
                    lastProgress = now
                    progress(min(Double(done) / Double(max(contentEnd ?? expected, 1)), 1))
                }
            }
        }
        return Summary(
            frames: done, sampleRate: plan.sampleRate, peak: peak, cpuSeconds: ProcessUsage.now().cpuSeconds - cpuStart,
            safety: player.current.safety, switches: switches)
    }
}

extension OfflineRenderer {
    /// The largest magnitude among `n` samples. As integers: a finite float without its
    /// sign bit orders as its bit pattern, and an integer max vectorises where a float max
    /// did not (9 instructions a sample; `pointwiseMax` on SIMD8 was a call per 8). The
    /// output stage has already replaced NaNs.
    static func peak(_ p: UnsafeMutablePointer<Float>, _ n: Int) -> Float {
        let bits = UnsafeRawPointer(p).assumingMemoryBound(to: UInt32.self)
        var m: UInt32 = 0
        for i in 0..<n { m = max(m, bits[i] & 0x7fff_ffff) }
        return Float(bitPattern: m)
    }
}

/// What the whole process has used so far: CPU (getrusage: user + system, every thread)
/// and its peak resident memory (the kernel's VmHWM from /proc/self/status). Thread: any.
///
/// Not getrusage's ru_maxrss: Linux keeps that across execve, and at the exec it records
/// the high-water mark of the memory being replaced, which for a program started by
/// posix_spawn/vfork (Foundation's Process, Python's subprocess) is the *parent's*: under
/// `swift test` a render reported the test process's 37–50 MB instead of its own 28.7, and
/// from a 300 MB Python parent 328.7 MB. VmHWM belongs to this program's own memory map.
public struct ProcessUsage: Sendable {
    public var cpuSeconds: Double
    public var peakResidentBytes: Int

    public static func now() -> ProcessUsage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        let peak = peakResidentKilobytes() ?? Int(usage.ru_maxrss)
        return ProcessUsage(cpuSeconds: user + system, peakResidentBytes: peak * 1024)
    }

    /// "VmHWM:   28712 kB" from /proc/self/status, in kB; nil where there is none.
    static func peakResidentKilobytes() -> Int? {
        guard let file = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix("VmHWM:") else { continue }
            return Int(text.dropFirst("VmHWM:".count).filter(\.isNumber))
        }
        return nil
    }
}

/// CPU time used by the calling thread, in seconds. Thread: any.
public func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
