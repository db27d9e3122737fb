import StageCore
import XCTest

/// A tiny rack for the mapping tests, built only from Core: a microphone, a "knobs" unit
/// with one parameter of each kind, a synth that takes MIDI, and the speakers.
enum MIDITestRack {
    static let registry = UnitRegistry([InType(), KnobsType(), SynthType(), OutType()])

    /// Compiles a rack whose `midi` section is `midi` (JSON text).
    static func plan(midi: String, tempo: Double = 120, params: String = "{}") throws -> RenderPlan {
        let text = """
            { "format": 1, "tempo": \(tempo),
              "units": { "mic": { "type": "in" }, "fx": { "type": "knobs", "params": \(params) }, "synth": { "type": "synth" },
                         "out": { "type": "out" } },
              "connections": [ "mic -> fx -> out" , "synth -> out:2" ],
              "midi": \(midi) }
            """
        let rack = try RackReader(registry: registry).read(text: text, file: "test.json")
        return try GraphCompiler(registry: registry).compile(rack, options: GraphCompiler.Options(maxFrames: 64))
    }

    static func mapper(_ midi: String, tempo: Double = 120, params: String = "{}") throws -> (MIDIMapper, RenderPlan) {
        let p = try plan(midi: midi, tempo: tempo, params: params)
        return (MIDIMapper(plan: p), p)
    }

    /// The errors a `midi` section gives, as `LINE:COL: path: message`.
    static func errors(midi: String) -> [String] {
        let text = "{ \"format\": 1, \"units\": { \"mic\": { \"type\": \"in\" }, \"fx\": { \"type\": \"knobs\" }, \"out\": { \"type\": \"out\" } },\n\"connections\": [ \"mic -> fx -> out\" ],\n\"midi\": \(midi) }"
        do {
            _ = try RackReader(registry: registry).read(text: text, file: "t.json")
            return []
        } catch {
            return error.diagnostics.map { String($0.description.dropFirst("t.json:".count)) }
        }
    }

    struct InType: UnitType {
        var name: String { "in" }
        var summary: String { "test input" }
        var role: UnitRole { .hostInput }
        func parameters(_ settings: UnitSettings) -> [ParameterSpec] { [] }
        func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
            BusLayout(inputs: [], outputs: [.channels(1)])
        }
        func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { Copy(fromHost: true) }
    }

    struct KnobsType: UnitType {
        var name: String { "knobs" }
        var summary: String { "test parameters" }
        func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
            [
                ParameterSpec(id: "level", name: "Level", unit: .decibels, range: -60...6, defaultValue: 0),
                ParameterSpec(id: "cutoff", name: "Cutoff", unit: .hertz, range: 20...20000, defaultValue: 1000),
                .choice(id: "mode", name: "Mode", choices: ["clean", "crunch", "lead", "fuzz"], defaultIndex: 0),
                .toggle(id: "on", name: "On", defaultOn: true),
                ParameterSpec(id: "mix", name: "Mix", unit: .percent, range: 0...100, defaultValue: 50),
            ]
        }
        func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
            BusLayout(inputs: [.any], outputs: [.sameAsInput(0)])
        }
        func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { Copy(fromHost: false) }
    }

    struct SynthType: UnitType {
        var name: String { "synth" }
        var summary: String { "test synth" }
        var role: UnitRole { .generator }
        var receivesMIDI: Bool { true }
        func parameters(_ settings: UnitSettings) -> [ParameterSpec] { [] }
        func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
            BusLayout(inputs: [], outputs: [.channels(2)])
        }
        func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { Silence() }
    }

    struct OutType: UnitType {
        var name: String { "out" }
        var summary: String { "test output" }
        var role: UnitRole { .hostOutput }
        func parameters(_ settings: UnitSettings) -> [ParameterSpec] { [] }
        func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
            BusLayout(inputs: [.channels(2), .channels(2)], outputs: [])
        }
        func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit { ToHost() }
    }

    final class Copy: RackUnit {
        let fromHost: Bool
        init(fromHost: Bool) { self.fromHost = fromHost }
        func prepare(_ spec: PrepareSpec) throws {}
        func reset() {}
        func render(_ context: RenderContext) {
            let out = context.outputs[0]
            let src = fromHost ? context.hostInput : context.inputs[0]
            for c in 0..<out.channelCount { out[c].update(from: src[min(c, src.channelCount - 1)], count: context.frameCount) }
        }
    }

    final class Silence: RackUnit {
        func prepare(_ spec: PrepareSpec) throws {}
        func reset() {}
        func render(_ context: RenderContext) {
            for c in 0..<context.outputs[0].channelCount { context.outputs[0][c].update(repeating: 0, count: context.frameCount) }
        }
    }

    final class ToHost: RackUnit {
        func prepare(_ spec: PrepareSpec) throws {}
        func reset() {}
        func render(_ context: RenderContext) {
            let input = context.inputs[0]
            for c in 0..<context.hostOutput.channelCount {
                context.hostOutput[c].update(from: input[min(c, input.channelCount - 1)], count: context.frameCount)
            }
        }
    }
}

/// Feeds messages to a mapper at chosen times and collects what comes out.
final class MapperProbe {
    let mapper: MIDIMapper
    let plan: RenderPlan
    var events: [EngineEvent] = []
    var seconds = 10.0

    init(_ midi: String, tempo: Double = 120, params: String = "{}") throws {
        (mapper, plan) = try MIDITestRack.mapper(midi, tempo: tempo, params: params)
    }

    /// Sends `message` `dt` seconds after the previous one; returns the events it made.
    @discardableResult
    func send(_ message: MIDIMessage, after dt: Double = 0.001) -> [EngineEvent] {
        seconds += dt
        let before = events.count
        mapper.handle(message, at: EngineEvent.now, seconds: seconds) { events.append($0) }
        return Array(events[before...])
    }

    @discardableResult
    func cc(_ controller: Int, _ value: Int, channel: Int = 0, after dt: Double = 0.001) -> [EngineEvent] {
        send(.controlChange(channel: channel, controller: controller, value: value), after: dt)
    }

    /// Lets `dt` seconds pass with no message.
    @discardableResult
    func wait(_ dt: Double) -> [EngineEvent] {
        seconds += dt
        let before = events.count
        mapper.poll(seconds: seconds) { events.append($0) }
        return Array(events[before...])
    }

    /// The values set on `unit.param` by `list` (parameter events only).
    func values(_ list: [EngineEvent], _ target: String) -> [Float] {
        guard let a = address(target) else { return [] }
        return list.filter { $0.unit == Int32(a.unit) && $0.parameter == Int32(a.parameter) && ($0.kind == .parameter || $0.kind == .bypass) }
            .map(\.value)
    }

    func address(_ target: String) -> ParameterAddress? {
        MIDIMapper.resolve(target, in: plan)?.0
    }

    /// The last value the mapper set on `target`.
    func value(_ target: String) -> Float? { values(events, target).last }

    /// Everything queued for the controllers so far.
    func feedback() -> [MIDIMessage] {
        var out: [MIDIMessage] = []
        while let m = mapper.feedback.pop() { out.append(m) }
        return out
    }

    func actions() -> [ControlAction] {
        var out: [ControlAction] = []
        while let a = mapper.actions.pop() { out.append(a) }
        return out
    }
}

extension EngineEvent: Equatable {
    public static func == (a: EngineEvent, b: EngineEvent) -> Bool {
        a.kind == b.kind && a.sampleTime == b.sampleTime && a.unit == b.unit && a.parameter == b.parameter
            && a.value == b.value && a.message == b.message
    }
}
