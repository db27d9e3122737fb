import CSndFile
import Foundation
import StageCore
import StageDrivers
import StagePlayer
import StageUnits

/// Test material for the player: files written with libsndfile into a fresh folder.
enum TrackFiles {
    /// A fresh temporary folder.
    static func folder() -> String {
        let path = NSTemporaryDirectory() + "stagerack-player-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes `channels` (one array each) as a float WAV (exact) or 24-bit FLAC.
    static func write(_ path: String, channels: [[Float]], rate: Int, flac: Bool = false) {
        var info = SF_INFO()
        info.samplerate = Int32(rate)
        info.channels = Int32(channels.count)
        info.format = flac ? Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24) : Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        let f = sf_open(path, Int32(SFM_WRITE), &info)!
        let frames = channels[0].count
        var interleaved = [Float](repeating: 0, count: frames * channels.count)
        for c in channels.indices { for i in 0..<frames { interleaved[i * channels.count + c] = channels[c][i] } }
        sf_writef_float(f, interleaved, sf_count_t(frames))
        sf_close(f)
    }

    /// A logarithmic sine sweep from `f0` to `f1` Hz at `level`, `seconds` long, on the
    /// left; the right is the same at half level (so the sides can be told apart).
    static func sweep(seconds: Double, rate: Double, f0: Double = 50, f1: Double = 12000, level: Float = 0.5) -> [[Float]] {
        let n = Int(seconds * rate)
        let k = log(f1 / f0)
        let left = (0..<n).map { i -> Float in
            let t = Double(i) / rate
            let phase = 2 * Double.pi * f0 * seconds / k * (exp(t / seconds * k) - 1)
            return level * Float(sin(phase))
        }
        return [left, left.map { $0 * 0.5 }]
    }
}

/// Racks with a player, compiled and rendered offline (the renderer's own loop).
enum PlayerRacks {
    /// The program's: the click speaks cues decoded by the player's reader.
    static let registry = UnitRegistry(
        StandardUnits.types.filter { $0.name != "click" } + PlayerUnits.types
            + [ClickUnitType(decodeCue: { try CueDecoding.decode(path: $0, sampleRate: $1) })])

    /// A rack: the player `track` (with `settings`, JSON members) into the output, and a
    /// `midi.map` (JSON list items).
    static func text(file: String, settings: String = "", map: String = "") -> String {
        """
        { "format": 2,
          "units": { "track": { "type": "player", "file": "\(file)"\(settings.isEmpty ? "" : ", " + settings) }, "out": { "type": "output" } },
          "connections": ["track -> out"],
          "midi": { "map": [\(map)] } }
        """
    }

    static func plan(_ text: String, rate: Double = 48000, block: Int = 128, realTime: Bool = false) throws -> RenderPlan {
        let rack = try RackReader(registry: registry).read(text: text, file: "test.json")
        return try GraphCompiler(registry: registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: rate, maxFrames: block, realTime: realTime))
    }

    /// Renders `frames` frames with MIDI `midi` (seconds, message) in blocks of `block`;
    /// returns [left, right].
    static func render(
        _ text: String, midi: [(Double, MIDIMessage)] = [], frames: Int, block: Int = 128, rate: Double = 48000
    ) throws -> [[Float]] {
        let p = try plan(text, rate: rate, block: block)
        let renderer = OfflineRenderer(plan: p)
        var out: [[Float]] = [[], []]
        let file = StandardMIDIFile(
            messages: midi.map { StandardMIDIFile.TimedMessage(seconds: $0.0, message: $0.1) }, duration: midi.last?.0 ?? 0)
        renderer.render(input: nil, midi: file, frames: frames, blockSize: block) { bus, n in
            for c in 0..<2 { out[c] += UnsafeBufferPointer(start: bus[c], count: n) }
        }
        return out
    }
}
