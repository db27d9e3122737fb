import StageCore
import StageDrivers
import StageTestSupport

/// Helpers to compile rack text and render it in tests.
enum RackBuilding {
    static func plan(_ text: String, sampleRate: Double = 48000, maxFrames: Int = 512, inputChannels: Int = 1) throws -> RenderPlan {
        let rack = try RackReader(registry: Fixtures.registry).read(text: text, file: "test.json")
        return try GraphCompiler(registry: Fixtures.registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: sampleRate, maxFrames: maxFrames, hostInputChannels: inputChannels))
    }

    /// Renders `frames` frames through `text`'s rack in blocks of `block`; returns [left, right].
    static func render(
        _ text: String, input: [[Float]], midi: [StandardMIDIFile.TimedMessage] = [], frames: Int, block: Int,
        sampleRate: Double = 48000
    ) throws -> [[Float]] {
        let p = try plan(text, sampleRate: sampleRate, maxFrames: block, inputChannels: max(input.count, 1))
        let renderer = OfflineRenderer(plan: p)
        var out: [[Float]] = [[], []]
        let file = StandardMIDIFile(messages: midi, duration: midi.last?.seconds ?? 0)
        renderer.render(
            input: AudioData(channels: input, sampleRate: sampleRate), midi: file, frames: frames, blockSize: block
        ) { bus, n in
            for c in 0..<2 { out[c] += UnsafeBufferPointer(start: bus[c], count: n) }
        }
        return out
    }
}
