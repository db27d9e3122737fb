import CLV2Host
import CLilv
import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// One instance of an LV2 plugin in a rack.
///
/// `prepare` (control thread) instantiates the plugin with the host's features
/// (`LV2FeatureList`), connects every port (control ports to floats the unit owns, atom
/// ports to sequence buffers, CV ports to silence or scratch) and activates it. `render`
/// (render thread) only writes control values, fills the atom inputs and calls `run`: it
/// splits the block at every frame where a parameter changes, so a change lands at its
/// frame; MIDI events go into the plugin's MIDI atom input at their frames. `deinit`
/// (control thread: the render thread hands units back) deactivates and frees it.
public final class LV2Unit: RackUnit, UnitReadout, UnitSavedState, @unchecked Sendable {
    public let info: LV2PluginInfo
    let world: LV2World
    private var instance: UnsafeMutablePointer<LilvInstance>?
    private var features: LV2FeatureList?
    private var handle: LV2_Handle?
    private var runFunction: (@convention(c) (LV2_Handle?, UInt32) -> Void)?
    private var connectFunction: (@convention(c) (LV2_Handle?, UInt32, UnsafeMutableRawPointer?) -> Void)?
    private var active = false

    private var controls: UnsafeMutablePointer<Float>
    private var mappings: UnsafeMutablePointer<LV2Parameters.PortMapping>
    private let parameterCount: Int
    private var silence: UnsafeMutablePointer<Float>?
    private var scratch: UnsafeMutablePointer<Float>?
    private var atomBuffers: [UnsafeMutableRawPointer] = []
    /// Atom input port indices, their buffers, and whether each takes MIDI (plain memory).
    private var atomInputs: UnsafeMutablePointer<(port: Int, buffer: UnsafeMutableRawPointer, midi: Bool)>?
    private var atomInputCount = 0
    private var atomOutputs: UnsafeMutablePointer<UnsafeMutableRawPointer>?
    private var atomOutputCount = 0
    private var atomCapacity: UInt32 = 0
    private var audioIn: UnsafeMutablePointer<Int>
    private var audioOut: UnsafeMutablePointer<Int>
    private let audioInCount: Int
    private let audioOutCount: Int
    private let urids: (sequence: UInt32, chunk: UInt32, midi: UInt32)
    /// The notes passed to the plugin's MIDI input (channel and keys, as the synth's); other
    /// channel messages pass when their channel does.
    private let notes: NoteFilter
    /// The notes moved by the unit's `transpose` (`LV2NoteTransposer`).
    private let noteMover: LV2NoteTransposer
    /// The control outputs shown as readouts.
    let shownOutputs: [LV2Port]
    /// What `prepare` restores after activating: the rack's preset, then its state.
    let startingState: LV2StartingState
    /// False for offline renders: the worker runs synchronously (see `LV2Worker`).
    let realTime: Bool
    /// Whether `prepare` settles the worker (see `LV2UnitType.settleWorkAtLoad`).
    let settleWorkAtLoad: Bool
    private var worker: LV2Worker?
    private var stateInterface: UnsafePointer<LV2_State_Interface>?
    /// The latency port's value after the probe run in `prepare` (frames).
    private var probedLatency = 0

    /// Frames between port updates of a parameter the rack smooths (`smooth`).
    public static let smoothingStep = 16

