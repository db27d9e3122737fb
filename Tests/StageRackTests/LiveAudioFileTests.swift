import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// Live audio through alsa-lib's own `file` plugin (no sound hardware needed): a capture
/// file is the microphone, playback goes into a file. The result must equal the offline
/// render of the same rack and input, for every sample format.
final class LiveAudioFileTests: XCTestCase {
    static let config = """
        pcm.stagerack_null { type null }
        pcm.stagerack_out { type file  slave.pcm "stagerack_null"  format "raw"  truncate true
          file { @func getenv vars [ STAGERACK_TEST_PLAYBACK ] default "/dev/null" } }
        pcm.stagerack_in { type file  slave.pcm "stagerack_null"  format "raw"  file "/dev/null"
          infile { @func getenv vars [ STAGERACK_TEST_CAPTURE ] default "/dev/null" } }
        """

    let rack = """
        { "format": 1, "units": { "mic": { "type": "input" }, "vox": { "type": "gain", "params": { "gain": -6 } },
            "mix": { "type": "mixer", "inputs": 1, "params": { "pan1": 0.3 } }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> mix -> out" ] }
        """

    override class func setUp() {
        let path = Fixtures.temporaryPath("alsa-test.conf")
        try? config.write(toFile: path, atomically: true, encoding: .utf8)
        setenv("ALSA_CONFIG_PATH", "/usr/share/alsa/alsa.conf:\(path)", 1)
    }

    /// Stereo test input: two different tones, under full scale.
    func input(frames: Int) -> [[Float]] {
        [Measure.sine(frequency: 440, frames: frames, amplitude: 0.6), Measure.sine(frequency: 660, frames: frames, amplitude: 0.4)]
    }

    func encode(_ channels: [[Float]], _ format: PCMSampleFormat) -> Data {
        let frames = channels[0].count
        var data = Data(count: frames * channels.count * format.bytesPerSample)
        let storage = BusStorage(bufferCount: channels.count, maxFrames: frames)
        for c in 0..<channels.count { channels[c].withUnsafeBufferPointer { storage.buffer(c).update(from: $0.baseAddress!, count: frames) } }
        data.withUnsafeMutableBytes {
            format.encode(storage.bus(first: 0, channels: channels.count), frames: frames, into: $0.baseAddress!, deviceChannels: channels.count)
        }
        return data
    }

    func decode(_ data: Data, _ format: PCMSampleFormat, channels: Int) -> [[Float]] {
        let frames = data.count / (channels * format.bytesPerSample)
        let storage = BusStorage(bufferCount: channels, maxFrames: max(frames, 1))
        data.withUnsafeBytes {
            format.decode($0.baseAddress!, deviceChannels: channels, frames: frames, into: storage.bus(first: 0, channels: channels))
        }
        return (0..<channels).map { Array(UnsafeBufferPointer(start: storage.buffer($0), count: frames)) }
    }

    func testPlayMatchesRenderForEverySampleFormat() throws {
        let frames = 9600
        let period = 128
        let source = input(frames: frames)
        let reference = try RackBuilding.render(rack, input: source, frames: frames, block: period)
        for format in PCMSampleFormat.allCases {
            let capturePath = Fixtures.temporaryPath("capture-\(format.rawValue).raw")
            let playbackPath = Fixtures.temporaryPath("playback-\(format.rawValue).raw")
            // Quantize the input as the device would, so only the output conversion differs.
            let captured = encode(source, format)
            try captured.write(to: URL(fileURLWithPath: capturePath))
            setenv("STAGERACK_TEST_CAPTURE", capturePath, 1)
            setenv("STAGERACK_TEST_PLAYBACK", playbackPath, 1)

            let playback = try PCMStream(PCMRequest(device: "stagerack_out", isCapture: false, sampleRate: 48000, channels: 2,
                                                    periodFrames: period, periods: 2, format: format))
            let capture = try PCMStream(PCMRequest(device: "stagerack_in", isCapture: true, sampleRate: 48000, channels: 2,
                                                   periodFrames: period, periods: 2, format: format))
            XCTAssertEqual(playback.configuration.format, format)
            XCTAssertEqual(playback.configuration.periodFrames, period)
            let plan = try RackBuilding.plan(rack, maxFrames: period, inputChannels: 2)
            let live = LiveAudio(playback: playback, capture: capture, player: RackPlayer(engine: RenderEngine(plan: plan)),
                                 frameLimit: frames)
            guard case .finished = live.run() else { return XCTFail("\(format): the run did not finish") }
            XCTAssertEqual(live.status().xruns, 0)

            let written = try Data(contentsOf: URL(fileURLWithPath: playbackPath))
            let out = decode(written, format, channels: 2)
            let prefill = period * 2
            XCTAssertEqual(out[0].count, prefill + frames, "\(format): pre-fill plus the rendered frames")
            let expected = try RackBuilding.render(rack, input: decode(captured, format, channels: 2), frames: frames, block: period)
            let tolerance: Float = format == .s16 ? 1.0 / 32768 : format == .float ? 1e-7 : 1.0 / 8_388_608
            for c in 0..<2 {
                XCTAssertEqual(Measure.peak(out[c][0..<prefill]), 0, "\(format): the pre-fill is silence")
                let diff = zip(out[c][prefill...], expected[c]).map { abs($0 - $1) }.max()!
                XCTAssertLessThanOrEqual(diff, tolerance, "\(format) channel \(c)")
            }
            // And against the unquantized render, within the format's resolution.
            let loose: Float = format == .s16 ? 3.0 / 32768 : 1e-5
            XCTAssertLessThanOrEqual(zip(out[0][prefill...], reference[0]).map { abs($0 - $1) }.max()!, loose, "\(format)")
        }
    }

    func testAForcedStallIsRecoveredAsAnXrun() throws {
        // The file plugin has no clock, so a stall alone cannot overrun it; the recovery
        // path is exercised through a real kernel in the VM harness. Here: the count starts
        // at zero and a clean run reports none.
        setenv("STAGERACK_TEST_PLAYBACK", Fixtures.temporaryPath("stall.raw"), 1)
        let playback = try PCMStream(PCMRequest(device: "stagerack_out", isCapture: false, sampleRate: 48000, channels: 2,
                                                periodFrames: 64, periods: 2))
        let plan = try RackBuilding.plan(#"{ "format": 1, "units": { "out": { "type": "output" } } }"#, maxFrames: 64)
        let live = LiveAudio(playback: playback, capture: nil, player: RackPlayer(engine: RenderEngine(plan: plan)), frameLimit: 640)
        guard case .finished = live.run() else { return XCTFail("did not finish") }
        XCTAssertEqual(live.status().xruns, 0)
        XCTAssertEqual(live.status().frames, 640)
    }

    func testUnknownDeviceIsAClearError() {
        XCTAssertThrowsError(
            try PCMStream(PCMRequest(device: "no_such_device", isCapture: false, sampleRate: 48000, channels: 2, periodFrames: 128, periods: 2))
        ) { error in
            XCTAssertTrue("\(error)".contains("no_such_device: snd_pcm_open failed"), "\(error)")
        }
    }
}
