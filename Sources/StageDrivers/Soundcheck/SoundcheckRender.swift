import StageCore

/// One soundcheck round: the recording rendered through a rack text offline, the
/// compressor's and de-esser's gain-reduction meters read after every half frame (5 ms)
/// and averaged (in dB) over the loud phrases and over the sibilants.
/// Thread: control (renders on the caller's thread).
enum SoundcheckRender {
    static func meters(
        text: String, file: String, registry: UnitRegistry, units: (dynamics: String?, deesser: String?),
        voice: [Float], analysis: SoundcheckAnalysis
    ) throws -> (compression: Float, deEssing: Float) {
        let rack = try RackReader(registry: registry).read(text: text, file: file)
        let block = max(1, analysis.frameLength / 2)
        let options = GraphCompiler.Options(
            sampleRate: analysis.sampleRate, maxFrames: block, hostInputChannels: 1, realTime: false)
        let plan = try GraphCompiler(registry: registry).compile(rack, options: options)
        func meter(_ id: String?) -> UnitMeter? {
            guard let id, let i = plan.unitIDs.firstIndex(of: id) else { return nil }
            return plan.units[i] as? UnitMeter
        }
        let compressor = meter(units.dynamics), deEsser = meter(units.deesser)
        var compression = [Float](repeating: 0, count: analysis.levels.count)
        var deEssing = compression
        var done = 0
        let audio = AudioData(channels: [voice], sampleRate: analysis.sampleRate)
        OfflineRenderer(plan: plan).render(input: audio, midi: nil, frames: voice.count, blockSize: block) { _, n in
            let frame = done / analysis.frameLength
            done += n
            guard frame < compression.count else { return }
            compression[frame] += (compressor?.meterValue ?? 0) / 2
            deEssing[frame] += (deEsser?.meterValue ?? 0) / 2
        }
        return (mean(compression, where: analysis.loud), mean(deEssing, where: analysis.sibilant))
    }

    static func mean(_ values: [Float], where mask: [Bool]) -> Float {
        let chosen = zip(values, mask).filter(\.1).map(\.0)
        return chosen.isEmpty ? 0 : chosen.reduce(0, +) / Float(chosen.count)
    }
}
