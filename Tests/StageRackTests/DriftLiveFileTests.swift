import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// `play --drift-compensation`'s path through `LiveAudio` on two alsa-lib `file` plugin
/// devices (capture from one file, playback into another): neither keeps time, so the
/// capture card follows the playback clock (drift 0, ratio 1) and the input arrives
/// delayed by exactly the backlog's target, through libsamplerate, unharmed.
final class DriftLiveFileTests: XCTestCase {
    override class func setUp() {
        let path = Fixtures.temporaryPath("alsa-drift-test.conf")
        try? LiveAudioFileTests.config.write(toFile: path, atomically: true, encoding: .utf8)
        setenv("ALSA_CONFIG_PATH", "/usr/share/alsa/alsa.conf:\(path)", 1)
    }

    func testCaptureOnAnotherDeviceIsResampledAndDelayedByTheTarget() throws {
        let frames = 19200
        let period = 128
        let tone = Measure.sine(frequency: 1000, frames: frames + 4800, amplitude: 0.5)
        let capturePath = Fixtures.temporaryPath("drift-capture.raw")
        let playbackPath = Fixtures.temporaryPath("drift-playback.raw")
        var raw = Data()
        for v in tone { withUnsafeBytes(of: v) { raw.append(contentsOf: $0) } }
        try raw.write(to: URL(fileURLWithPath: capturePath))
        setenv("STAGERACK_TEST_CAPTURE", capturePath, 1)
        setenv("STAGERACK_TEST_PLAYBACK", playbackPath, 1)
        let playback = try PCMStream(PCMRequest(device: "stagerack_out", isCapture: false, sampleRate: 48000, channels: 2,
                                                periodFrames: period, periods: 2, format: .float))
        let capture = try PCMStream(PCMRequest(device: "stagerack_in", isCapture: true, sampleRate: 48000, channels: 1,
                                               periodFrames: period, periods: 4, format: .float))
        let rack = """
            { "format": 1, "units": { "mic": { "type": "input" }, "out": { "type": "output" } }, "connections": [ "mic -> out" ] }
            """
        let plan = try RackBuilding.plan(rack, maxFrames: period, inputChannels: 1)
        let drift = try DriftCompensator.between(capture: capture, playback: playback)
        let target = Int(drift.controller.targetBacklog)
        XCTAssertEqual(target, period + period + DriftCompensator.Quality.medium.lookaheadFrames)
        let live = LiveAudio(playback: playback, capture: capture, player: RackPlayer(engine: RenderEngine(plan: plan)),
                             frameLimit: frames, drift: drift)
        guard case .finished = live.run() else { return XCTFail("the run did not finish") }
        let s = live.status()
        XCTAssertEqual(s.xruns, 0)
        let d = try XCTUnwrap(s.drift, "the status carries the drift")
        print("two file-plugin devices: drift \(d.ppm) ppm, ratio \(d.ratio), short \(d.shortFrames), dropped \(d.droppedFrames)")
        XCTAssertEqual(d.ppm, 0, accuracy: 0.01)
        XCTAssertEqual(d.ratio, 1, accuracy: 1e-8)
        XCTAssertEqual(d.shortFrames, 0)
        XCTAssertEqual(d.droppedFrames, 0)

        let written = try Data(contentsOf: URL(fileURLWithPath: playbackPath))
        let out = written.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let prefill = period * 2
        XCTAssertEqual(out.count, prefill + frames)
        // Silence until the target's delay, then the tone, sample for sample (libsamplerate
        // at a ratio of 1 passes a 1 kHz sine within its ripple).
        let delay = prefill + target
        XCTAssertLessThan(Measure.peak(out[..<(delay - 64)]), 1e-6, "nothing before the delay (less the converter's filter)")
        let settled = (delay + 256)..<out.count
        let error = settled.map { abs(out[$0] - tone[$0 - delay]) }.max()!
        print("two file-plugin devices: delay \(target) frames, largest error after it \(error)")
        XCTAssertLessThan(error, 1e-3)
    }
}
