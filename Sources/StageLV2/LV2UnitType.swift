import StageCore

/// The unit types of this module, for building a registry (the app registers them beside
/// `StandardUnits.types`).
public enum LV2Units {
    public static var types: [any UnitType] { [LV2UnitType()] }
}

/// `lv2`: an installed LV2 plugin as a unit, hosted through lilv.
///
/// `{ "type": "lv2", "plugin": "URI", "params": { "SYMBOL": value } }`. The parameters are
/// the plugin's control input ports, named by their symbols, with the ranges, defaults and
/// properties its description declares (`LV2Parameters`). Its audio input ports are one
/// input bus, its audio output ports one output bus. Thread: any (a description); `check`,
/// `parameters` and `make` read `LV2World.shared` and run on the control thread.
public struct LV2UnitType: UnitType {
    public let world: @Sendable () -> LV2World
    /// Whether work a plugin schedules while its preset or state is restored is done before
    /// the unit's first block (`LV2Worker.settle`: an IR or sample is loaded when the rack
    /// starts). False leaves it to the worker thread once rendering (the first blocks play
    /// before it is loaded): the tests' way to exercise the thread pair.
    public let settleWorkAtLoad: Bool

    /// `world` is the process's world unless a test gives another.
    public init(world: @escaping @Sendable () -> LV2World = { LV2World.shared }, settleWorkAtLoad: Bool = true) {
        self.world = world
        self.settleWorkAtLoad = settleWorkAtLoad
    }

    public var name: String { "lv2" }
    public var summary: String {
        "an installed LV2 plugin (`stagerack units lv2` lists them; `stagerack units URI` shows one)"
    }
    /// Notes and controllers reach plugins with a MIDI input; the others ignore them.
    public var receivesMIDI: Bool { true }

    public var settings: [SettingSpec] {
        [
            SettingSpec(
                key: "plugin", kind: .string, required: true,
                help: "the plugin's URI, as `stagerack units lv2` or `lv2ls` lists it"),
            SettingSpec(
                key: "smooth", kind: .custom("an object of SYMBOL: seconds (0…10)"),
                help: "parameters the host ramps over that time, stepping the plugin's port every "
                    + "\(LV2Unit.smoothingStep) frames (default none: a change lands at its frame)"),
            SettingSpec(
                key: "preset", kind: .string,
                help: "a preset from the plugin's own bundle, by name (`stagerack units URI` lists them): "
                    + "its port values become the parameters' defaults (\"params\" still win) and its state is restored"),
            SettingSpec(
                key: "state", kind: .custom("an object of PROPERTY-URI: { \"type\": TYPE-URI, \"value\" or \"base64\": … }"),
                help: "the plugin's state (state:interface), restored after the preset when the rack loads; "
                    + "`stagerack lv2-state RACK UNIT` prints it"),
            SettingSpec(
                key: "meters", kind: .custom("a list of control output symbols"),
                help: "the plugin's control outputs shown by `play --meters` and `--status` "
                    + "(default all but its latency port; [] none)"),
            SettingSpec(
                key: "transpose", kind: .integer(LV2NoteTransposer.range),
                help: "semitones added to the notes a plugin's MIDI input gets (channel 10's drums stay put "
                    + "unless `channel` is 10), as the synth's; a song's `transpose` adds to it (default 0)"),
            SettingSpec(
                key: "allowNonRealtime", kind: .custom("true or false"),
                help: "run a plugin that does not declare lv2:hardRTCapable (its run() may allocate "
                    + "or lock: a glitch risk on stage; default false)"),
        ] + NoteFilter.settingSpecs.map { spec in
            var s = spec
            s.help = spec.key == "channel"
                ? "MIDI channel whose notes and controllers reach a plugin's MIDI input (default \"all\")"
                : "keys whose notes reach a plugin's MIDI input, for splits and layers like the synth's (default all)"
            return s
        }
    }

