import Foundation
import StageCore
import StageTestSupport
import XCTest

/// The demo voice's consonants (`DemoMaterial`): an "s" at 0.5 s and 3.0 s, a "t" at
/// 1.0 s, a "k" at 2.5 s, a breath from 3.73 to 3.98 s; measured on the dry demo and
/// through `vocal-clean`, whose de-esser must turn the "s" down (what `--demo` lets a
/// singer hear).
extension PresetLibraryTests {
    /// dB of the energy above 4 kHz over `from`…`to` s.
    func highBand(_ x: [Float], _ from: Double, _ to: Double) -> Double {
        let h = SpectrumMeasure.highPassed(x, cutoff: 4000)
        let a = Int(from * rate), b = Int(to * rate)
        let ms = h[a..<b].reduce(0) { $0 + $1 * $1 } / Double(b - a)
        return 10 * log10(max(ms, 1e-24))
    }

    func testTheDemoVoiceHasSibilantsPlosivesAndABreath() throws {
        let x = try dry().channels[0]
        let vowelHigh = highBand(x, 0.2, 0.4), vowel = level(x, 0.2, 0.4)
        for (name, from, to) in [("s", 0.505, 0.585), ("s", 3.005, 3.085), ("t", 1.018, 1.038)] {
            let share = highBand(x, from, to) - level(x, from, to)
            print("demo \(name) at \(from) s: \(formatNumber(level(x, from, to) - vowel)) dB against the vowel, \(formatNumber(share)) dB of it above 4 kHz (the vowel: \(formatNumber(vowelHigh - vowel)) dB)")
            XCTAssertGreaterThan(share, name == "s" ? -3 : -5, "\(name): mostly above 4 kHz (a t's burst is centred at 4 kHz)")
            XCTAssertGreaterThan(share, vowelHigh - vowel + 6, "\(name): brighter than the vowel")
        }
        let k = level(x, 2.503, 2.533)
        XCTAssertGreaterThan(k, vowel - 15, "the k is a burst")
        let breath = level(x, 3.76, 3.95)
        XCTAssertEqual(breath - vowel, -28, accuracy: 4, "a soft breath")
        XCTAssertLessThan(level(x, 6.2, 8.5), -90, "silent after the phrase")
    }

    func testCleanVocalsDeEsserTurnsTheDemosSDown() throws {
        let on = try demo("vocal-clean.json").audio.channels[0]
        let off = try variant("vocal-clean.json", [("\"range\": 6", "\"range\": 0")]).channels[0]
        let s = highBand(on, 3.005, 3.085) - highBand(off, 3.005, 3.085)
        let vowel = level(on, 4.3, 5.7) - level(off, 4.3, 5.7)
        print("vocal-clean de-esser on the demo's s: \(formatNumber(s)) dB above 4 kHz; the vowel \(formatNumber(vowel)) dB")
        XCTAssertLessThan(s, -2, "the s is turned down")
        XCTAssertEqual(vowel, 0, accuracy: 0.5, "the vowel is not")
    }
}
