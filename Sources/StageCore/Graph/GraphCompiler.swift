/// Turns a rack description into a `RenderPlan`: checks the graph, orders it, makes and
/// prepares the units, and assigns (and reuses) buffers. Thread: control, never render.
public struct GraphCompiler {
    public struct Options: Sendable {
        public var sampleRate: Double
        public var maxFrames: Int
        /// Channels of the host input (microphone or `--input` file).
        public var hostInputChannels: Int
        /// False for offline renders (`UnitBuildContext.realTime`).
        public var realTime: Bool
        /// Every song transposable live, whatever it maps (`SongTimeline.transposable`):
        /// a box in sync takes its leader's transpose (`play --sync`).
        public var transposesEverySong = false
        /// The band's leader (`play --sync leader`): its live transposes are held for a bar
        /// line and published with it (`SongTimeline.leadsBand`, `SongTranspose`).
        public var leadsBand = false
        public init(sampleRate: Double = 48000, maxFrames: Int = 512, hostInputChannels: Int = 1, realTime: Bool = true) {
            self.sampleRate = sampleRate
            self.maxFrames = maxFrames
            self.hostInputChannels = hostInputChannels
            self.realTime = realTime
        }
    }

    public let registry: UnitRegistry
    public init(registry: UnitRegistry) { self.registry = registry }

    /// The graph checks alone: every error with the units it names. Units are not made.
    public func check(_ rack: RackDescription) -> [RackDiagnostic] {
        var d: [RackDiagnostic] = []
        _ = analyse(rack, &d)
        return d
    }

    struct Node {
        var id: String
        var type: any UnitType
        var description: UnitDescription
        var layout: BusLayout
        /// Source node of each input bus.
        var sources: [Int?]
    }