    /// Thread: control. The plugin is instantiated in `prepare`. `smoothed`: the symbols of
    /// the parameters the engine ramps (the rack's `smooth`).
    init(
        info: LV2PluginInfo, world: LV2World, smoothed: Set<String> = [], notes: NoteFilter = NoteFilter(),
        startingState: LV2StartingState = LV2StartingState(), realTime: Bool = true, settleWorkAtLoad: Bool = true,
        meters: [String]? = nil, transpose: Int = 0
    ) {
        self.settleWorkAtLoad = settleWorkAtLoad
        shownOutputs = info.controlOutputs.filter { p in
            meters.map { $0.contains(p.symbol) } ?? (p.index != info.latencyPort)
        }
        self.info = info
        self.startingState = startingState
        self.realTime = realTime
        self.notes = notes
        noteMover = LV2NoteTransposer(transpose: transpose, channel: notes.channel)
        self.world = world
        controls = .allocate(capacity: max(info.ports.count, 1))
        controls.initialize(repeating: 0, count: max(info.ports.count, 1))
        for p in info.ports where p.kind == .controlInput || p.kind == .controlOutput { controls[p.index] = p.defaultValue }
        let inputs = info.controlInputs
        parameterCount = inputs.count
        mappings = .allocate(capacity: max(inputs.count, 1))
        for (i, p) in inputs.enumerated() {
            var m = LV2Parameters.PortMapping(p)
            m.smoothed = smoothed.contains(p.symbol)
            (mappings + i).initialize(to: m)
        }
        audioInCount = info.audioInputs.count
        audioOutCount = info.audioOutputs.count
        audioIn = .allocate(capacity: max(audioInCount, 1))
        audioOut = .allocate(capacity: max(audioOutCount, 1))
        for (i, p) in info.audioInputs.enumerated() { audioIn[i] = p.index }
        for (i, p) in info.audioOutputs.enumerated() { audioOut[i] = p.index }
        urids = (stage_lv2_map(LV2URI.atomSequence), stage_lv2_map(LV2URI.atomChunk), stage_lv2_map(LV2URI.midiEvent))
    }

    deinit {
        worker?.stop()
        if let instance {
            if active { lilv_instance_deactivate(instance) }
            world.free(instance)
        }
        for i in 0..<parameterCount { mappings[i].release() }
        mappings.deallocate()
        controls.deallocate()
        audioIn.deallocate()
        audioOut.deallocate()
        silence?.deallocate()
        scratch?.deallocate()
        atomInputs?.deallocate()
        atomOutputs?.deallocate()
        for b in atomBuffers { b.deallocate() }
    }

    /// Instantiates, connects and activates the plugin. Thread: control.
    public func prepare(_ spec: PrepareSpec) throws {
        let frames = max(spec.maxFrames, 1)
        let bytes = info.ports.map(\.minimumSize).reduce(LV2Host.atomBufferBytes, max)
        atomCapacity = UInt32((bytes + 7) & ~7)
        let worker = info.usesWorker ? try LV2Worker() : nil
        let list = LV2FeatureList(
            pluginName: info.name, sampleRate: spec.sampleRate, maxFrames: frames, sequenceBytes: Int(atomCapacity),
            worker: worker?.feature)
        guard let made = world.instantiate(info.uri, sampleRate: spec.sampleRate, features: list.list) else {
            throw UnitError(
                "lv2: \(info.uri) failed to instantiate (lilv_plugin_instantiate returned NULL; "
                    + "library \(info.libraryPath)\(access(info.libraryPath, R_OK) == 0 ? "" : ", which cannot be read"))")
        }
        features = list
        instance = made
        handle = made.pointee.lv2_handle
        runFunction = made.pointee.lv2_descriptor.pointee.run
        connectFunction = made.pointee.lv2_descriptor.pointee.connect_port
        silence = .allocate(capacity: frames)
        silence!.initialize(repeating: 0, count: frames)
        scratch = .allocate(capacity: frames)
        scratch!.initialize(repeating: 0, count: frames)
        self.worker = worker
        if let worker, let iface = lilv_instance_get_extension_data(made, LV2URI.workerInterface) {
            worker.attach(iface.assumingMemoryBound(to: LV2_Worker_Interface.self), instance: handle)
        }
        stateInterface = lilv_instance_get_extension_data(made, LV2URI.stateInterface)?
            .assumingMemoryBound(to: LV2_State_Interface.self)
        connectFixedPorts()
        lilv_instance_activate(made)
        active = true
        try restoreStartingState(made, list)
        if settleWorkAtLoad { worker?.settle() }
        if info.latencyPort != nil { probeLatency(frames: frames) }
        try worker?.start(realTime: realTime)
        list.log.pointee.realtime = 1
    }