    /// The plugin named by `plugin`, if it is installed. Thread: control.
    func plugin(_ settings: UnitSettings) -> LV2PluginInfo? {
        guard LV2World.libraryFailure == nil else { return nil }
        return settings.string("plugin").flatMap { world().plugin($0) }
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        guard let info = plugin(settings) else { return [] }
        let smooth = smoothing(settings)
        let presetValues = preset(settings, info).map { world().presetPortValues($0.uri) } ?? [:]
        return zip(LV2Parameters.specs(info), info.controlInputs).map { spec, port in
            var s = spec
            if let seconds = smooth[spec.id], spec.unit != .choice { s.smoothingSeconds = Float(seconds) }
            if let v = presetValues[spec.id] { s.defaultValue = LV2Parameters.parameterValue(v, port) }
            return s
        }
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        guard let info = plugin(settings) else { return BusLayout(inputs: [.channels(1)], outputs: [.channels(1)]) }
        let ins = info.audioInputs.count
        let outs = info.audioOutputs.count
        return BusLayout(inputs: ins == 0 ? [] : [.channels(ins)], outputs: outs == 0 ? [] : [.channels(outs)])
    }

    /// Whether the plugin is installed, can be hosted (features, port types) and is real-time
    /// safe or accepted as not. Thread: control.
    public func check(_ settings: UnitSettings) -> [SettingProblem] {
        var problems: [SettingProblem] = []
        var allowNonRealtime = false
        if let node = settings.node("allowNonRealtime") {
            if case .bool(let b) = node.value {
                allowNonRealtime = b
            } else {
                problems.append(SettingProblem(key: "allowNonRealtime", message: "must be true or false"))
            }
        }
        guard let uri = settings.string("plugin") else { return problems }
        if let failure = LV2World.libraryFailure { return problems + [SettingProblem(key: "plugin", message: failure)] }
        guard let info = world().plugin(uri) else {
            return problems + [SettingProblem(key: "plugin", message: LV2Suggestions.missing(uri, world().plugins))]
        }
        if let refusal = LV2Host.refusal(info, allowNonRealtime: allowNonRealtime) {
            problems.append(SettingProblem(key: "plugin", message: refusal))
        }
        if case .failure(let list) = NoteFilter.parse(settings) { problems += list.problems }
        problems += checkMeters(settings, info)
        return problems + checkSmoothing(settings, info) + checkPreset(settings, info) + checkState(settings, info)
    }

    /// The preset the unit's `preset` names, nil when none or unknown. Thread: control.
    func preset(_ settings: UnitSettings, _ info: LV2PluginInfo) -> LV2Preset? {
        guard let name = settings.string("preset") else { return nil }
        return world().presets(info.uri).first { $0.name == name }
    }

    private func checkPreset(_ settings: UnitSettings, _ info: LV2PluginInfo) -> [SettingProblem] {
        guard let node = settings.node("preset") else { return [] }
        guard let name = node.string else { return [SettingProblem(key: "preset", message: "must be a preset's name")] }
        let presets = world().presets(info.uri)
        if presets.contains(where: { $0.name == name }) { return [] }
        let names = presets.map(\.name)
        let message: String
        if names.isEmpty {
            message = "\(info.uri) ships no presets"
        } else {
            message = "\(info.uri) has no preset \"\(name)\"\(Suggest.hint(for: name, in: names)); its presets: "
                + names.map { "\"\($0)\"" }.joined(separator: ", ")
        }
        return [SettingProblem(key: "preset", message: message)]
    }

    /// The `meters` setting: symbols of control outputs, nil when absent or not a list.
    func meters(_ settings: UnitSettings) -> [String]? {
        settings.node("meters")?.elements.map { $0.compactMap(\.string) }
    }

