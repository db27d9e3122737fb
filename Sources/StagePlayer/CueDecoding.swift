import StageCore

/// Decodes a spoken cue (racks/README.md, "Spoken cues") for the `click` unit: the whole
/// file through the player's reader (libsndfile, libsamplerate to `sampleRate`), as mono
/// (the two sides averaged). At most 30 s. Thread: control (allocates, reads the disk).
public enum CueDecoding {
    public static let maxSeconds = 30.0

    public static func decode(path: String, sampleRate: Double) throws -> [Float] {
        let reader = try TrackReader(path: path, engineRate: sampleRate, loop: .off)
        let chunk = 4096
        let stereo = UnsafeMutablePointer<Float>.allocate(capacity: 2 * chunk)
        defer { stereo.deallocate() }
        var mono: [Float] = []
        let limit = Int(maxSeconds * sampleRate)
        while mono.count < limit {
            let got = reader.read(into: stereo, frames: chunk)
            guard got > 0 else { break }
            for k in 0..<got { mono.append(0.5 * (stereo[2 * k] + stereo[2 * k + 1])) }
        }
        guard !mono.isEmpty else { throw TrackError("\(path): no audio in it") }
        return mono
    }
}