    /// The rack's preset (lilv restores its state), then the rack's `state`, through the
    /// plugin's `restore`; work they schedule waits for `settle`. Thread: control.
    private func restoreStartingState(_ made: UnsafeMutablePointer<LilvInstance>, _ list: LV2FeatureList) throws {
        if let preset = startingState.presetURI {
            try world.restorePreset(preset, into: made, features: list.stateList)
        }
        guard let state = startingState.state, !state.properties.isEmpty else { return }
        guard let iface = stateInterface, iface.pointee.restore != nil else {
            throw UnitError("lv2: \(info.uri) has no state:interface: its \"state\" cannot be restored")
        }
        var raw = stage_lv2_state()
        defer { stage_lv2_state_clear(&raw) }
        try state.fill(&raw, directory: startingState.directory)
        let status = stage_lv2_state_restore(iface, handle, &raw, list.stateList)
        if status != 0 {
            throw UnitError("lv2: \(info.uri) refused its \"state\" (\(LV2StateStatus.describe(status)))")
        }
    }

    /// The plugin's state now (its `save`), for the rack file. May run while the unit
    /// renders (the spec allows `save` beside `run`). Thread: control.
    public func saveState() throws -> LV2State {
        guard let iface = stateInterface, iface.pointee.save != nil, let features else { return LV2State() }
        var raw = stage_lv2_state()
        defer { stage_lv2_state_clear(&raw) }
        let status = stage_lv2_state_save(iface, handle, &raw, features.stateList)
        if status != 0 { throw UnitError("lv2: \(info.uri) could not save its state (\(LV2StateStatus.describe(status)))") }
        return LV2State(raw)
    }

    /// The `"state"` for the rack file ("save" from the remote page), nil for a plugin
    /// without `state:interface` or with nothing to keep. Thread: control.
    public func savedStateJSON() throws -> String? {
        let state = try saveState()
        return state.properties.isEmpty ? nil : state.json()
    }

    /// Runs one block of silence so that the plugin writes its latency port (plugins report
    /// latency from run()). Thread: control, before the first render.
    private func probeLatency(frames: Int) {
        for i in 0..<atomInputCount { stage_lv2_sequence_clear(atomInputs![i].buffer, urids.sequence) }
        for i in 0..<atomOutputCount { stage_lv2_output_prepare(atomOutputs![i], atomCapacity, urids.chunk) }
        for i in 0..<audioInCount { connect(audioIn[i], UnsafeMutableRawPointer(silence!)) }
        for i in 0..<audioOutCount { connect(audioOut[i], UnsafeMutableRawPointer(scratch!)) }
        runFunction?(handle, UInt32(frames))
        if settleWorkAtLoad { worker?.settle() }
        if let p = info.latencyPort { probedLatency = max(0, Int(controls[p].rounded())) }
        silence!.update(repeating: 0, count: frames)
    }

    /// The plugin's latency (its `lv2:reportsLatency` port, read at load), frames.
    /// Thread: any, after prepare.
    public var latencyFrames: Int { probedLatency }

    /// Work the plugin's worker did and responses delivered (tests, status). Thread: any.
    public var workerCounts: (works: UInt64, responses: UInt64, dropped: UInt64)? {
        worker.map { ($0.worksDone, $0.responsesDelivered, $0.dropped) }
    }

    /// Connects the ports that keep one buffer: control, atom, CV. Thread: control.
    private func connectFixedPorts() {
        var inputs: [(port: Int, buffer: UnsafeMutableRawPointer, midi: Bool)] = []
        var outputs: [UnsafeMutableRawPointer] = []
        for p in info.ports {
            switch p.kind {
            case .controlInput, .controlOutput:
                connect(p.index, UnsafeMutableRawPointer(controls + p.index))
            case .atomInput(let midi):
                let b = newAtomBuffer()
                stage_lv2_sequence_clear(b, urids.sequence)
                inputs.append((p.index, b, midi))
                connect(p.index, b)
            case .atomOutput:
                let b = newAtomBuffer()
                stage_lv2_output_prepare(b, atomCapacity, urids.chunk)
                outputs.append(b)
                connect(p.index, b)
            case .cvInput:
                connect(p.index, UnsafeMutableRawPointer(silence!))
            case .cvOutput:
                connect(p.index, UnsafeMutableRawPointer(scratch!))
            case .audioInput, .audioOutput:
                break  // connected at each run, to the block's buses
            case .unknown:
                connect(p.index, nil)  // lv2:connectionOptional (others were refused)
            }
        }
        atomInputCount = inputs.count
        atomInputs = .allocate(capacity: max(inputs.count, 1))
        for (i, a) in inputs.enumerated() { (atomInputs! + i).initialize(to: a) }
        atomOutputCount = outputs.count
        atomOutputs = .allocate(capacity: max(outputs.count, 1))
        for (i, b) in outputs.enumerated() { (atomOutputs! + i).initialize(to: b) }
    }