    private func checkMeters(_ settings: UnitSettings, _ info: LV2PluginInfo) -> [SettingProblem] {
        guard let node = settings.node("meters") else { return [] }
        guard let items = node.elements, items.allSatisfy({ $0.string != nil }) else {
            return [SettingProblem(key: "meters", message: "must be a list of control output symbols")]
        }
        let symbols = info.controlOutputs.map(\.symbol)
        return items.compactMap(\.string).filter { !symbols.contains($0) }.map {
            SettingProblem(
                key: "meters",
                message: "the plugin has no control output \"\($0)\"\(Suggest.hint(for: $0, in: symbols))"
                    + (symbols.isEmpty ? " (it has none)" : "; its outputs: " + symbols.joined(separator: ", ")))
        }
    }

    private func checkState(_ settings: UnitSettings, _ info: LV2PluginInfo) -> [SettingProblem] {
        guard let node = settings.node("state") else { return [] }
        do {
            _ = try LV2State(json: node)
        } catch {
            return [SettingProblem(key: "state", message: error.message)]
        }
        if !info.hasState {
            return [SettingProblem(key: "state", message: "\(info.uri) has no state:interface: it keeps no state")]
        }
        return []
    }

    /// Instantiates the plugin (in `prepare`, once the block size is known). Thread: control.
    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        if let failure = LV2World.libraryFailure { throw UnitError("lv2: \(failure)") }
        guard let uri = settings.string("plugin"), let info = world().plugin(uri) else {
            throw UnitError("lv2: no plugin \(settings.string("plugin") ?? "(none)") is installed")
        }
        let smoothed = Set(parameters(settings).filter { $0.smoothingSeconds > 0 }.map(\.id))
        let state = try settings.node("state").map { node throws(UnitError) in try LV2State(json: node) }
        let start = LV2StartingState(
            presetURI: preset(settings, info)?.uri, state: state, directory: settings.rackDirectory)
        return LV2Unit(
            info: info, world: world(), smoothed: smoothed, notes: (try? NoteFilter.parse(settings).get()) ?? NoteFilter(),
            startingState: start, realTime: context.realTime, settleWorkAtLoad: settleWorkAtLoad,
            meters: meters(settings), transpose: settings.node("transpose")?.number.flatMap { Int(exactly: $0) } ?? 0)
    }

    /// The `smooth` setting: symbol → seconds (unchecked entries left out).
    func smoothing(_ settings: UnitSettings) -> [String: Double] {
        var out: [String: Double] = [:]
        for m in settings.node("smooth")?.members ?? [] {
            if let v = m.value.number, (0...10).contains(v) { out[m.key] = v }
        }
        return out
    }

    private func checkSmoothing(_ settings: UnitSettings, _ info: LV2PluginInfo) -> [SettingProblem] {
        guard let node = settings.node("smooth") else { return [] }
        guard let members = node.members else {
            return [SettingProblem(key: "smooth", message: "must be an object of SYMBOL: seconds")]
        }
        let symbols = info.controlInputs.map(\.symbol)
        var problems: [SettingProblem] = []
        for m in members {
            if !symbols.contains(m.key) {
                problems.append(
                    SettingProblem(
                        key: "smooth",
                        message: "\(m.key): the plugin has no control input \"\(m.key)\"\(Suggest.hint(for: m.key, in: symbols))"))
            } else if let v = m.value.number, (0...10).contains(v) {
                continue
            } else {
                problems.append(SettingProblem(key: "smooth", message: "\(m.key): seconds 0…10"))
            }
        }
        return problems
    }
}

extension LV2UnitType {
    /// What to say when `uri` is not installed (nearest URIs, the Debian package).
    /// Thread: control.
    public static func missingMessage(_ uri: String, _ world: LV2World) -> String {
        LV2Suggestions.missing(uri, world.plugins)
    }

    /// Why a plugin cannot be hosted at all (features, port types), ignoring real-time
    /// safety; nil when it can. Thread: any.
    public static func refusal(_ info: LV2PluginInfo) -> String? {
        LV2Host.refusal(info, allowNonRealtime: true)
    }
}
