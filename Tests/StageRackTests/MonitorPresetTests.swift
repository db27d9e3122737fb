import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// racks/monitor.json: the PA on channels 1-2 (OUT.wav) and the singer's ear mix on 3-4
/// (OUT-ears.wav), from the same strip. Rendered with --demo and measured against its
/// comment: the ears have more voice, less reverb, no echo, and no added latency.
extension PresetLibraryTests {
    func ears(of rack: String) throws -> [Float] {
        try AudioData.read(path: folder + "/" + rack + "-ears.wav").channels[0]
    }

    func testMonitorEarMixHasMoreVoiceLessReverbAndNoEcho() throws {
        let (audio, log) = try demo("monitor.json")
        XCTAssertTrue(log.contains("monitor.json-ears.wav"), log)
        let pa = audio.channels[0], ear = try ears(of: "monitor.json")
        // The last sung note (4.2–5.8 s): the ears' voice 0.6 dB up (the compressor is shared;
        // was 4 dB, which put the ears 3 LU over the PA and into the limiter: Tests/loudness).
        let paVoice = level(pa, 4.2, 5.8), earVoice = level(ear, 4.2, 5.8)
        XCTAssertEqual(earVoice - paVoice, 0.6, accuracy: 1.0, "PA \(paVoice) dB, ears \(earVoice) dB")
        // After the voice stops: what rings on, relative to each mix's voice, is far less in the ears.
        let paTail = level(pa, 6.05, 7) - paVoice, earTail = level(ear, 6.05, 7) - earVoice
        XCTAssertLessThan(earTail, paTail - 10, "tails: PA \(paTail) dB, ears \(earTail) dB under their voice")
        XCTAssertGreaterThan(earTail, -70, "the ears keep a little of the hall")
        // Both start on the voice's own sample: the rack adds no latency to either.
        let reference = try dry().channels[0]
        let a = reference.firstIndex { abs($0) > 1e-3 }!
        for (name, x) in [("PA", pa), ("ears", ear)] {
            let b = x.firstIndex { abs($0) > 1e-3 }!
            XCTAssertLessThanOrEqual(abs(a - b), 2, "\(name): onset at \(b), the voice's at \(a)")
        }
    }

    func testMonitorEchoReachesOnlyThePA() throws {
        // Reverb returns off in both mixes: what rings after the voice is the echo alone.
        _ = try variant("monitor.json", [(#""gain3": -12"#, #""gain3": -96"#), (#""gain2": -24"#, #""gain2": -96"#)])
        let pa = try AudioData.read(path: folder + "/variant-monitor.json.wav").channels[0]
        let ear = try ears(of: "variant-monitor.json")
        XCTAssertGreaterThan(level(pa, 6.05, 6.8), level(pa, 4.2, 5.8) - 30, "the PA has its echo")
        XCTAssertLessThan(level(ear, 6.05, 6.8), -90, "the ears have none")
    }
}