    private func newAtomBuffer() -> UnsafeMutableRawPointer {
        let b = UnsafeMutableRawPointer.allocate(byteCount: Int(atomCapacity), alignment: 16)
        b.initializeMemory(as: UInt8.self, repeating: 0, count: Int(atomCapacity))
        atomBuffers.append(b)
        return b
    }

    @inline(__always)
    private func connect(_ port: Int, _ data: UnsafeMutableRawPointer?) {
        connectFunction?(handle, UInt32(port), data)
    }

    /// Runs the plugin over the block, split at the frames where a parameter changes.
    /// Thread: render.
    public func render(_ context: RenderContext) {
        let n = context.frameCount
        guard let run = runFunction, n > 0 else {
            for o in context.outputs { o.clear(frames: n) }
            return
        }
        var start = 0
        var nextEvent = 0
        while start < n {
            let end = writeControls(context.parameters, from: start, to: n)
            nextEvent = fillAtomInputs(context.events, from: nextEvent, start: start, end: end, blockEnd: n)
            for i in 0..<atomOutputCount { stage_lv2_output_prepare(atomOutputs![i], atomCapacity, urids.chunk) }
            connectAudio(context, offset: start)
            run(handle, UInt32(end - start))
            worker?.deliver()
            start = end
        }
    }

    /// Writes every control input's value at frame `start` and returns the first later
    /// frame (≤ `limit`) where a parameter changes (for a smoothed parameter that is
    /// ramping, `smoothingStep` frames later). Thread: render.
    @inline(__always)
    private func writeControls(_ values: ParameterValues, from start: Int, to limit: Int) -> Int {
        var end = limit
        for k in 0..<parameterCount {
            let v = values[k]
            let first = v[start]
            let m = mappings[k]
            controls[m.portIndex] = LV2Parameters.portValue(first, m)
            if !values.isSteady(k) {
                var f = start + 1
                while f < end && v[f] == first { f += 1 }
                // A ramp (changing at the next frame) holds for `smoothingStep` frames.
                end = m.smoothed && f == start + 1 ? min(end, start + Self.smoothingStep) : f
            }
        }
        return end
    }

    /// Empties each atom input and puts the block's MIDI events in `start..<end` into the
    /// MIDI inputs, at frames relative to `start` (events at or past the block's end go into
    /// its last run). Returns the index of the first event not yet sent. Thread: render.
    @inline(__always)
    private func fillAtomInputs(
        _ events: UnsafeBufferPointer<UnitEvent>, from first: Int, start: Int, end: Int, blockEnd: Int
    ) -> Int {
        var last = first
        while last < events.count && (Int(events[last].frameOffset) < end || end == blockEnd) { last += 1 }
        var midiInputs = 0
        for i in 0..<atomInputCount {
            stage_lv2_sequence_clear(atomInputs![i].buffer, urids.sequence)
            if atomInputs![i].midi { midiInputs += 1 }
        }
        guard midiInputs > 0 else { return last }
        for e in first..<last {
            let message = events[e].message
            if !passes(message) { continue }
            let frame = min(max(Int(events[e].frameOffset) - start, 0), end - start - 1)
            // Each message once through the transposer (it remembers the notes sounding).
            noteMover.route(message) { moved in
                for i in 0..<atomInputCount where atomInputs![i].midi { appendMIDI(moved, at: frame, to: atomInputs![i].buffer) }
            }
        }
        return last
    }