    /// Builds the graph, reporting errors; returns the nodes and render order (node indices).
    private func analyse(_ rack: RackDescription, _ d: inout [RackDiagnostic], hostInputChannels: Int = 1)
        -> (nodes: [Node], order: [Int], outputs: [Int], channels: [Int: [Int]])?
    {
        var reported = Set(d)
        func report(_ loc: SourceLocation?, _ path: String, _ msg: String) {
            let diagnostic = RackDiagnostic(file: rack.file, location: loc, path: path, message: msg)
            if reported.insert(diagnostic).inserted { d.append(diagnostic) }  // a shared endpoint is one problem
        }
        let context = UnitBuildContext(sampleRate: 48000, hostInputChannels: hostInputChannels)
        var nodes: [Node] = []
        for u in rack.units {
            guard let type = registry.type(named: u.type) else {
                report(u.location, "units.\(u.id).type", "unknown unit type \"\(u.type)\"\(Suggest.hint(for: u.type, in: registry.names))")
                continue
            }
            let layout = type.layout(u.settings, context)
            nodes.append(Node(id: u.id, type: type, description: u, layout: layout, sources: Array(repeating: nil, count: layout.inputs.count)))
        }
        let ids = nodes.map(\.id)
        // Unit names are unique (a JSON object's keys): a dictionary keeps huge racks linear.
        let indexOf = Dictionary(ids.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var edgesOK = true
        for c in rack.connections {
            let path = "connections"
            guard let from = indexOf[c.from.unit] else {
                report(c.from.location, path, "no unit named \"\(c.from.unit)\"\(Suggest.hint(for: c.from.unit, in: ids))")
                edgesOK = false
                continue
            }
            guard let to = indexOf[c.to.unit] else {
                report(c.to.location, path, "no unit named \"\(c.to.unit)\"\(Suggest.hint(for: c.to.unit, in: ids))")
                edgesOK = false
                continue
            }
            if nodes[from].layout.outputs.isEmpty {
                report(c.from.location, path, "\"\(c.from.unit)\" (\(nodes[from].type.name)) has no output to connect from")
                edgesOK = false
                continue
            }
            let inputs = nodes[to].layout.inputs.count
            guard c.to.bus >= 1 && c.to.bus <= inputs else {
                let has = inputs == 0 ? "has no inputs" : inputs == 1 ? "has 1 input bus" : "has input buses 1…\(inputs)"
                report(c.to.location, path, "\"\(c.to.unit)\" (\(nodes[to].type.name)) \(has); there is no bus \(c.to.bus)")
                edgesOK = false
                continue
            }
            if let existing = nodes[to].sources[c.to.bus - 1] {
                report(
                    c.to.location, path,
                    "input bus \(c.to.bus) of \"\(c.to.unit)\" already has a source (\"\(nodes[existing].id)\"); "
                        + "\"\(c.from.unit)\" cannot feed it too: mix them with a mixer unit")
                edgesOK = false
                continue
            }
            nodes[to].sources[c.to.bus - 1] = from
        }
        // Several outputs (the PA, an ear-monitor mix) each play on channels of their own.
        let outputs = nodes.indices.filter { nodes[$0].type.role == .hostOutput }
        if outputs.isEmpty {
            report(rack.unitsLocation, "units", "the rack has no output unit; add one, e.g. \"out\": { \"type\": \"output\" }, and connect to it")
        }
        let before = d.count
        let channels = assignOutputChannels(outputs, nodes, report: report)
        guard edgesOK, !outputs.isEmpty, d.count == before else { return nil }

        // Topological order (Kahn), stable in rack order.
        var consumers = Array(repeating: [Int](), count: nodes.count)
        var pending = Array(repeating: 0, count: nodes.count)
        for (i, n) in nodes.enumerated() {
            for s in n.sources.compactMap({ $0 }) {
                consumers[s].append(i)
                pending[i] += 1
            }
        }
        var order: [Int] = []
        var ready = IndexHeap(nodes.indices.filter { pending[$0] == 0 })
        while let n = ready.pop() {
            order.append(n)
            for c in consumers[n] {
                pending[c] -= 1
                if pending[c] == 0 { ready.push(c) }
            }
        }
        if order.count < nodes.count {
            let cycle = findCycle(nodes, stuck: Set(nodes.indices.filter { pending[$0] > 0 }))
            let names = cycle.map { nodes[$0].id }
            report(
                nodes[cycle[0]].description.location, "connections",
                "the connections form a cycle: \((names + [names[0]]).joined(separator: " -> ")) (feedback needs a delay unit's own feedback parameter)")
            return nil
        }
        return (nodes, order, outputs, channels)
    }

    private func findCycle(_ nodes: [Node], stuck: Set<Int>) -> [Int] {
        // Walk backwards along sources inside the stuck set until a node repeats.
        var path: [Int] = []
        var seen: [Int: Int] = [:]
        var n = stuck.min()!
        while seen[n] == nil {
            seen[n] = path.count
            path.append(n)
            n = nodes[n].sources.compactMap { $0 }.first { stuck.contains($0) }!
        }
        return Array(path[seen[n]!...].reversed())
    }

    /// Compiles `rack` into a plan, or throws every problem found.
    public func compile(_ rack: RackDescription, options: Options) throws(RackError) -> RenderPlan {
        var d: [RackDiagnostic] = []
        guard let (nodes, fullOrder, outputs, outputChannels) = analyse(rack, &d, hostInputChannels: options.hostInputChannels) else {
            throw RackError(RackDiagnostic.sortedByPlace(d))
        }
        func report(_ loc: SourceLocation?, _ path: String, _ msg: String) {
            d.append(RackDiagnostic(file: rack.file, location: loc, path: path, message: msg))
        }
        let heard = heardUnits(nodes, order: fullOrder, outputs: outputs)
        let channels = channelCounts(nodes, order: heard.order, report: report)
        if !d.isEmpty { throw RackError(RackDiagnostic.sortedByPlace(d)) }
        let (units, banks) = makeUnits(nodes, kept: heard.kept, channels: channels, options: options, report: report)
        if !d.isEmpty { throw RackError(RackDiagnostic.sortedByPlace(d)) }
        let buffers = allocateBuffers(nodes, order: heard.order, channels: channels, outputChannels: outputChannels, options: options)
        let wiring = wire(nodes, heard: heard, channels: channels, buffers: buffers, outputChannels: outputChannels, options: options)
        let timing = latencyAndTail(nodes, heard: heard, units: units, outputs: outputs, outputChannels: outputChannels)
        var played = rack
        if options.transposesEverySong { played.timeline.transposable = true }
        if options.leadsBand { played.timeline.leadsBand = true }
        return makePlan(
            played, nodes, heard: heard, units: units, banks: banks, wiring: wiring, timing: timing, options: options)
    }

    /// Pass 1's result: the units some output hears, in render order and in rack order.
    private struct Heard {
        /// Node indices in render order, unheard ones left out.
        var order: [Int]
        /// Node indices in rack order, unheard ones left out.
        var kept: [Int]
        /// Node index → the unit's index in the plan.
        var unitIndex: [Int: Int]
        var warnings: [String]
    }

    /// Pass 1: keeps the units an output can hear (walking sources back from the outputs);
    /// the others are dropped with a warning.
    private func heardUnits(_ nodes: [Node], order fullOrder: [Int], outputs: [Int]) -> Heard {
        var heard = Set<Int>(outputs)
        var stack = outputs
        while let n = stack.popLast() {
            for s in nodes[n].sources.compactMap({ $0 }) where !heard.contains(s) {
                heard.insert(s)
                stack.append(s)
            }
        }
        var warnings: [String] = []
        for (i, n) in nodes.enumerated() where !heard.contains(i) {
            warnings.append("unit \"\(n.id)\" is not connected to \(outputs.count > 1 ? "any" : "the") output and will not be heard")
        }
        let order = fullOrder.filter { heard.contains($0) }
        let kept = nodes.indices.filter { heard.contains($0) }  // rack order
        let unitIndex = Dictionary(uniqueKeysWithValues: kept.enumerated().map { ($1, $0) })
        return Heard(order: order, kept: kept, unitIndex: unitIndex, warnings: warnings)
    }

    /// Pass 2's result, per node index: channels of each input and output bus, and the
    /// adapter (if any) each input bus needs between its source and its format.
    private struct Channels {
        var inputs: [[Int]]
        var outputs: [[Int]]
        var adapters: [[ChannelAdapter?]]
    }

    /// Pass 2: channel counts in render order (a bus's width follows its source's, or its
    /// format's with a mono/stereo adapter); other mismatches are reported.
    private func channelCounts(
        _ nodes: [Node], order: [Int], report: (SourceLocation?, String, String) -> Void
    ) -> Channels {
        var inChannels = Array(repeating: [Int](), count: nodes.count)
        var outChannels = Array(repeating: [Int](), count: nodes.count)
        var adapters = Array(repeating: [ChannelAdapter?](), count: nodes.count)
        for n in order {
            let node = nodes[n]
            var ins: [Int] = []
            var adapt: [ChannelAdapter?] = []
            for (b, format) in node.layout.inputs.enumerated() {
                let sourceChannels = node.sources[b].map { outChannels[$0][0] }
                switch format {
                case .any:
                    ins.append(sourceChannels ?? 1)
                    adapt.append(nil)
                case .channels(let want):
                    ins.append(want)
                    switch (sourceChannels, want) {
                    case (nil, _): adapt.append(nil)
                    case (let have?, _) where have == want: adapt.append(nil)
                    case (1, 2): adapt.append(.monoToStereo)
                    case (2, 1): adapt.append(.stereoToMono)
                    case (let have?, _):
                        report(
                            node.description.location, "connections",
                            "\"\(nodes[node.sources[b]!].id)\" has \(counted(have, "channel")); input bus \(b + 1) of \"\(node.id)\" takes \(want)")
                        adapt.append(nil)
                    }
                }
            }
            inChannels[n] = ins
            adapters[n] = adapt
            outChannels[n] = node.layout.outputs.map {
                switch $0 {
                case .channels(let c): return c
                case .sameAsInput(let b): return ins.indices.contains(b) ? ins[b] : 1
                }
            }
        }
        return Channels(inputs: inChannels, outputs: outChannels, adapters: adapters)
    }

    /// Pass 3: makes and prepares each heard unit (rack order) and its parameter bank with
    /// the rack's values; a unit that fails is reported with its error.
    private func makeUnits(
        _ nodes: [Node], kept: [Int], channels: Channels, options: Options, report: (SourceLocation?, String, String) -> Void
    ) -> (units: [any RackUnit], banks: [ParameterBank]) {
        let context = UnitBuildContext(
            sampleRate: options.sampleRate, hostInputChannels: options.hostInputChannels, realTime: options.realTime)
        var units: [any RackUnit] = []
        var banks: [ParameterBank] = []
        for n in kept {
            let node = nodes[n]
            let path = "units.\(node.id)"
            do {
                let unit = try node.type.make(node.description.settings, context)
                try unit.prepare(
                    PrepareSpec(
                        sampleRate: options.sampleRate, maxFrames: options.maxFrames, inputChannels: channels.inputs[n],
                        outputChannels: channels.outputs[n]))
                units.append(unit)
            } catch {
                report(node.description.location, path, "\(error)")
                continue
            }
            let specs = node.type.parameters(node.description.settings)
            let bank = ParameterBank(specs: specs, sampleRate: options.sampleRate, maxFrames: options.maxFrames)
            for v in node.description.parameterValues {
                if let i = specs.firstIndex(where: { $0.id == v.id }) { bank.setImmediately(i, v.value) }
            }
            banks.append(bank)
        }
        return (units, banks)
    }

    /// Pass 4's result: mono channel buffers (indices into `BusStorage`) for the host's
    /// input and output, the silent input of unconnected buses, and each node's output
    /// and adapter buses.
    private struct Buffers {
        var count: Int
        var hostInput: [Int]
        var hostOutput: [Int]
        var silent: [Int]
        var outputs: [[[Int]]]
        var adapters: [[[Int]?]]
        static let silentChannels = 8
    }

    /// Pass 4: buffer allocation. Mono channel buffers come from a free list and go back to
    /// it after their last reader, so a long chain reuses a few.
    private func allocateBuffers(
        _ nodes: [Node], order: [Int], channels: Channels, outputChannels: [Int: [Int]], options: Options
    ) -> Buffers {
        var lastUse = Array(repeating: -1, count: nodes.count)
        for (position, n) in order.enumerated() {
            for s in nodes[n].sources.compactMap({ $0 }) { lastUse[s] = max(lastUse[s], position) }
        }
        var free: [Int] = []
        var bufferCount = 0
        func take(_ count: Int) -> [Int] {
            (0..<count).map { _ in
                if let b = free.popLast() { return b }
                bufferCount += 1
                return bufferCount - 1
            }
        }
        let hostInputBuffers = take(options.hostInputChannels)
        let hostOutputWidth = max(2, (outputChannels.values.flatMap { $0 }.max() ?? 1) + 1)
        let hostOutputBuffers = take(hostOutputWidth)
        let silent = take(Buffers.silentChannels)  // never written: the input of unconnected buses
        var outputBuffers = Array(repeating: [[Int]](), count: nodes.count)
        var adapterBuffers = Array(repeating: [[Int]?](), count: nodes.count)
        for (position, n) in order.enumerated() {
            var temps: [Int] = []
            adapterBuffers[n] = channels.adapters[n].enumerated().map { b, a in
                guard a != nil else { return nil }
                let t = take(channels.inputs[n][b])
                temps += t
                return t
            }
            outputBuffers[n] = channels.outputs[n].map { take($0) }
            free += temps
            for s in Set(nodes[n].sources.compactMap { $0 }) where lastUse[s] == position {
                free += outputBuffers[s].flatMap { $0 }
            }
            if lastUse[n] < 0 { free += outputBuffers[n].flatMap { $0 } }  // nobody reads it
        }
        return Buffers(
            count: bufferCount, hostInput: hostInputBuffers, hostOutput: hostOutputBuffers, silent: silent,
            outputs: outputBuffers, adapters: adapterBuffers)
    }

    /// Pass 5's result: the storage, the channel tables and the flat arrays the plan owns.
    private struct Wiring {
        var storage: BusStorage
        var tables: ChannelTable
        var busArrays: UnsafeMutableBufferPointer<AudioBus>
        var adapterArrays: UnsafeMutableBufferPointer<AdapterStep>
        var stepArray: UnsafeMutableBufferPointer<PlanStep>
        var hostInput: AudioBus
        var hostOutput: AudioBus
    }

    /// Pass 5: bus tables and steps. Allocates the buffers' storage and the channel tables
    /// (sized exactly), then lays out one `PlanStep` per heard unit in render order: its
    /// output buses, its input buses (a source's output, an adapter's temporary, or silence)
    /// and its adapters.
    private func wire(
        _ nodes: [Node], heard: Heard, channels: Channels, buffers: Buffers, outputChannels: [Int: [Int]], options: Options
    ) -> Wiring {
        let order = heard.order
        let storage = BusStorage(bufferCount: buffers.count, maxFrames: options.maxFrames)
        // Explicit types and separate sums: Swift 6.0's type checker gives up on the one expression.
        var totalBuses = 0
        var unitChannels = 0
        for n in order {
            totalBuses += channels.inputs[n].count + channels.outputs[n].count + channels.adapters[n].count
            let ins: Int = channels.inputs[n].reduce(0, +)
            let outs: Int = channels.outputs[n].reduce(0, +)
            unitChannels += ins * 2 + outs
        }
        let totalChannels: Int = unitChannels + options.hostInputChannels + buffers.hostOutput.count * 2
        let tables = ChannelTable(capacity: totalChannels)
        func bus(_ indices: [Int]) -> AudioBus { tables.bus(indices.map { storage.buffer($0) }) }
        let busArrays = UnsafeMutableBufferPointer<AudioBus>.allocate(capacity: max(totalBuses, 1))
        let adapterCount = channels.adapters.reduce(0) { $0 + $1.compactMap { $0 }.count }
        let adapterArrays = UnsafeMutableBufferPointer<AdapterStep>.allocate(capacity: max(adapterCount, 1))
        let stepArray = UnsafeMutableBufferPointer<PlanStep>.allocate(capacity: max(order.count, 1))
        var busUsed = 0
        var adapterUsed = 0
        var outputBuses = Array(repeating: [AudioBus](), count: nodes.count)
        let hostOutput = bus(buffers.hostOutput)
        for (position, n) in order.enumerated() {
            let node = nodes[n]
            let outputStart = busUsed
            for indices in buffers.outputs[n] {
                let b = bus(indices)
                (busArrays.baseAddress! + busUsed).initialize(to: b)
                outputBuses[n].append(b)
                busUsed += 1
            }
            let inputStart = busUsed
            let adapterStart = adapterUsed
            for b in 0..<channels.inputs[n].count {
                let width = channels.inputs[n][b]
                let input: AudioBus
                if let s = node.sources[b] {
                    let sourceBus = outputBuses[s][0]
                    if let kind = channels.adapters[n][b], let temp = buffers.adapters[n][b] {
                        input = bus(temp)
                        (adapterArrays.baseAddress! + adapterUsed).initialize(
                            to: AdapterStep(kind: kind, source: sourceBus, destination: input))
                        adapterUsed += 1
                    } else {
                        input = sourceBus
                    }
                } else {
                    input = bus(Array(buffers.silent.prefix(min(width, Buffers.silentChannels))))
                }
                (busArrays.baseAddress! + busUsed).initialize(to: input)
                busUsed += 1
            }
            (stepArray.baseAddress! + position).initialize(
                to: PlanStep(
                    unit: heard.unitIndex[n]!,
                    inputs: UnsafeBufferPointer(start: busArrays.baseAddress! + inputStart, count: channels.inputs[n].count),
                    outputs: UnsafeBufferPointer(start: busArrays.baseAddress! + outputStart, count: channels.outputs[n].count),
                    adapters: UnsafeBufferPointer(start: adapterArrays.baseAddress! + adapterStart, count: adapterUsed - adapterStart),
                    hostOutput: outputChannels[n].map { bus($0.map { buffers.hostOutput[$0] }) } ?? hostOutput))
        }
        let hostInput = bus(buffers.hostInput)
        return Wiring(
            storage: storage, tables: tables, busArrays: busArrays, adapterArrays: adapterArrays, stepArray: stepArray,
            hostInput: hostInput, hostOutput: hostOutput)
    }

    /// Pass 6's result: each output with its latency and input paths, and the rack's
    /// latency and tail (the largest over its outputs).
    private struct Timing {
        var outputs: [PlanOutput]
        var latencyFrames: Int
        var tailSeconds: Double
    }

    /// Pass 6: latency and tail, the largest sum along any path into an output.
    private func latencyAndTail(
        _ nodes: [Node], heard: Heard, units: [any RackUnit], outputs: [Int], outputChannels: [Int: [Int]]
    ) -> Timing {
        let order = heard.order
        let unitIndex = heard.unitIndex
        var latency = Array(repeating: 0, count: nodes.count)
        var tail = Array(repeating: 0.0, count: nodes.count)
        for n in order {
            let u = units[unitIndex[n]!]
            let upstream = nodes[n].sources.compactMap { $0 }
            latency[n] = (upstream.map { latency[$0] }.max() ?? 0) + u.latencyFrames
            tail[n] = (upstream.map { tail[$0] }.max() ?? 0) + u.tailSeconds
        }
        let inputs = order.filter { nodes[$0].type.role == .hostInput }
        let paths = inputPaths(outputs: outputs, inputs: inputs, nodes: nodes, order: order) { units[unitIndex[$0]!].latencyFrames }
        let planOutputs = outputs.map {
            PlanOutput(unitID: nodes[$0].id, deviceChannels: outputChannels[$0]!, latencyFrames: latency[$0], paths: paths[$0] ?? [])
        }
        return Timing(
            outputs: planOutputs, latencyFrames: outputs.map { latency[$0] }.max()!, tailSeconds: outputs.map { tail[$0] }.max()!)
    }

    /// Pass 7: the plan itself, with its MIDI receivers and its silence plan.
    private func makePlan(
        _ rack: RackDescription, _ nodes: [Node], heard: Heard, units: [any RackUnit], banks: [ParameterBank],
        wiring: Wiring, timing: Timing, options: Options
    ) -> RenderPlan {
        let kept = heard.kept
        let receivers = kept.enumerated().filter { nodes[$1].type.receivesMIDI }.map { $0.offset }
        let usesInput = kept.contains { nodes[$0].type.role == .hostInput }
        let plan = RenderPlan(
            rack: rack, sampleRate: options.sampleRate, maxFrames: options.maxFrames, unitIDs: kept.map { nodes[$0].id },
            unitTypes: kept.map { nodes[$0].type.name }, units: units, parameters: banks, midiReceivers: receivers,
            hostInput: wiring.hostInput, hostOutput: wiring.hostOutput, outputs: timing.outputs, usesHostInput: usesInput,
            latencyFrames: timing.latencyFrames, tailSeconds: timing.tailSeconds, warnings: heard.warnings,
            storage: wiring.storage, tables: wiring.tables, busArrays: wiring.busArrays, adapterArrays: wiring.adapterArrays,
            stepArray: wiring.stepArray)
        plan.silence = silencePlan(nodes, kept: kept, unitIndex: heard.unitIndex)
        return plan
    }

    /// Who hears whom, with the unit types' opt-ins and input gates (SilencePlan).
    private func silencePlan(_ nodes: [Node], kept: [Int], unitIndex: [Int: Int]) -> SilencePlan {
        var edges: [SilencePlan.Edge] = []
        for n in kept {
            let gates = nodes[n].type.inputGates(nodes[n].description.settings)
            for (b, source) in nodes[n].sources.enumerated() {
                guard let source, let from = unitIndex[source] else { continue }
                edges.append(SilencePlan.Edge(from: from, to: unitIndex[n]!, gate: b < gates.count ? gates[b] : nil))
            }
        }
        let skippable = kept.map { nodes[$0].type.silence.skipsUnheard && !nodes[$0].type.receivesMIDI }
        var plan = SilencePlan(skippable: skippable, edges: edges)
        plan.sleeps = kept.map {
            let t = nodes[$0].type
            return t.silence == .sleepsWhenSilent && !t.receivesMIDI && t.commands(nodes[$0].description.settings).isEmpty
        }
        plan.sources = kept.map { n in nodes[n].sources.map { $0.flatMap { unitIndex[$0] } ?? -1 } }
        return plan
    }
}
