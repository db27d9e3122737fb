import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// `stagerack latency`'s analysis on synthetic recordings (a known delay, noise, nothing),
/// and the probe's loop on the file plugin (a capture file holding the signal where a
/// known round trip puts it).
final class LatencyProbeTests: XCTestCase {
    func testMLSIsMaximal() {
        for order in [10, 11, 12, 13] {
            let s = LatencyAnalysis.mls(order: order)
            XCTAssertEqual(s.count, (1 << order) - 1)
            // Circular autocorrelation: N at lag 0, −1 at every other lag.
            for lag in [1, 2, 3, 100, s.count / 2, s.count - 1] {
                var sum: Float = 0
                for i in 0..<s.count { sum += s[i] * s[(i + lag) % s.count] }
                XCTAssertEqual(sum, -1, "order \(order) lag \(lag)")
            }
        }
    }

    func recording(_ signal: [Float], at position: Int?, gain: Float, noise: Float, frames: Int, seed: UInt64 = 1) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        var x = (0..<frames).map { _ in noise * Float.random(in: -1.7...1.7, using: &generator) }  // RMS ≈ noise
        if let position { for i in 0..<signal.count where position + i < frames { x[position + i] += gain * signal[i] } }
        return x
    }

    func testFindsTheSignalFrameExact() throws {
        let signal = LatencyAnalysis.mls(order: 12)
        for (position, gain, noise) in [(12_000 + 256, Float(0.25), Float(0)), (12_000 + 1234, 0.25, 0.001), (12_777, 0.01, 0.01)] {
            let x = recording(signal, at: position, gain: gain, noise: noise, frames: 48_000)
            guard case .success(let f) = LatencyAnalysis.find(signal, in: x, earliest: 12_000) else {
                return XCTFail("gain \(gain) noise \(noise): not found")
            }
            XCTAssertEqual(f.position, position)
            XCTAssertGreaterThan(f.peakRatio, 12)
        }
    }

    func testNoSignalTooLowAndTooNoisyAreToldApart() {
        let signal = LatencyAnalysis.mls(order: 12)
        // A cable not connected: digital silence, or the faintest hiss.
        guard case .failure(.nothingCameBack) = LatencyAnalysis.find(signal, in: [Float](repeating: 0, count: 48_000), earliest: 12_000)
        else { return XCTFail("silence") }
        // Quiet noise, the signal far under it: too low.
        let low = recording(signal, at: 13_000, gain: 0.00001, noise: 0.0003, frames: 48_000)
        guard case .failure(.tooLow) = LatencyAnalysis.find(signal, in: low, earliest: 12_000) else { return XCTFail("too low") }
        // Loud noise with no signal in it: too noisy.
        let noisy = recording(signal, at: nil, gain: 0, noise: 0.3, frames: 48_000)
        guard case .failure(.tooNoisy(_, let n)) = LatencyAnalysis.find(signal, in: noisy, earliest: 12_000) else {
            return XCTFail("too noisy")
        }
        XCTAssertEqual(n, -10.5, accuracy: 1)
        XCTAssertTrue("\(LatencyAnalysis.Failure.nothingCameBack(peakDBFS: -240))".contains("connect the playback output to the capture input"))
    }

    /// The probe's loop on the file plugin: the capture file holds the signal 2 periods +
    /// 37 frames after the probe writes it; the probe finds that round trip.
    func testProbeOnTheFilePluginFindsAPlantedRoundTrip() throws {
        LiveAudioFileTests.setUp()
        let period = 64, lead = 12_000, trip = 2 * period + 37
        let signal = LatencyAnalysis.mls(order: 12)
        var capture = [Float](repeating: 0, count: 2 * 48_000 * 2)
        for i in 0..<signal.count { capture[2 * (lead + trip + i) + 1] = 0.25 * signal[i] }  // on the second channel
        let path = Fixtures.temporaryPath("probe-capture.raw")
        try capture.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path)) }
        setenv("STAGERACK_TEST_CAPTURE", path, 1)
        setenv("STAGERACK_TEST_PLAYBACK", Fixtures.temporaryPath("probe-playback.raw"), 1)
        let p = try PCMStream(PCMRequest(device: "stagerack_out", isCapture: false, sampleRate: 48000, channels: 2, periodFrames: period, periods: 2, format: .float))
        let c = try PCMStream(PCMRequest(device: "stagerack_in", isCapture: true, sampleRate: 48000, channels: 2, periodFrames: period, periods: 4, format: .float))
        let probe = LatencyProbe(playback: p, capture: c)
        XCTAssertEqual(probe.bufferingFrames, 2 * period)
        let r = try probe.record(signal: signal, gain: 0.25, lead: lead, listen: 24_000)
        guard case .success(let f) = LatencyAnalysis.find(signal, in: r.channels[1], earliest: r.signalStart) else { return XCTFail() }
        XCTAssertEqual(f.position - r.signalStart, trip)
        // What the probe played: the pre-fill, then silence until the lead, then the signal.
        let played = try Data(contentsOf: URL(fileURLWithPath: Fixtures.temporaryPath("probe-playback.raw")))
            .withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let first = played.firstIndex { $0 != 0 }!
        XCTAssertEqual(first / 2, 2 * period + lead + signal.firstIndex { $0 != 0 }!)
    }

    func testConfigNumberIsSetKeepingTheText() throws {
        let text = "// my interface\n{\n  \"playback\": \"hw:USB\", // the card\n  \"hardwareLatency\": 12,\n}\n"
        XCTAssertEqual(
            try RackTextEditor.settingNumber("hardwareLatency", to: 345, in: text),
            "// my interface\n{\n  \"playback\": \"hw:USB\", // the card\n  \"hardwareLatency\": 345,\n}\n")
        let added = try RackTextEditor.settingNumber("hardwareLatency", to: 7, in: "{\n  \"period\": 64\n}\n")
        XCTAssertEqual(added, "{\n  \"period\": 64,\n  \"hardwareLatency\": 7\n}\n")
        XCTAssertEqual(try JSONParser.parse(added)["hardwareLatency"]?.value.number, 7)
    }
}
