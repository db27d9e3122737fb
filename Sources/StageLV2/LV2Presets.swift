import CLV2Host
import CLilv
import StageCore

/// A preset a plugin's bundle ships (`pset:Preset` with `lv2:appliesTo` the plugin).
public struct LV2Preset: Sendable, Equatable {
    /// Its `rdfs:label`, the name a rack file selects it by.
    public var name: String
    public var uri: String
}

extension LV2World {
    /// The presets of plugin `uri`, sorted by name (`lilv_plugin_get_related` with
    /// `pset:Preset`, each loaded with `lilv_world_load_resource` for its label). Read once
    /// per plugin and kept. Thread: control.
    public func presets(_ uri: String) -> [LV2Preset] {
        withLock { s -> [LV2Preset] in
            if let list = s.presets[uri] { return list }
            guard let plugin = Lilv.plugin(s.world, uri: uri) else { return [] }
            let world = s.world
            let related = Lilv.withURI(world, LV2URI.preset) { lilv_plugin_get_related(plugin, $0) }
            var list: [LV2Preset] = []
            for presetURI in Lilv.strings(related, owned: true) {
                Lilv.withURI(world, presetURI) { node in
                    lilv_world_load_resource(world, node)
                    let label = Lilv.withURI(world, LV2URI.label) { lilv_world_get(world, node, $0, nil) }
                    defer { lilv_node_free(label) }
                    list.append(LV2Preset(name: Lilv.string(label) ?? presetURI, uri: presetURI))
                }
            }
            list.sort { $0.name < $1.name }
            s.presets[uri] = list
            return list
        }
    }

    /// The port values preset `presetURI` sets, by port symbol (`lilv_state_new_from_world`,
    /// `lilv_state_emit_port_values`). Thread: control.
    public func presetPortValues(_ presetURI: String) -> [String: Float] {
        withLock { s -> [String: Float] in
            if let values = s.presetValues[presetURI] { return values }
            guard let state = Self.loadState(s.world, presetURI) else { return [:] }
            defer { lilv_state_free(state) }
            let box = PortValues()
            lilv_state_emit_port_values(state, collectPortValue, Unmanaged.passUnretained(box).toOpaque())
            s.presetValues[presetURI] = box.values
            return box.values
        }
    }

    /// Restores preset `presetURI`'s state into an instance (`lilv_state_restore` without
    /// port values: those are the unit's parameters). The plugin's `restore` runs here, on
    /// the control thread, before the instance renders. Thread: control.
    func restorePreset(
        _ presetURI: String, into instance: UnsafeMutablePointer<LilvInstance>,
        features: UnsafePointer<UnsafePointer<LV2_Feature>?>
    ) throws(UnitError) {
        let state = withLock { s in Self.loadState(s.world, presetURI) }
        guard let state else { throw UnitError("lv2: preset \(presetURI) could not be read") }
        defer { lilv_state_free(state) }
        lilv_state_restore(state, instance, nil, nil, 0, features)
    }

    /// `lilv_state_new_from_world` for a preset (loaded first). Under the lock.
    private static func loadState(_ world: OpaquePointer, _ presetURI: String) -> OpaquePointer? {
        Lilv.withURI(world, presetURI) { node -> OpaquePointer? in
            lilv_world_load_resource(world, node)
            let map = stage_lv2_urid_map_feature().pointee.data.assumingMemoryBound(to: LV2_URID_Map.self)
            return lilv_state_new_from_world(world, map, node)
        }
    }
}

/// Port values gathered by `collectPortValue`. Thread: control.
private final class PortValues {
    var values: [String: Float] = [:]
}

/// `LilvSetPortValueFunc`: a float, double, int or bool port value, by symbol.
private let collectPortValue: @convention(c) (
    UnsafePointer<CChar>?, UnsafeMutableRawPointer?, UnsafeRawPointer?, UInt32, UInt32
) -> Void = { symbol, userData, value, size, type in
    guard let symbol, let userData, let value else { return }
    let box = Unmanaged<PortValues>.fromOpaque(userData).takeUnretainedValue()
    let v: Float?
    switch (type, size) {
    case (stage_lv2_map(LV2URI.atomFloat), 4): v = value.loadUnaligned(as: Float.self)
    case (stage_lv2_map(LV2URI.atomDouble), 8): v = Float(value.loadUnaligned(as: Double.self))
    case (stage_lv2_map(LV2URI.atomInt), 4), (stage_lv2_map(LV2URI.atomBool), 4): v = Float(value.loadUnaligned(as: Int32.self))
    default: v = nil
    }
    if let v { box.values[String(cString: symbol)] = v }
}