    /// Whether the plugin's MIDI input gets `m`: notes by channel and key (`notes`), other
    /// channel messages by channel, system messages always. Thread: render.
    @inline(__always)
    private func passes(_ m: MIDIMessage) -> Bool {
        switch m.kind {
        case .system: return true
        case .noteOn, .noteOff, .polyPressure: return notes.takes(channel: m.channel, key: Int(m.data1))
        default: return notes.channel == nil || notes.channel == m.channel
        }
    }

    @inline(__always)
    private func appendMIDI(_ m: MIDIMessage, at frame: Int, to buffer: UnsafeMutableRawPointer) {
        let length: UInt32
        switch m.kind {
        case .programChange, .channelPressure: length = 2
        case .system: length = m.isRealTime ? 1 : 0
        default: length = 3
        }
        guard length > 0 else { return }
        var bytes = (m.status, m.data1, m.data2)
        withUnsafeBytes(of: &bytes) { raw in
            _ = stage_lv2_sequence_append(
                buffer, atomCapacity, Int64(frame), urids.midi, raw.baseAddress!.assumingMemoryBound(to: UInt8.self),
                length)
        }
    }

    /// Connects the audio ports to the buses, `offset` frames in. Thread: render.
    @inline(__always)
    private func connectAudio(_ context: RenderContext, offset: Int) {
        let input = context.inputs.first
        for i in 0..<audioInCount {
            let p: UnsafeMutablePointer<Float> =
                if let input, i < input.channelCount { input[i] } else { silence! }
            connect(audioIn[i], UnsafeMutableRawPointer(p + offset))
        }
        let output = context.outputs.first
        for i in 0..<audioOutCount {
            let p: UnsafeMutablePointer<Float> =
                if let output, i < output.channelCount { output[i] } else { scratch! }
            connect(audioOut[i], UnsafeMutableRawPointer(p + offset))
        }
    }

    /// Clears the plugin's state the LV2 way: `deactivate` then `activate` (the plugin
    /// resets its buffers), and empties the atom ports. LV2 puts activate/deactivate in the
    /// instantiation class, never on the audio thread (`resetsOnRenderThread` is false): the
    /// engine calls `reset` on the control thread only: after the warm-up block of every
    /// rack loaded (`RenderEngine.warmUp`), and after a panic, while the render thread
    /// keeps the unit parked (`RenderEngine.resetParkedUnits`). Thread: control, while the
    /// unit is not rendering.
    public var resetsOnRenderThread: Bool { false }

    public func reset() {
        guard let instance, active else { return }
        lilv_instance_deactivate(instance)
        lilv_instance_activate(instance)
        for i in 0..<atomInputCount { stage_lv2_sequence_clear(atomInputs![i].buffer, urids.sequence) }
        noteMover.clear()
    }

    /// The latest value of control output port `symbol` (meters, latency), nil when the
    /// plugin has none. A float read while the render thread may write it: a meter's
    /// reading, never torn on the machines StageRack runs on. Thread: any, after prepare.
    public func outputValue(_ symbol: String) -> Float? {
        guard let p = info.controlOutputs.first(where: { $0.symbol == symbol }) else { return nil }
        return controls[p.index]
    }

    /// The control output ports the rack shows (`--meters`, `--status`): its `"meters"`
    /// setting's, else every one but the latency port. Thread: any (not render).
    public var readouts: [(name: String, value: Float)] {
        shownOutputs.map { ($0.symbol, controls[$0.index]) }
    }

    /// The log messages the plugin wrote while rendering (counted, not printed). Thread: any.
    public var messagesWhileRendering: UInt64 { features?.log.pointee.messages_while_rendering ?? 0 }
}

/// The song's transpose moves an LV2 instrument's notes as the synth's (`SongTranspose`,
/// `LV2NoteTransposer`). Thread: `transpose` any.
extension LV2Unit: UnitTransposing {
    public var transpose: Int {
        get { noteMover.transpose }
        set { noteMover.transpose = newValue }
    }
}
