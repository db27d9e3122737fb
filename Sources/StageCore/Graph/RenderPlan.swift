import Synchronization

/// How an input bus is fed when the source's channel count differs from what it takes.
@frozen
public enum ChannelAdapter: UInt8, Sendable, BitwiseCopyable {
    /// Mono source into a stereo bus: the channel is copied to both.
    case monoToStereo
    /// Stereo source into a mono bus: the average of the two channels.
    case stereoToMono
}

/// One adaptation done before a step renders.
public struct AdapterStep: @unchecked Sendable {
    public var kind: ChannelAdapter
    public var source: AudioBus
    public var destination: AudioBus
}

/// One unit's turn in the plan: what it reads and writes.
public struct PlanStep: @unchecked Sendable {
    /// Index into `RenderPlan.units`.
    public var unit: Int
    public var inputs: UnsafeBufferPointer<AudioBus>
    public var outputs: UnsafeBufferPointer<AudioBus>
    public var adapters: UnsafeBufferPointer<AdapterStep>
    /// The host output as this step sees it: an output unit's own device channels.
    public var hostOutput: AudioBus
}

/// A compiled rack: units made and prepared, in render order, with every buffer assigned.
/// Immutable once built; rendered by one `RenderEngine` at a time.
///
/// Thread: built on the control thread; rendered on the render thread; released on the
/// control thread (the render thread hands it back, never frees it).
public final class RenderPlan: @unchecked Sendable {
    /// A number no other plan of this process has: events name the plan they were mapped for.
    public let generation: UInt32 = RenderPlan.nextGeneration.add(1, ordering: .relaxed).newValue
    static let nextGeneration = Atomic<UInt32>(0)
    public let rack: RackDescription
    public let sampleRate: Double
    public let maxFrames: Int
    /// Unit ids in `units` order (rack order, without units that cannot be heard).
    public let unitIDs: [String]
    public let unitTypes: [String]
    public let units: [any RackUnit]
    public let parameters: [ParameterBank]
    /// Render order.
    public let steps: UnsafeBufferPointer<PlanStep>
    /// Units that receive notes and unmapped controller messages.
    public let midiReceivers: [Int]
    public let hostInput: AudioBus
    /// Every device channel any output plays on (`outputChannelCount` wide, at least 2);
    /// channels no output names stay silent.
    public let hostOutput: AudioBus
    /// The output units, in rack order: the first is the main output.
    public let outputs: [PlanOutput]
    /// Playback channels the rack needs (the highest output channel, at least 2).
    public var outputChannelCount: Int { hostOutput.channelCount }
    /// Whether any unit reads the host input (live audio opens capture only then).
    public let usesHostInput: Bool
    /// The largest latency along any path to any output, in frames.
    public let latencyFrames: Int
    /// The longest tail along any path to any output, in seconds.
    public let tailSeconds: Double
    /// Things worth telling the user that do not stop the rack (unheard units).
    public let warnings: [String]

    // Memory kept alive for the steps.
    let storage: BusStorage
    let tables: ChannelTable
    let busArrays: UnsafeMutableBufferPointer<AudioBus>
    let adapterArrays: UnsafeMutableBufferPointer<AdapterStep>
    let stepArray: UnsafeMutableBufferPointer<PlanStep>

    init(
        rack: RackDescription, sampleRate: Double, maxFrames: Int, unitIDs: [String], unitTypes: [String],
        units: [any RackUnit], parameters: [ParameterBank], midiReceivers: [Int], hostInput: AudioBus,
        hostOutput: AudioBus, outputs: [PlanOutput], usesHostInput: Bool, latencyFrames: Int, tailSeconds: Double, warnings: [String],
        storage: BusStorage, tables: ChannelTable, busArrays: UnsafeMutableBufferPointer<AudioBus>,
        adapterArrays: UnsafeMutableBufferPointer<AdapterStep>, stepArray: UnsafeMutableBufferPointer<PlanStep>
    ) {
        self.rack = rack
        self.sampleRate = sampleRate
        self.maxFrames = maxFrames
        self.unitIDs = unitIDs
        self.unitTypes = unitTypes
        self.units = units
        self.parameters = parameters
        self.midiReceivers = midiReceivers
        self.hostInput = hostInput
        self.hostOutput = hostOutput
        self.outputs = outputs
        self.usesHostInput = usesHostInput
        self.latencyFrames = latencyFrames
        self.tailSeconds = tailSeconds
        self.warnings = warnings
        self.storage = storage
        self.tables = tables
        self.busArrays = busArrays
        self.adapterArrays = adapterArrays
        self.stepArray = stepArray
        self.steps = UnsafeBufferPointer(stepArray)
    }

    deinit {
        busArrays.deallocate()
        adapterArrays.deallocate()
        stepArray.deallocate()
    }

    /// The unit with this id, if it is in the plan.
    public func unitIndex(_ id: String) -> Int? { unitIDs.firstIndex(of: id) }

    /// Resolves `unit.param`. Thread: any.
    public func address(of target: String) -> ParameterAddress? {
        let parts = target.split(separator: ".")
        guard parts.count == 2, let u = unitIndex(String(parts[0])) else { return nil }
        guard let p = parameters[u].specs.firstIndex(where: { $0.id == parts[1] }) else { return nil }
        return ParameterAddress(unit: u, parameter: p)
    }

    public func spec(_ address: ParameterAddress) -> ParameterSpec {
        parameters[address.unit].specs[address.parameter]
    }

    /// Clears every unit's state. Thread: control while not rendering, or render.
    public func resetUnits() {
        for u in units { u.reset() }
    }

    /// The channel buffer count the plan allocated (for tests of buffer reuse).
    public var bufferCount: Int { storage.bufferCount }
}
