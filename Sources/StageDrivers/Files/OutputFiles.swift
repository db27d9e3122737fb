import StageCore

/// Offline, one file per output unit: `OUT.wav` for the first (main) output, `OUT-NAME.wav`
/// for each other one (NAME its unit id), each holding that output's own channels (two, or
/// one for a mono output). Fed the renderer's whole device-wide output block by block.
/// Thread: the render command's (one thread).
public final class OutputFiles {
    public let paths: [String]
    let writers: [AudioFileWriter]
    let channels: [[Int]]
    /// One channel-pointer list per file, pointing into the block being written.
    let pointers: [UnsafeMutablePointer<UnsafeMutablePointer<Float>>]

    /// Opens one file per output of `outputs` (from the first song's plan).
    public init(path: String, outputs: [PlanOutput], sampleRate: Double, maxFrames: Int) throws(AudioFileError) {
        var writers: [AudioFileWriter] = []
        for (i, o) in outputs.enumerated() {
            writers.append(
                try AudioFileWriter(
                    path: Self.path(path, output: o.unitID, index: i), channels: o.deviceChannels.count, sampleRate: sampleRate,
                    maxFrames: maxFrames))
        }
        self.writers = writers
        paths = writers.map(\.path)
        channels = outputs.map(\.deviceChannels)
        pointers = outputs.map { .allocate(capacity: $0.deviceChannels.count) }
    }

    deinit { for p in pointers { p.deallocate() } }

    /// Where output `index` (unit `output`) goes: `path` itself for the first, else the
    /// unit's id before the extension (`live.wav` → `live-ears.wav`).
    public static func path(_ path: String, output: String, index: Int) -> String {
        guard index > 0 else { return path }
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        guard let dot = path[slash...].lastIndex(of: "."), dot > slash else { return "\(path)-\(output)" }
        return "\(path[..<dot])-\(output)\(path[dot...])"
    }

    /// Appends `frames` of each output's channels of `bus` (silence for a channel `bus`
    /// lacks: it cannot happen with the plan's own width).
    public func write(_ bus: AudioBus, frames: Int) throws(AudioFileError) {
        for (k, writer) in writers.enumerated() {
            for (j, c) in channels[k].enumerated() { pointers[k][j] = bus[min(c, bus.channelCount - 1)] }
            try writer.write(AudioBus(channelPointers: pointers[k], channelCount: channels[k].count), frames: frames)
        }
    }

    /// Finishes every file.
    public func close() throws(AudioFileError) {
        for w in writers { try w.close() }
    }
}
