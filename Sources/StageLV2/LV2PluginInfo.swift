import CLilv
import StageCore

/// A named value of a control port (`lv2:scalePoint`).
public struct LV2ScalePoint: Sendable, Equatable {
    public var value: Float
    public var label: String
}

/// What a port carries and which way.
public enum LV2PortKind: Sendable, Equatable {
    case audioInput, audioOutput
    case controlInput, controlOutput
    /// An atom port taking events; `midi` when it supports `midi:MidiEvent`.
    case atomInput(midi: Bool)
    case atomOutput
    case cvInput, cvOutput
    /// A port type StageRack does not know; the plugin is refused unless it is optional.
    case unknown(optional: Bool)
}

/// One port of a plugin, as its Turtle description declares it. Thread: any (a value).
public struct LV2Port: Sendable, Equatable {
    public var index: Int
    public var symbol: String
    public var name: String
    public var kind: LV2PortKind
    public var minimum: Float
    public var maximum: Float
    public var defaultValue: Float
    /// The `units:unit` URI (`http://lv2plug.in/ns/extensions/units#db`), if any.
    public var unitURI: String?
    public var toggled = false
    public var integer = false
    public var enumeration = false
    public var logarithmic = false
    /// `lv2:connectionOptional`.
    public var optional = false
    public var scalePoints: [LV2ScalePoint] = []
    /// `rsz:minimumSize` of an atom port, bytes (0 when not given).
    public var minimumSize = 0
}

/// An installed plugin's description, read once from lilv's world. Thread: any (a value).
public struct LV2PluginInfo: Sendable, Equatable {
    public var uri: String
    public var name: String
    /// The plugin's class label ("Dynamics Plugin", "Filter Plugin", …).
    public var className: String
    public var bundlePath: String
    public var libraryPath: String
    public var ports: [LV2Port]
    public var requiredFeatures: [String]
    public var optionalFeatures: [String]
    /// The plugin's `lv2:extensionData` (`worker:interface`, `state:interface`, …).
    public var extensionData: [String] = []
    /// `lv2:hardRTCapable` among the plugin's features: its `run` is real-time safe.
    public var hardRTCapable: Bool
    /// The control output port reporting latency in frames, if any.
    public var latencyPort: Int?

    public var audioInputs: [LV2Port] { ports.filter { $0.kind == .audioInput } }
    public var audioOutputs: [LV2Port] { ports.filter { $0.kind == .audioOutput } }
    public var controlInputs: [LV2Port] { ports.filter { $0.kind == .controlInput } }
    public var controlOutputs: [LV2Port] { ports.filter { $0.kind == .controlOutput } }
    /// Whether an atom input port takes MIDI: notes and controllers are routed to it.
    /// Whether it schedules work (`worker:schedule`): it gets a worker thread.
    public var usesWorker: Bool {
        extensionData.contains(LV2URI.workerInterface) || requiredFeatures.contains(LV2URI.workerSchedule)
            || optionalFeatures.contains(LV2URI.workerSchedule)
    }
    /// Whether it has state beyond its ports (`state:interface`): saved into the rack file.
    public var hasState: Bool { extensionData.contains(LV2URI.stateInterface) }
    public var takesMIDI: Bool { ports.contains { $0.kind == .atomInput(midi: true) } }
}

/// URIs of the LV2 vocabulary StageRack reads.
enum LV2URI {
    static let core = "http://lv2plug.in/ns/lv2core#"
    static let audioPort = core + "AudioPort"
    static let controlPort = core + "ControlPort"
    static let cvPort = core + "CVPort"
    static let inputPort = core + "InputPort"
    static let outputPort = core + "OutputPort"
    static let toggled = core + "toggled"
    static let integer = core + "integer"
    static let enumeration = core + "enumeration"
    static let connectionOptional = core + "connectionOptional"
    static let hardRTCapable = core + "hardRTCapable"
    static let atomPort = "http://lv2plug.in/ns/ext/atom#AtomPort"
    static let atomSequence = "http://lv2plug.in/ns/ext/atom#Sequence"
    static let atomChunk = "http://lv2plug.in/ns/ext/atom#Chunk"
    static let atomInt = "http://lv2plug.in/ns/ext/atom#Int"
    static let atomFloat = "http://lv2plug.in/ns/ext/atom#Float"
    static let midiEvent = "http://lv2plug.in/ns/ext/midi#MidiEvent"
    static let logarithmic = "http://lv2plug.in/ns/ext/port-props#logarithmic"
    static let unit = "http://lv2plug.in/ns/extensions/units#unit"
    static let minimumSize = "http://lv2plug.in/ns/ext/resize-port#minimumSize"
    static let sampleRate = "http://lv2plug.in/ns/ext/parameters#sampleRate"
    static let minBlockLength = "http://lv2plug.in/ns/ext/buf-size#minBlockLength"
    static let maxBlockLength = "http://lv2plug.in/ns/ext/buf-size#maxBlockLength"
    static let sequenceSize = "http://lv2plug.in/ns/ext/buf-size#sequenceSize"
    static let boundedBlockLength = "http://lv2plug.in/ns/ext/buf-size#boundedBlockLength"
    static let options = "http://lv2plug.in/ns/ext/options#options"
    static let urid = "http://lv2plug.in/ns/ext/urid#map"
    static let unmap = "http://lv2plug.in/ns/ext/urid#unmap"
    static let log = "http://lv2plug.in/ns/ext/log#log"
    static let isLive = "http://lv2plug.in/ns/lv2core#isLive"
    static let inPlaceBroken = "http://lv2plug.in/ns/lv2core#inPlaceBroken"
    static let workerSchedule = "http://lv2plug.in/ns/ext/worker#schedule"
    static let workerInterface = "http://lv2plug.in/ns/ext/worker#interface"
    static let stateInterface = "http://lv2plug.in/ns/ext/state#interface"
    static let mapPath = "http://lv2plug.in/ns/ext/state#mapPath"
    static let freePath = "http://lv2plug.in/ns/ext/state#freePath"
    static let preset = "http://lv2plug.in/ns/ext/presets#Preset"
    static let label = "http://www.w3.org/2000/01/rdf-schema#label"
    static let atomPath = "http://lv2plug.in/ns/ext/atom#Path"
    static let atomString = "http://lv2plug.in/ns/ext/atom#String"
    static let atomBool = "http://lv2plug.in/ns/ext/atom#Bool"
    static let atomLong = "http://lv2plug.in/ns/ext/atom#Long"
    static let atomDouble = "http://lv2plug.in/ns/ext/atom#Double"
    static let atomURI = "http://lv2plug.in/ns/ext/atom#URI"
    static let atomURID = "http://lv2plug.in/ns/ext/atom#URID"
    static let atomVector = "http://lv2plug.in/ns/ext/atom#Vector"
}

