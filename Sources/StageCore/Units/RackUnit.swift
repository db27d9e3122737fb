/// What a unit learns before it renders: sizes that let it allocate everything up front.
public struct PrepareSpec: Sendable, Equatable {
    public var sampleRate: Double
    /// The largest block `render` will be asked for.
    public var maxFrames: Int
    /// Channels of each input bus, in bus order.
    public var inputChannels: [Int]
    /// Channels of each output bus, in bus order.
    public var outputChannels: [Int]

    public init(sampleRate: Double, maxFrames: Int, inputChannels: [Int], outputChannels: [Int]) {
        self.sampleRate = sampleRate
        self.maxFrames = maxFrames
        self.inputChannels = inputChannels
        self.outputChannels = outputChannels
    }
}

/// A MIDI message for a unit, at a frame offset within the current block.
public struct UnitEvent: Sendable, Equatable, BitwiseCopyable {
    public var frameOffset: Int32
    public var message: MIDIMessage

    public init(frameOffset: Int32, message: MIDIMessage) {
        self.frameOffset = frameOffset
        self.message = message
    }
}

/// The smoothed values of a unit's parameters for the current block.
///
/// `self[i]` points at `frameCount` per-sample values of parameter i (declaration order).
/// When `isSteady(i)` the values are all equal to `value(i)`, so a unit may compute its
/// coefficients once per block. Thread: render.
public struct ParameterValues: @unchecked Sendable {
    let base: UnsafeMutablePointer<Float>
    let steady: UnsafePointer<Bool>
    let stride: Int
    public let count: Int

    public init(base: UnsafeMutablePointer<Float>, steady: UnsafePointer<Bool>, stride: Int, count: Int) {
        self.base = base
        self.steady = steady
        self.stride = stride
        self.count = count
    }

    @inline(__always)
    public subscript(index: Int) -> UnsafePointer<Float> { UnsafePointer(base + index * stride) }

    /// The value at the first frame of the block.
    @inline(__always)
    public func value(_ index: Int) -> Float { base[index * stride] }

    /// True when the parameter holds one value over the whole block.
    @inline(__always)
    public func isSteady(_ index: Int) -> Bool { steady[index] }
}

/// Everything a unit reads and writes in one call of `render`. Thread: render.
public struct RenderContext: @unchecked Sendable {
    public var frameCount: Int
    /// Frames rendered since the engine started or was reset: the absolute time of frame 0.
    public var sampleTime: Int64
    public var sampleRate: Double
    /// The rack's tempo in beats per minute (`TempoSources`: clock, tap, song, first loop).
    public var tempo: Double
    /// Read-only: the unit must not write its inputs (they may be another unit's outputs).
    public var inputs: UnsafeBufferPointer<AudioBus>
    public var outputs: UnsafeBufferPointer<AudioBus>
    public var parameters: ParameterValues
    /// MIDI for this unit in this block, ordered by frame offset.
    public var events: UnsafeBufferPointer<UnitEvent>
    /// The engine's external input (the microphone, or the `--input` file offline).
    public var hostInput: AudioBus
    /// The engine's external output (the sound card, or the output file offline): for an
    /// output unit, its own channels of it (`RenderPlan.outputs`).
    public var hostOutput: AudioBus
    /// Counters the output stage writes to (NaN replaced, samples limited).
    public var safety: UnsafeMutablePointer<SafetyCounters>
    /// Which source decides `tempo` (nil: none does; the tempo is 120 BPM).
    public var tempoSource: TempoSource?
    /// Beats of the rack's grid at frame 0 (from the rack's first frame, at `tempo`):
    /// beat n starts where this crosses n (the looper quantises to it).
    public var beatPosition: Double
    /// The song's beats that start in this call, in order, at their absolute frames
    /// (`SongClock`: the click plays them); empty when the rack has no song clock.
    public var songBeats = UnsafeBufferPointer<SongBeat>(start: nil, count: 0)
    /// The song's spoken cues that start in this call, in order, at their absolute frames
    /// (`SongClock`: the click speaks them); empty when the rack has no song clock.
    public var songCues = UnsafeBufferPointer<SongCue>(start: nil, count: 0)

    /// Per input bus: true when the engine knows the bus is silent for this call (every
    /// sample at or below the silence floor, −120 dBFS): its source's "output is silence"
    /// flag, as Apple's render flag. nil when the engine tracks no silence. (EngineSilence)
    public var inputSilence: UnsafePointer<Bool>? = nil
    /// A unit that wrote only zeros to all its outputs may set `pointee = true` (Apple's
    /// kAudioUnitRenderAction_OutputIsSilence); otherwise the engine checks the buffers
    /// itself where a consumer cares. nil when the engine tracks no silence.
    public var outputSilence: UnsafeMutablePointer<Bool>? = nil

