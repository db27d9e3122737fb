/// Runs one unit on its own, outside a graph: for tests and benchmarks of units.
///
/// Owns the unit's parameter bank and buffers; `render` feeds input in blocks of any size
/// and applies parameter changes at exact frames, as the engine would. Allocates freely:
/// never use it on a real-time thread. Thread: one test thread.
public final class UnitHarness {
    public let unit: any RackUnit
    public let type: any UnitType
    public let specs: [ParameterSpec]
    public let sampleRate: Double
    public let maxFrames: Int
    public let inputChannels: [Int]
    public let outputChannels: [Int]
    public private(set) var sampleTime: Int64 = 0
    public var tempo: Double = 120
    /// The source that gives `tempo` (nil: none, as in a rack with no tempo source); the
    /// beat grid starts at frame 0.
    public var tempoSource: TempoSource?
    public var safety = SafetyCounters()
    let bank: ParameterBank
    let inputStorage: BusStorage
    let outputStorage: BusStorage
    let hostStorage: BusStorage
    var inputBuses: [AudioBus] = []
    var outputBuses: [AudioBus] = []
    var pending: [(frame: Int64, parameter: Int, value: Float)] = []
    var pendingMIDI: [(frame: Int64, message: MIDIMessage)] = []

    /// Makes and prepares a unit of `type`. `settings` are as a rack file would give them;
    /// `inputChannels` is what each input bus receives (nil: what the layout asks for).
    public init(
        type: any UnitType, settings: [String: JSONValue] = [:], parameters: [String: Float] = [:],
        sampleRate: Double = 48000, maxFrames: Int = 512, inputChannels: [Int]? = nil, hostInputChannels: Int = 1
    ) throws {
        self.type = type
        self.sampleRate = sampleRate
        self.maxFrames = maxFrames
        let loc = SourceLocation(line: 0, column: 0)
        let unitSettings = UnitSettings(
            members: settings.sorted { $0.key < $1.key }.map {
                JSONMember(key: $0.key, keyLocation: loc, value: JSONNode($0.value, at: loc))
            })
        let problems = type.check(unitSettings)
        if !problems.isEmpty { throw UnitError(problems.map { "\($0.key): \($0.message)" }.joined(separator: "; ")) }
        let context = UnitBuildContext(sampleRate: sampleRate, hostInputChannels: hostInputChannels)
        let layout = type.layout(unitSettings, context)
        let ins = inputChannels ?? layout.inputs.map {
            if case .channels(let c) = $0 { return c }
            return 1
        }
        self.inputChannels = ins
        outputChannels = layout.outputs.map {
            switch $0 {
            case .channels(let c): return c
            case .sameAsInput(let b): return ins.indices.contains(b) ? ins[b] : 1
            }
        }
        specs = type.parameters(unitSettings)
        unit = try type.make(unitSettings, context)
        try unit.prepare(
            PrepareSpec(sampleRate: sampleRate, maxFrames: maxFrames, inputChannels: ins, outputChannels: outputChannels))
        bank = ParameterBank(specs: specs, sampleRate: sampleRate, maxFrames: maxFrames)
        for (id, value) in parameters {
            guard let i = specs.firstIndex(where: { $0.id == id }) else { throw UnitError("no parameter \(id)") }
            bank.setImmediately(i, value)
        }
        inputStorage = BusStorage(bufferCount: max(ins.reduce(0, +), 1), maxFrames: maxFrames)
        outputStorage = BusStorage(bufferCount: max(outputChannels.reduce(0, +), 1), maxFrames: maxFrames)
        hostStorage = BusStorage(bufferCount: hostInputChannels + 2, maxFrames: maxFrames)
        var next = 0
        for c in ins {
            inputBuses.append(inputStorage.bus(first: next, channels: c))
            next += c
        }
        next = 0
        for c in outputChannels {
            outputBuses.append(outputStorage.bus(first: next, channels: c))
            next += c
        }
    }

