import CLilv
import CLoadOnUse
import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// An installed plugin in one line: for listings and suggestions.
public struct LV2PluginSummary: Sendable, Equatable {
    public var uri: String
    public var name: String
    public var className: String
}

/// lilv's world: every installed LV2 plugin, discovered once per process and kept.
///
/// `lilv_world_load_all` reads every bundle's Turtle files (on a Pi with many plugins
/// installed it takes seconds), so the world is loaded on first use (`shared`) and never
/// again: validating, loading and switching racks reuse it. Plugin descriptions are read
/// from it once and cached. lilv is not thread-safe; a lock guards every call. Thread:
/// control (never the render thread: loading reads files, and the lock may wait).
///
/// lilv itself is opened on first use too (CLoadOnUse), not at start-up: callers ask
/// `libraryFailure` before the first world is made, and report it as the rack's error.
public final class LV2World: @unchecked Sendable {
    /// nil once lilv is open, else why not (opened on first use, once). Thread: control.
    public static let libraryFailure: String? = libraryLoadFailure { stage_load_lilv($0, $1) }

    /// The process's world, loaded on first use. Thread: control.
    public static let shared = LV2World()

    /// Wall-clock seconds `lilv_world_load_all` took.
    public let loadSeconds: Double

    struct State {
        let world: OpaquePointer
        /// Made on first use: reading every plugin's name costs more than loading the world.
        var summaries: [LV2PluginSummary]?
        var infos: [String: LV2PluginInfo] = [:]
        /// Presets by plugin URI, and each preset's port values, read on first use.
        var presets: [String: [LV2Preset]] = [:]
        var presetValues: [String: [String: Float]] = [:]
    }
    private var guarded: State
    private let lock: UnsafeMutablePointer<pthread_mutex_t>

    /// Runs `body` with the lock held.
    func withLock<T>(_ body: (inout State) -> T) -> T {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return body(&guarded)
    }

    /// Loads every bundle on LV2_PATH (lilv's default: ~/.lv2, /usr/local/lib/lv2,
    /// /usr/lib/lv2 and the multiarch folder). Thread: control.
    public init() {
        if let failure = Self.libraryFailure { fatalError("LV2World made without lilv (ask LV2World.libraryFailure first): \(failure)") }
        let world = lilv_world_new()!
        var t0 = timespec()
        var t1 = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t0)
        lilv_world_load_all(world)
        clock_gettime(CLOCK_MONOTONIC, &t1)
        loadSeconds = Double(t1.tv_sec - t0.tv_sec) + Double(t1.tv_nsec - t0.tv_nsec) * 1e-9
        guarded = State(world: world, summaries: nil)
        lock = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
    }

    /// Every installed plugin, sorted by URI. Thread: control.
    public var plugins: [LV2PluginSummary] {
        withLock { s in
            if let list = s.summaries { return list }
            let list = LV2World.summaries(s.world)
            s.summaries = list
            return list
        }
    }

    /// The description of the plugin with `uri`, or nil when none is installed. Thread: control.
    public func plugin(_ uri: String) -> LV2PluginInfo? {
        withLock { s -> LV2PluginInfo? in
            if let info = s.infos[uri] { return info }
            guard let p = Lilv.plugin(s.world, uri: uri) else { return nil }
            let info = LV2PluginInfo(world: s.world, plugin: p)
            s.infos[uri] = info
            return info
        }
    }

    /// Adds the bundle in folder `path` (`lilv_world_load_bundle`): plugins outside LV2_PATH,
    /// such as the tests' own. Thread: control.
    public func loadBundle(path: String) {
        let folder = path.hasSuffix("/") ? path : path + "/"
        withLock { s in
            let node = lilv_new_file_uri(s.world, nil, folder)
            lilv_world_load_bundle(s.world, node)
            lilv_node_free(node)
            s.summaries = nil
            s.infos = [:]
            s.presets = [:]
        }
    }

    /// Makes an instance of `uri` (`lilv_plugin_instantiate`: opens the plugin's library
    /// and calls its `instantiate`), nil when the plugin returns none. Thread: control.
    func instantiate(
        _ uri: String, sampleRate: Double, features: UnsafePointer<UnsafePointer<LV2_Feature>?>
    ) -> UnsafeMutablePointer<LilvInstance>? {
        withLock { s in
            guard let p = Lilv.plugin(s.world, uri: uri) else { return nil }
            return lilv_plugin_instantiate(p, sampleRate, features)
        }
    }

    /// Frees an instance (`lilv_instance_free`: the plugin's `cleanup`, and the library's
    /// reference in the world), under the lock. Thread: control.
    func free(_ instance: UnsafeMutablePointer<LilvInstance>) {
        withLock { _ in lilv_instance_free(instance) }
    }

    private static func summaries(_ world: OpaquePointer) -> [LV2PluginSummary] {
        Lilv.allPlugins(world).map {
            LV2PluginSummary(uri: Lilv.uri($0), name: Lilv.name($0), className: Lilv.className($0))
        }.sorted { $0.uri < $1.uri }
    }
}