extension LV2PluginInfo {
    /// Reads a plugin's description from lilv. Thread: control, under `LV2World`'s lock.
    init(world: OpaquePointer, plugin: OpaquePointer) {
        uri = Lilv.uri(plugin)
        name = Lilv.name(plugin)
        className = Lilv.className(plugin)
        bundlePath = Lilv.path(fromFileURI: lilv_plugin_get_bundle_uri(plugin)) ?? ""
        libraryPath = Lilv.path(fromFileURI: lilv_plugin_get_library_uri(plugin)) ?? ""
        requiredFeatures = Lilv.strings(lilv_plugin_get_required_features(plugin), owned: true)
        optionalFeatures = Lilv.strings(lilv_plugin_get_optional_features(plugin), owned: true)
        extensionData = Lilv.strings(lilv_plugin_get_extension_data(plugin), owned: true)
        hardRTCapable = Lilv.withURI(world, LV2URI.hardRTCapable) { lilv_plugin_has_feature(plugin, $0) }
        latencyPort = lilv_plugin_has_latency(plugin) ? Int(lilv_plugin_get_latency_port_index(plugin)) : nil
        ports = (0..<lilv_plugin_get_num_ports(plugin)).compactMap { i in
            lilv_plugin_get_port_by_index(plugin, i).map { LV2Port(world: world, plugin: plugin, port: $0, index: Int(i)) }
        }
    }
}

extension LV2Port {
    /// Reads one port (`lilv_port_is_a`, `lilv_port_has_property`, `lilv_port_get_*`).
    /// Thread: control, under `LV2World`'s lock.
    init(world: OpaquePointer, plugin: OpaquePointer, port: OpaquePointer, index: Int) {
        func isA(_ uri: String) -> Bool { Lilv.withURI(world, uri) { lilv_port_is_a(plugin, port, $0) } }
        func has(_ uri: String) -> Bool { Lilv.withURI(world, uri) { lilv_port_has_property(plugin, port, $0) } }
        self.index = index
        symbol = Lilv.string(lilv_port_get_symbol(plugin, port)) ?? "port\(index)"
        let nameNode = lilv_port_get_name(plugin, port)
        name = Lilv.string(nameNode) ?? symbol
        lilv_node_free(nameNode)
        let input = isA(LV2URI.inputPort)
        optional = has(LV2URI.connectionOptional)
        if isA(LV2URI.audioPort) {
            kind = input ? .audioInput : .audioOutput
        } else if isA(LV2URI.controlPort) {
            kind = input ? .controlInput : .controlOutput
        } else if isA(LV2URI.atomPort) {
            let midi = Lilv.withURI(world, LV2URI.midiEvent) { lilv_port_supports_event(plugin, port, $0) }
            kind = input ? .atomInput(midi: midi) : .atomOutput
        } else if isA(LV2URI.cvPort) {
            kind = input ? .cvInput : .cvOutput
        } else {
            kind = .unknown(optional: optional)
        }
        let r = Lilv.range(plugin, port)
        minimum = r.min ?? 0
        maximum = max(r.max ?? 1, minimum)
        defaultValue = min(max(r.def ?? minimum, minimum), maximum)
        toggled = has(LV2URI.toggled)
        integer = has(LV2URI.integer)
        enumeration = has(LV2URI.enumeration)
        logarithmic = has(LV2URI.logarithmic)
        scalePoints = Lilv.scalePoints(plugin, port)
        if let node = Lilv.portValue(world, plugin, port, LV2URI.unit) {
            unitURI = Lilv.string(node)
            lilv_node_free(node)
        }
        if let node = Lilv.portValue(world, plugin, port, LV2URI.minimumSize) {
            minimumSize = Int(Lilv.float(node) ?? 0)
            lilv_node_free(node)
        }
    }
}
