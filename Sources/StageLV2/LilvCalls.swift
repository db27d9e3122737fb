import CLilv
import StageCore

/// The lilv calls StageRack makes, each a thin wrapper that names the C function it calls
/// and turns C strings, owned nodes and collections into Swift values (style rule 8).
///
/// lilv's world is not thread-safe: every function here is called with `LV2World`'s lock
/// held. Thread: control.
enum Lilv {
    /// `lilv_new_uri`, freed with `lilv_node_free` after `body`.
    static func withURI<T>(_ world: OpaquePointer, _ uri: String, _ body: (OpaquePointer?) -> T) -> T {
        let node = lilv_new_uri(world, uri)
        defer { lilv_node_free(node) }
        return body(node)
    }

    /// `lilv_node_as_string` (any node), nil for a null node.
    static func string(_ node: OpaquePointer?) -> String? {
        guard let node, let c = lilv_node_as_string(node) else { return nil }
        return String(cString: c)
    }

    /// `lilv_node_as_float` for a float or integer node.
    static func float(_ node: OpaquePointer?) -> Float? {
        guard let node else { return nil }
        if lilv_node_is_float(node) || lilv_node_is_int(node) { return lilv_node_as_float(node) }
        return nil
    }

    /// `lilv_file_uri_parse`: a local path from a `file://` URI (freed with `lilv_free`).
    static func path(fromFileURI node: OpaquePointer?) -> String? {
        guard let node, let uri = lilv_node_as_uri(node) else { return nil }
        guard let c = lilv_file_uri_parse(uri, nil) else { return nil }
        defer { lilv_free(c) }
        return String(cString: c)
    }

    /// The strings of a `LilvNodes` collection (`lilv_nodes_begin/get/next/is_end`),
    /// freed with `lilv_nodes_free` when `owned`.
    static func strings(_ nodes: UnsafeMutableRawPointer?, owned: Bool) -> [String] {
        guard let nodes = UnsafeRawPointer(nodes) else { return [] }
        defer { if owned { lilv_nodes_free(UnsafeMutableRawPointer(mutating: nodes)) } }
        var out: [String] = []
        var i = lilv_nodes_begin(nodes)
        while !lilv_nodes_is_end(nodes, i) {
            if let s = string(lilv_nodes_get(nodes, i)) { out.append(s) }
            i = lilv_nodes_next(nodes, i)
        }
        return out
    }

    /// Every plugin of the world (`lilv_world_get_all_plugins`, `lilv_plugins_begin/get/next`).
    static func allPlugins(_ world: OpaquePointer) -> [OpaquePointer] {
        guard let plugins = lilv_world_get_all_plugins(world) else { return [] }
        var out: [OpaquePointer] = []
        var i = lilv_plugins_begin(plugins)
        while !lilv_plugins_is_end(plugins, i) {
            if let p = lilv_plugins_get(plugins, i) { out.append(p) }
            i = lilv_plugins_next(plugins, i)
        }
        return out
    }

    /// `lilv_plugins_get_by_uri` over `lilv_world_get_all_plugins`.
    static func plugin(_ world: OpaquePointer, uri: String) -> OpaquePointer? {
        guard let plugins = lilv_world_get_all_plugins(world) else { return nil }
        return withURI(world, uri) { node in node.flatMap { lilv_plugins_get_by_uri(plugins, $0) } }
    }

    /// `lilv_plugin_get_uri`.
    static func uri(_ plugin: OpaquePointer) -> String { string(lilv_plugin_get_uri(plugin)) ?? "" }

    /// `lilv_plugin_get_name` (an owned node).
    static func name(_ plugin: OpaquePointer) -> String {
        let node = lilv_plugin_get_name(plugin)
        defer { lilv_node_free(node) }
        return string(node) ?? ""
    }

    /// `lilv_plugin_class_get_label` of `lilv_plugin_get_class`.
    static func className(_ plugin: OpaquePointer) -> String {
        guard let c = lilv_plugin_get_class(plugin) else { return "" }
        return string(lilv_plugin_class_get_label(c)) ?? ""
    }

    /// `lilv_port_get_range`: default, minimum, maximum (owned nodes).
    static func range(_ plugin: OpaquePointer, _ port: OpaquePointer) -> (def: Float?, min: Float?, max: Float?) {
        var def: OpaquePointer?
        var lo: OpaquePointer?
        var hi: OpaquePointer?
        lilv_port_get_range(plugin, port, &def, &lo, &hi)
        defer {
            lilv_node_free(def)
            lilv_node_free(lo)
            lilv_node_free(hi)
        }
        return (float(def), float(lo), float(hi))
    }

    /// `lilv_port_get_scale_points`: (value, label) sorted by value.
    static func scalePoints(_ plugin: OpaquePointer, _ port: OpaquePointer) -> [LV2ScalePoint] {
        guard let points = UnsafeRawPointer(lilv_port_get_scale_points(plugin, port)) else { return [] }
        defer { lilv_scale_points_free(UnsafeMutableRawPointer(mutating: points)) }
        var out: [LV2ScalePoint] = []
        var i = lilv_scale_points_begin(points)
        while !lilv_scale_points_is_end(points, i) {
            if let p = lilv_scale_points_get(points, i), let v = float(lilv_scale_point_get_value(p)) {
                out.append(LV2ScalePoint(value: v, label: string(lilv_scale_point_get_label(p)) ?? formatNumber(v)))
            }
            i = lilv_scale_points_next(points, i)
        }
        return out.sorted { $0.value < $1.value }
    }

    /// The first value of `predicate` on a port (`lilv_port_get_value`, `lilv_nodes_get_first`).
    static func portValue(
        _ world: OpaquePointer, _ plugin: OpaquePointer, _ port: OpaquePointer, _ predicate: String
    ) -> OpaquePointer? {
        withURI(world, predicate) { pred -> OpaquePointer? in
            guard let values = lilv_port_get_value(plugin, port, pred) else { return nil }
            defer { lilv_nodes_free(values) }
            guard let first = lilv_nodes_get_first(values) else { return nil }
            return lilv_node_duplicate(first)  // freed by the caller with `lilv_node_free`
        }
    }
}
