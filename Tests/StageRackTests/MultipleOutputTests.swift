import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import StageUnits
import XCTest

/// A rack with several outputs (the PA and an ear-monitor mix): each on its own channels
/// of one playback device, each through its own safety stage; live on a 4-channel
/// file-plugin device and offline into one file per output, each pair measured.
final class MultipleOutputTests: XCTestCase {
    /// Two stereo outputs fed from the same microphone: the PA gets the 440 Hz of input
    /// channel 1 at −6 dB, the ears the 660 Hz of channel 2 at +0 dB, through a pitch
    /// shifter in parallel with the dry path (so the ears have a fast and a slow path).
    let rack = """
        { "format": 2, "units": {
            "mic": { "type": "input" },
            "left": { "type": "input", "channel": 1 },
            "right": { "type": "input", "channel": 2 },
            "pa": { "type": "gain", "params": { "gain": -6 } },
            "shift": { "type": "pitch", "params": { "pitch": 0 } },
            "earmix": { "type": "mixer", "inputs": 2, "params": { "gain2": -96 } },
            "out": { "type": "output" },
            "ears": { "type": "output", "channels": [3, 4] } },
          "connections": [ "left -> pa -> out", "right -> earmix:1", "right -> shift -> earmix:2", "earmix -> ears" ] }
        """

    func testTwoOutputsCompileOnTheirOwnChannelsWithTheirPaths() throws {
        let plan = try RackBuilding.plan(rack, inputChannels: 2)
        XCTAssertEqual(plan.outputs.map(\.unitID), ["out", "ears"])
        XCTAssertEqual(plan.outputs.map(\.deviceChannels), [[0, 1], [2, 3]])
        XCTAssertEqual(plan.outputChannelCount, 4)
        XCTAssertEqual(plan.warnings, ["unit \"mic\" is not connected to any output and will not be heard"])
        let shift = plan.units[plan.unitIndex("shift")!].latencyFrames
        XCTAssertGreaterThan(shift, 0)
        XCTAssertEqual(plan.outputs[0].paths, [InputPath(inputID: "left", fastestFrames: 0, slowestFrames: 0)])
        XCTAssertEqual(plan.outputs[1].paths, [InputPath(inputID: "right", fastestFrames: 0, slowestFrames: shift)])
        XCTAssertEqual(plan.latencyFrames, shift)
    }

    func testOutputsWithoutChannelsTakeTheLowestFreePairs() throws {
        let plan = try RackBuilding.plan("""
            { "format": 2, "units": { "mic": { "type": "input" },
                "a": { "type": "output", "channels": [1, 2] }, "b": { "type": "output" }, "c": { "type": "output", "channels": [7] } },
              "connections": [ "mic -> a", "mic -> b", "mic -> c" ] }
            """)
        XCTAssertEqual(plan.outputs.map(\.deviceChannels), [[0, 1], [2, 3], [6]])
        XCTAssertEqual(plan.outputChannelCount, 7)
        let rackText = try RackReader(registry: Fixtures.registry).read(text: """
            { "format": 2, "units": { "x": { "type": "output", "channels": [4] }, "y": { "type": "output" } } }
            """, file: "t.json")
        XCTAssertEqual(GraphCompiler(registry: Fixtures.registry).outputChannelCount(rackText), 4)
    }

