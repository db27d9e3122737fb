import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// The racks with a backing track (`ktv.json`), rendered with --demo like the others.
extension PresetLibraryTests {
    /// Power of `a` minus power of `b` (the part `a` has that `b` lacks), in dB.
    func difference(_ a: Double, _ b: Double) -> Double { 10 * log10(max(pow(10, a / 10) - pow(10, b / 10), 1e-20)) }

    /// The KTV rack plays its track from the song's start, under the voice: the track (the
    /// rack with it minus the rack without it) sits 4–15 dB under the voice while she sings,
    /// and is heard on its own after the voice stops.
    func testKTVPlaysTheBackingTrackUnderTheVoice() throws {
        let track = Self.repository + "/racks/tracks/demo-backing.ogg"
        XCTAssertLessThan(try FileManager.default.attributesOfItem(atPath: track)[.size] as! Int, 100_000, "the shipped track stays small")
        let ktv = try variant("ktv.json", [("\"tracks/demo-backing.ogg\"", "\"\(track)\"")]).channels[0]
        let silent = try variant(
            "ktv.json", [("\"tracks/demo-backing.ogg\"", "\"\(track)\""), ("\"startOnLoad\": true", "\"startOnLoad\": false")]
        ).channels[0]
        let voice = level(silent, 0.2, 5.8)
        let under = voice - difference(level(ktv, 0.2, 5.8), voice)
        let alone = difference(level(ktv, 6.2, 7.8), level(silent, 6.2, 7.8))
        print("ktv: voice \(formatNumber(voice)) dB, track \(formatNumber(under)) dB under it, track alone after the voice \(formatNumber(alone)) dB")
        XCTAssertGreaterThan(under, 4, "the track covers the voice")
        XCTAssertLessThan(under, 15, "the track is lost under the voice")
        XCTAssertGreaterThan(alone, -40, "the track is not heard after the voice")
        XCTAssertGreaterThan(alone, level(silent, 6.2, 7.8) + 10, "the reverb's tail is all there is")
    }
}
