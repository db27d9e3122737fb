import StageCore
import StageSynth
import StageTestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Shared set-up for the synth tests: fonts, harnesses, renders.
enum SynthTest {
    static let timGM = "/usr/share/sounds/sf2/TimGM6mb.sf2"
    static let sampleRate = 48000.0

    /// The repository's bundled font, when it is present in this checkout.
    static var bundled: String? {
        let search = SoundFontSearch(rackDirectory: "")
        return try? search.resolve(SoundFontSearch.bundledName).path
    }

    /// Skips the test unless Debian's timgm6mb-soundfont is installed.
    static func requireTimGM() throws {
        if access(timGM, R_OK) != 0 {
            throw XCTSkip("timgm6mb-soundfont is not installed (apt-get install timgm6mb-soundfont)")
        }
    }

    /// A harness around a synth unit with `settings` (TimGM6mb unless a soundfont is given).
    static func harness(
        _ settings: [String: JSONValue] = [:], parameters: [String: Float] = [:], maxFrames: Int = 512
    ) throws -> UnitHarness {
        var s = settings
        if s["soundfont"] == nil { s["soundfont"] = .string(timGM) }
        return try UnitHarness(
            type: SynthUnitType(), settings: s, parameters: parameters, sampleRate: sampleRate, maxFrames: maxFrames)
    }

    static func synth(_ h: UnitHarness) -> SynthUnit { h.unit as! SynthUnit }

    /// Seconds to frames.
    static func frames(_ seconds: Double) -> Int { Int(seconds * sampleRate) }

    /// Renders one note (channel 1) held for `hold` seconds, then `after` seconds more;
    /// returns the left channel.
    static func renderNote(
        _ h: UnitHarness, key: Int = 69, velocity: Int = 100, hold: Double = 1.0, after: Double = 0, blockSize: Int? = nil
    ) -> [Float] {
        let start = h.sampleTime
        h.send(.noteOn(channel: 0, note: key, velocity: velocity), atFrame: start)
        h.send(.noteOff(channel: 0, note: key), atFrame: start + Int64(frames(hold)))
        return h.render(frames: frames(hold + after), blockSize: blockSize)[0]
    }

    /// Frequency of the strongest peak in `low…high` over `from…to` seconds of `x`.
    static func pitch(_ x: [Float], from: Double = 0.15, to: Double = 0.65, low: Double, high: Double) -> Double {
        Measure.dominantFrequency(in: x[frames(from)..<frames(to)], sampleRate: sampleRate, low: low, high: high)
    }
}
