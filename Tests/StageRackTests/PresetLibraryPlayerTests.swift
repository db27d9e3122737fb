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

extension PresetLibraryTests {
    /// A Standard MIDI File (format 0, 480 ticks a beat at 120 BPM: 960 ticks a second) of
    /// controller presses and releases at the given seconds.
    func pedalFile(_ presses: [(seconds: Double, controller: UInt8, value: UInt8)]) -> Data {
        var track: [UInt8] = []
        var last = 0
        for p in presses {
            let tick = Int(p.seconds * 960)
            var delta = tick - last
            last = tick
            var bytes: [UInt8] = [UInt8(delta & 0x7F)]
            delta >>= 7
            while delta > 0 {
                bytes.insert(UInt8(delta & 0x7F) | 0x80, at: 0)
                delta >>= 7
            }
            track += bytes + [0xB0, p.controller, p.value]
        }
        track += [0, 0xFF, 0x2F, 0]
        let n = track.count
        return Data([0x4D, 0x54, 0x68, 0x64, 0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0, 0x4D, 0x54, 0x72, 0x6B,
                     UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + track)
    }

    /// The looper rack driven by its footswitch (CC 85) from a MIDI file, over the demo
    /// voice: press at 0.5 s records, press at 2.5 s closes a 2 s loop; after the voice
    /// stops (6 s) the loop goes on, the same every 2 s (to the room's tail: 50 dB under), at the
    /// level the phrase had.
    func testLooperRepeatsTheRecordedPhraseAfterTheVoiceStops() throws {
        let midi = folder + "/pedal.mid"
        try pedalFile([(0.5, 85, 127), (0.6, 85, 0), (2.5, 85, 127), (2.6, 85, 0)]).write(to: URL(fileURLWithPath: midi))
        let output = folder + "/looper.wav"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: stagerack)
        p.arguments = ["render", Self.repository + "/racks/looper.json", "--demo", "--midi", midi, "--duration", "11", "--output", output]
        p.standardError = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let out = try AudioData.read(path: output).channels[0]
        // 6.6–8.4 s and 8.6–10.4 s: two passes of the loop with the room's tail settled.
        let a = Array(window(out, 6.6, 8.4))
        let b = Array(window(out, 8.6, 10.4))
        let difference = Double(Measure.decibels(Measure.rms(zip(a, b).map { $0 - $1 }[...])))
        let phrase = level(out, 0.6, 2.4)
        let loop = level(out, 6.6, 8.4)
        print("looper rack: phrase \(formatNumber(phrase)) dB, loop after the voice \(formatNumber(loop)) dB, two passes differ by \(formatNumber(difference)) dB (the room's tail)")
        XCTAssertGreaterThan(loop, phrase - 3, "the loop is not heard after the voice")
        XCTAssertLessThan(difference, loop - 50, "the loop does not repeat every 2 s")
    }
}
