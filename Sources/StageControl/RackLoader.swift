import StageCore

/// The one way a rack becomes playable, for the first rack of a run and for every switch,
/// reload and offline song: read it (a setlist's song gets its track, tempo and key),
/// compile it for the devices' rate and period, make its engine and warm it on this thread
/// (`RenderEngine.warmUp`: one silent block, then reset, then the render side of its queues
/// handed over). The render thread's first block then finds its memory warm, and nothing of
/// a rack's set-up (LV2 `activate`, SoundFont loading) ever runs there. Errors are thrown
/// with every diagnostic, never hidden.
///
/// Thread: control (the main thread before the audio thread starts, then the switcher's).
public struct RackLoader: Sendable {
    public let registry: UnitRegistry
    public let options: GraphCompiler.Options
    /// Whether engines are warmed (true; false only to measure what the warm-up saves).
    public var warms = true

    public init(registry: UnitRegistry, options: GraphCompiler.Options) {
        self.registry = registry
        self.options = options
    }

    /// Song `index` of `setlist`, ready to play.
    public func song(_ index: Int, of setlist: Setlist) throws(RackError) -> RenderEngine {
        try engine(for: RackFiles.readSong(setlist, index, registry: registry))
    }

    /// `rack`, ready to play.
    public func engine(for rack: RackDescription) throws(RackError) -> RenderEngine {
        let plan = try GraphCompiler(registry: registry).compile(rack, options: options)
        let engine = RenderEngine(plan: plan)
        if warms { engine.warmUp() }
        return engine
    }
}