    /// Live: one 4-channel playback device; channels 1-2 carry the PA, 3-4 the ears.
    func testLiveFourChannelDeviceCarriesEachOutputOnItsPair() throws {
        let frames = 9600, period = 128
        let capturePath = Fixtures.temporaryPath("multi-capture.raw")
        let playbackPath = Fixtures.temporaryPath("multi-playback.raw")
        let source = [Measure.sine(frequency: 440, frames: frames, amplitude: 0.5), Measure.sine(frequency: 660, frames: frames, amplitude: 0.4)]
        var bytes = [Float](repeating: 0, count: frames * 2)
        for f in 0..<frames { bytes[2 * f] = source[0][f]; bytes[2 * f + 1] = source[1][f] }
        try bytes.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: capturePath)) }
        setenv("STAGERACK_TEST_CAPTURE", capturePath, 1)
        setenv("STAGERACK_TEST_PLAYBACK", playbackPath, 1)
        LiveAudioFileTests.setUp()  // the file-plugin devices

        let plan = try RackBuilding.plan(rack, maxFrames: period, inputChannels: 2)
        let playback = try PCMStream(PCMRequest(device: "stagerack_out", isCapture: false, sampleRate: 48000,
                                                channels: plan.outputChannelCount, periodFrames: period, periods: 2, format: .float))
        let capture = try PCMStream(PCMRequest(device: "stagerack_in", isCapture: true, sampleRate: 48000, channels: 2,
                                               periodFrames: period, periods: 2, format: .float))
        XCTAssertEqual(playback.configuration.channels, 4)
        let live = LiveAudio(playback: playback, capture: capture, player: RackPlayer(engine: RenderEngine(plan: plan)), frameLimit: frames)
        guard case .finished = live.run() else { return XCTFail("the run did not finish") }
        let written = try Data(contentsOf: URL(fileURLWithPath: playbackPath))
        let samples = written.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let out = (0..<4).map { c in stride(from: c, to: samples.count, by: 4).map { samples[$0] } }
        XCTAssertEqual(out[0].count, frames + 2 * period)
        let settled = 2 * period + 2400  // past the pre-fill and the pitch unit's fade-in
        for (c, frequency, amplitude) in [(0, 440.0, 0.25), (1, 440.0, 0.25), (2, 660.0, 0.4), (3, 660.0, 0.4)] {
            let x = out[c][settled...]
            XCTAssertEqual(Measure.dominantFrequency(in: x, low: 200, high: 2000), frequency, accuracy: frequency * 0.01, "channel \(c + 1)")
            XCTAssertEqual(Double(Measure.peak(x)), amplitude, accuracy: 0.01, "channel \(c + 1)")
            let other = frequency == 440 ? 660.0 : 440
            XCTAssertLessThan(Measure.magnitude(at: other, in: x), Measure.magnitude(at: frequency, in: x) * 1e-4, "channel \(c + 1) hears only its own output")
        }
    }

    /// Offline: one file per output (OUT.wav and OUT-ears.wav), each measured.
    func testOfflineRenderWritesOneFilePerOutput() throws {
        let frames = 24000, block = 256
        let plan = try RackBuilding.plan(rack, maxFrames: block, inputChannels: 2)
        let path = Fixtures.temporaryPath("multi.wav")
        let files = try OutputFiles(path: path, outputs: plan.outputs, sampleRate: 48000, maxFrames: block)
        XCTAssertEqual(files.paths, [path, Fixtures.temporaryPath("multi-ears.wav")])
        let input = AudioData(
            channels: [Measure.sine(frequency: 440, frames: frames, amplitude: 0.5), Measure.sine(frequency: 660, frames: frames, amplitude: 0.4)],
            sampleRate: 48000)
        OfflineRenderer(plan: plan).render(input: input, midi: nil, frames: frames, blockSize: block) { bus, n in
            XCTAssertEqual(bus.channelCount, 4)
            try? files.write(bus, frames: n)
        }
        try files.close()
        let main = try AudioData.read(path: files.paths[0]), ears = try AudioData.read(path: files.paths[1])
        XCTAssertEqual(main.channels.count, 2)
        XCTAssertEqual(ears.channels.count, 2)
        XCTAssertEqual(main.frameCount, frames)
        for (file, frequency, amplitude) in [(main, 440.0, 0.25), (ears, 660.0, 0.4)] {
            for c in 0..<2 {
                let x = file.channels[c][4800...]
                XCTAssertEqual(Measure.dominantFrequency(in: x, low: 200, high: 2000), frequency, accuracy: frequency * 0.01)
                XCTAssertEqual(Double(Measure.peak(x)), amplitude, accuracy: 0.01)
            }
        }
        XCTAssertEqual(OutputFiles.path("/a/b.c/live", output: "ears", index: 1), "/a/b.c/live-ears")
        XCTAssertEqual(OutputFiles.path("take.flac", output: "ears", index: 1), "take-ears.flac")
    }

    /// Each output has its own safety stage: a hot monitor mix is limited, the PA is not.
    func testEachOutputHasItsOwnLimiter() throws {
        let text = """
            { "format": 2, "units": { "mic": { "type": "input" }, "hot": { "type": "gain", "params": { "gain": 12 } },
                "out": { "type": "output" }, "ears": { "type": "output" } },
              "connections": [ "mic -> out", "mic -> hot -> ears" ] }
            """
        let plan = try RackBuilding.plan(text, maxFrames: 256)
        var channels: [[Float]] = Array(repeating: [], count: 4)
        OfflineRenderer(plan: plan).render(
            input: AudioData(channels: [Measure.sine(frequency: 440, frames: 9600, amplitude: 0.5)], sampleRate: 48000), midi: nil,
            frames: 9600, blockSize: 256
        ) { bus, n in for c in 0..<4 { channels[c] += UnsafeBufferPointer(start: bus[c], count: n) } }
        XCTAssertEqual(Measure.peak(channels[0]), 0.5, accuracy: 1e-4, "the PA passes untouched")
        XCTAssertLessThanOrEqual(Measure.peak(channels[2]), OutputUnit.ceiling)
        XCTAssertGreaterThan(Measure.peak(channels[2]), 0.9, "the ears are limited, not silenced")
    }
}
