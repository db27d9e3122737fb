import Foundation
import StageTestSupport

/// Soundcheck recordings for the tests: espeak-ng speech (a low male voice and a higher
/// female one, with many s and sh sounds), peak-normalised, after 2.5 s of room noise (a
/// low rumble and a hiss), the noise going on under the voice 50 dB under its peak, as a
/// room heard through one microphone at one gain.
enum SoundcheckMaterial {
    static let sampleRate = 48000.0
    static let silenceSeconds = 2.5
    static let text = "Sing it loud: she sells sea shells on the sea shore. This is the soundcheck, one, two, one, two. "
        + "Yes, sister, the show starts at six, so let us sing it strong and sweet, and sometimes softly."

    /// espeak-ng voices: the default (male, English) and a female variant.
    static let voices = ["en", "en+f3"]

    /// The clean voice at 48 kHz, peak 1 (nil when espeak-ng or sox is missing).
    static func voice(_ name: String) -> [Float]? {
        lock.lock()
        defer { lock.unlock() }
        if let v = cache[name] { return v }
        let folder = NSTemporaryDirectory() + "stagerack-soundcheck-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard run("/usr/bin/espeak-ng", ["-v", name, "-s", "150", "-w", folder + "/v.wav", text]),
            run("/usr/bin/sox", [folder + "/v.wav", "-r", "48000", "-c", "1", "-e", "floating-point", "-b", "32", "-t", "raw",
                                 folder + "/v.f32", "norm", "-1"]),
            let data = FileManager.default.contents(atPath: folder + "/v.f32")
        else { return nil }
        let v = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        cache[name] = v
        return v
    }

    nonisolated(unsafe) static var cache: [String: [Float]] = [:]
    static let lock = NSLock()

    /// The recording: silence (room noise), then `voice` scaled to `peakDB`, then 0.5 s more,
    /// room noise `noiseBelowPeak` dB under the voice's peak all along.
    static func recording(_ voice: [Float], peakDB: Float, noiseBelowPeak: Float = 50, seed: UInt64) -> [Float] {
        let lead = Int(silenceSeconds * sampleRate)
        let gain = pow(10, peakDB / 20)
        var x = [Float](repeating: 0, count: lead + voice.count + Int(sampleRate / 2))
        for i in voice.indices { x[lead + i] = voice[i] * gain }
        let noise = roomNoise(count: x.count, seed: seed)
        let noiseLevel = pow(10, (peakDB - noiseBelowPeak) / 20)
        for i in x.indices { x[i] += noise[i] * noiseLevel }
        return x
    }

    /// Unit-RMS room noise: a rumble (leaky-integrated noise, most of its power under
    /// 100 Hz) and a hiss, 0.7 : 0.3 in amplitude.
    static func roomNoise(count: Int, seed: UInt64) -> [Float] {
        var g = SeededGenerator(seed: seed)
        var rumble = [Float](repeating: 0, count: count), hiss = rumble
        var y: Float = 0
        for i in 0..<count {
            let w = Float.random(in: -1...1, using: &g)
            y = 0.995 * y + w
            rumble[i] = y
            hiss[i] = Float.random(in: -1...1, using: &g)
        }
        let r = rms(rumble), h = rms(hiss)
        var out = [Float](repeating: 0, count: count)
        for i in 0..<count { out[i] = 0.7 * rumble[i] / r + 0.3 * hiss[i] / h }
        let o = rms(out)
        return out.map { $0 / o }
    }

    static func rms(_ x: [Float]) -> Float {
        var s: Double = 0
        for v in x { s += Double(v) * Double(v) }
        return Float((s / Double(max(x.count, 1))).squareRoot())
    }

    static func run(_ tool: String, _ args: [String]) -> Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }
}