    /// Whether input bus `bus` is known to be silent in this call. Thread: render.
    @inline(__always)
    public func isInputSilent(_ bus: Int) -> Bool { inputSilence?[bus] ?? false }

    /// Says that every output bus holds only zeros in this call. Thread: render.
    @inline(__always)
    public func markOutputSilent() { outputSilence?.pointee = true }

    public init(
        frameCount: Int, sampleTime: Int64, sampleRate: Double, tempo: Double, inputs: UnsafeBufferPointer<AudioBus>,
        outputs: UnsafeBufferPointer<AudioBus>, parameters: ParameterValues, events: UnsafeBufferPointer<UnitEvent>,
        hostInput: AudioBus, hostOutput: AudioBus, safety: UnsafeMutablePointer<SafetyCounters>,
        tempoSource: TempoSource? = nil, beatPosition: Double = 0
    ) {
        self.tempoSource = tempoSource
        self.beatPosition = beatPosition
        self.frameCount = frameCount
        self.sampleTime = sampleTime
        self.sampleRate = sampleRate
        self.tempo = tempo
        self.inputs = inputs
        self.outputs = outputs
        self.parameters = parameters
        self.events = events
        self.hostInput = hostInput
        self.hostOutput = hostOutput
        self.safety = safety
    }
}

/// Counts of what the output safety stage had to fix. Thread: render writes, others read
/// after rendering (offline) or through the engine's published copy (live).
public struct SafetyCounters: Sendable, Equatable {
    /// Samples that were NaN or infinite and became silence.
    public var nonFiniteSamples: Int = 0
    /// Samples whose level the limiter reduced.
    public var limitedSamples: Int = 0
    public init() {}
}

/// The contract every unit implements: a node of the graph with buses and parameters.
///
/// `prepare` may allocate and throw; `render` never allocates, locks, logs or calls
/// Foundation; `reset` clears state without allocating. Parameters are declared by the
/// unit's `UnitType` and smoothed by the engine; the unit reads `context.parameters`.
public protocol RackUnit: AnyObject {
    /// Sizes all memory. Thread: control. Called once before the first render.
    func prepare(_ spec: PrepareSpec) throws

    /// Renders one block of `context.frameCount` ≤ `maxFrames` frames. Thread: render.
    func render(_ context: RenderContext)

    /// Clears tails and delay lines so that the next render starts from silence, without
    /// allocating. Thread: render when `resetsOnRenderThread`, else control while the unit
    /// is not rendering.
    func reset()

    /// Whether `reset` may run on the render thread: it allocates nothing, takes no lock and
    /// calls nothing a C API keeps off the audio thread. True by default; false for LV2
    /// plugins (their reset is `deactivate`/`activate`, which LV2 puts in the instantiation
    /// class). A panic on the render thread parks such a unit (its outputs silent) until the
    /// control thread has reset it (`RenderEngine.resetParkedUnits`). Thread: any.
    var resetsOnRenderThread: Bool { get }

    /// Frames by which the unit delays its input (the pitch unit has some; most have 0).
    /// Thread: any, after prepare.
    var latencyFrames: Int { get }

    /// How long the unit keeps sounding after its input falls silent (reverb tails,
    /// delay repeats), in seconds. Thread: any, after prepare.
    var tailSeconds: Double { get }

    /// How long the output may stay silent while something the unit took in is still to
    /// come out (a delay's longest tap, a pitch shifter's buffer), in frames: a unit that
    /// sleeps on silence (`UnitSilence.sleepsWhenSilent`) sleeps only after its inputs and
    /// its output have been silent for longer than this. Thread: render.
    func silenceHoldFrames(sampleRate: Double) -> Int

    /// The thread that renders the unit is about to change: the next thread that renders it
    /// takes over the render side of the unit's own queues (`SPSCQueue.handOverConsumer`/
    /// `handOverProducer`). Called after `RenderEngine.warmUp` rendered a block on the
    /// control thread, before the engine goes to the render thread. Units without queues
    /// have nothing to do (the default). Thread: control, while nothing renders the unit.
    func handOverRenderThread()
}

extension RackUnit {
    public var resetsOnRenderThread: Bool { true }
    public var latencyFrames: Int { 0 }
    public var tailSeconds: Double { 0 }
    /// Twice the latency plus the tail: safe for any unit (EngineSilence).
    public func silenceHoldFrames(sampleRate: Double) -> Int {
        2 * latencyFrames + Int(min(tailSeconds, 60) * sampleRate)
    }
    public func handOverRenderThread() {}
}

/// A unit's failure to prepare or to be made, with a message for the performer.
public struct UnitError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