    /// The index of parameter `id`.
    public func parameterIndex(_ id: String) -> Int {
        guard let i = specs.firstIndex(where: { $0.id == id }) else { preconditionFailure("no parameter \(id)") }
        return i
    }

    /// Sets parameter `id` to `value` at absolute frame `frame` (smoothed as in the engine);
    /// nil means at the next frame rendered.
    public func set(_ id: String, _ value: Float, atFrame frame: Int64? = nil) {
        pending.append((frame ?? sampleTime, parameterIndex(id), value))
        pending.sort { $0.frame < $1.frame }
    }

    /// Sends a MIDI message at absolute frame `frame` (nil: the next frame).
    public func send(_ message: MIDIMessage, atFrame frame: Int64? = nil) {
        pendingMIDI.append((frame ?? sampleTime, message))
        pendingMIDI.sort { $0.frame < $1.frame }
    }

    /// Renders `frames` frames of `input` (one array per channel of input bus 0; missing
    /// or short input is silence) in blocks of `blockSize`; returns each output channel of
    /// output bus 0.
    public func render(input: [[Float]] = [], frames: Int, blockSize: Int? = nil) -> [[Float]] {
        let block = min(blockSize ?? maxFrames, maxFrames)
        let outChannels = outputBuses.first?.channelCount ?? 0
        var out = Array(repeating: [Float](repeating: 0, count: frames), count: outChannels)
        var done = 0
        while done < frames {
            let n = min(block, frames - done)
            for (b, bus) in inputBuses.enumerated() {
                for c in 0..<bus.channelCount {
                    let dst = bus[c]
                    for i in 0..<n {
                        let src = b == 0 && c < input.count ? input[c] : []
                        dst[i] = done + i < src.count ? src[done + i] : 0
                    }
                }
            }
            renderBlock(frames: n)
            if let bus = outputBuses.first {
                for c in 0..<bus.channelCount {
                    for i in 0..<n { out[c][done + i] = bus[c][i] }
                }
            }
            done += n
        }
        return out
    }

    /// The buses the next block reads (fill them before `renderBlock`).
    public var inputs: [AudioBus] { inputBuses }
    /// The buses the last block wrote.
    public var outputs: [AudioBus] { outputBuses }

    /// Renders one block from whatever `inputs` hold.
    public func renderBlock(frames n: Int) {
        precondition(n <= maxFrames)
        let end = sampleTime + Int64(n)
        bank.beginBlock()
        while let p = pending.first, p.frame < end {
            bank.fill(upTo: max(0, Int(p.frame - sampleTime)))
            bank.setTarget(p.parameter, p.value)
            pending.removeFirst()
        }
        bank.fill(upTo: n)
        var events: [UnitEvent] = []
        while let m = pendingMIDI.first, m.frame < end {
            events.append(UnitEvent(frameOffset: Int32(max(0, m.frame - sampleTime)), message: m.message))
            pendingMIDI.removeFirst()
        }
        withUnsafeMutablePointer(to: &safety) { safetyPointer in
            inputBuses.withUnsafeBufferPointer { ins in
                outputBuses.withUnsafeBufferPointer { outs in
                    events.withUnsafeBufferPointer { ev in
                        unit.render(
                            RenderContext(
                                frameCount: n, sampleTime: sampleTime, sampleRate: sampleRate, tempo: tempo, inputs: ins,
                                outputs: outs, parameters: bank.renderValues, events: ev,
                                hostInput: hostStorage.bus(first: 0, channels: hostStorage.bufferCount - 2),
                                hostOutput: hostStorage.bus(first: hostStorage.bufferCount - 2, channels: 2),
                                safety: safetyPointer, tempoSource: tempoSource,
                                beatPosition: Double(sampleTime) * tempo / (60 * sampleRate)))
                    }
                }
            }
        }
        sampleTime = end
    }

    /// Clears the unit's state and starts again at frame 0 (parameters keep their values).
    public func reset() {
        unit.reset()
        sampleTime = 0
        pending.removeAll()
        pendingMIDI.removeAll()
    }
}
