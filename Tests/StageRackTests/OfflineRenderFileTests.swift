import Foundation
import StageCore
import StageControl
import StageDrivers
import StageTestSupport
import XCTest

/// File in, file out, through real libsndfile and a real Standard MIDI File on disk.
final class OfflineRenderFileTests: XCTestCase {
    let rack = """
        { "format": 1, "units": { "mic": { "type": "input" }, "vox": { "type": "gain", "params": { "gain": -6 } },
            "mix": { "type": "mixer", "inputs": 1 }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> mix -> out" ],
          "midi": { "map": [ { "cc": 7, "channel": 1, "to": "vox.gain", "min": -30, "max": 0 } ] } }
        """

    /// A type-0 MIDI file with one CC7 = 0 at 1.0 s (480 PPQ, 120 BPM → tick 960).
    func midiFile() -> [UInt8] {
        let track: [UInt8] = [0x87, 0x40, 0xB0, 7, 0, 0x00, 0xFF, 0x2F, 0]  // delta 960 = 0x87 0x40
        return Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8)
            + [0, 0, 0, UInt8(track.count)] + track
    }

    func testRenderFromFilesHasTheExpectedLevelAndTheCCMovesTheGainAtItsSample() throws {
        // A 44.1 kHz input file is resampled to the 48 kHz render rate.
        let inputPath = Fixtures.temporaryPath("voice.flac")
        let tone = Measure.sine(frequency: 500, sampleRate: 44100, frames: 44100 * 2, amplitude: 0.5)
        let writer = try AudioFileWriter(path: inputPath, channels: 1, sampleRate: 44100, maxFrames: 4096)
        try writer.write(channels: [tone])
        try writer.close()
        let midiPath = Fixtures.temporaryPath("cc.mid")
        try Data(midiFile()).write(to: URL(fileURLWithPath: midiPath))

        let input = try AudioData.read(path: inputPath).resampled(to: 48000)
        XCTAssertEqual(input.frameCount, 96000, accuracy: 2)
        let midi = try MIDIFiles.read(midiPath)
        let plan = try RackBuilding.plan(rack, maxFrames: 256)
        let renderer = OfflineRenderer(plan: plan)
        let outputPath = Fixtures.temporaryPath("out.wav")
        let out = try AudioFileWriter(path: outputPath, channels: 2, sampleRate: 48000, maxFrames: 256)
        let frames = renderer.defaultFrames(input: input, midi: midi, maxTail: 10)
        XCTAssertEqual(frames, input.frameCount, "no tail on this rack: the input's length")
        let summary = try renderer.render(input: input, midi: midi, frames: frames, blockSize: 256) { bus, n in
            try out.write(bus, frames: n)
        }
        try out.close()
        XCTAssertEqual(summary.peakDBFS, -6 + 20 * log10f(0.5), accuracy: 0.1)

        let rendered = try AudioData.read(path: outputPath)
        XCTAssertEqual(rendered.channels.count, 2)
        let left = rendered.channels[0]
        // Before the CC: 0.5 × −6 dB, at 500 Hz.
        let before = left[24000..<47000]
        XCTAssertEqual(Measure.rms(before), 0.5 * powf(10, -6.0 / 20) / Float(2).squareRoot(), accuracy: 0.002)
        XCTAssertEqual(Measure.dominantFrequency(in: before, low: 100, high: 2000), 500, accuracy: 0.5)
        // The CC at exactly 1.0 s: unchanged up to frame 47999, moving from 48000, −30 dB 20 ms later.
        let ccFrame = 48000
        let envelopeBefore = Measure.peak(left[(ccFrame - 200)..<ccFrame])
        XCTAssertEqual(envelopeBefore, 0.5 * powf(10, -6.0 / 20), accuracy: 0.01)
        let after = left[(ccFrame + 1200)..<(ccFrame + 24000)]
        XCTAssertEqual(Measure.peak(after), 0.5 * powf(10, -30.0 / 20), accuracy: 0.002)
        // The ramp starts at the CC's sample: frames right after it are already lower than the
        // same phase one period before.
        let period = 96  // 500 Hz at 48 kHz
        let k = (ccFrame ..< ccFrame + period).max { abs(left[$0]) < abs(left[$1]) }!
        XCTAssertLessThan(abs(left[k + period * 2]), abs(left[k - period]) * 0.99)
    }

    func testEveryOutputFormatIsWrittenAndReadBack() throws {
        let tone = Measure.sine(frequency: 1000, frames: 4800, amplitude: 0.5)
        for ext in ["wav", "flac", "aiff", "ogg", "w64", "caf"] {
            let path = Fixtures.temporaryPath("format.\(ext)")
            let w = try AudioFileWriter(path: path, channels: 2, sampleRate: 48000, maxFrames: 1024)
            try w.write(channels: [tone, tone])
            try w.close()
            let back = try AudioData.read(path: path)
            XCTAssertEqual(back.sampleRate, 48000, ext)
            XCTAssertEqual(back.channels.count, 2, ext)
            XCTAssertEqual(Measure.rms(back.channels[0][1000..<4000]), 0.5 / Float(2).squareRoot(), accuracy: ext == "ogg" ? 0.02 : 0.001, ext)
        }
        XCTAssertThrowsError(try AudioFileWriter(path: Fixtures.temporaryPath("x.mp9"), channels: 2, sampleRate: 48000, maxFrames: 64))
        XCTAssertThrowsError(try AudioData.read(path: "/nonexistent.wav")) { XCTAssertTrue("\($0)".contains("/nonexistent.wav")) }
    }

    /// 12,000 CC7 messages on one tick (more than the engine's queue holds), the last one 0:
    /// every message arrives, so the gain ends at −30 dB. The render splits the block
    /// instead of dropping what does not fit.
    func testDenseMIDIIsNotDropped() throws {
        var track: [UInt8] = []
        for i in 0..<12000 {
            track += [0x00, 0xB0, 7, UInt8(i == 11999 ? 0 : 127 - i % 64)]
        }
        track += [0x00, 0xFF, 0x2F, 0]
        let length = track.count
        // In steps with explicit types: one `+` chain is beyond Swift 6.0's type checker.
        var bytes: [UInt8] = Array("MThd".utf8)
        bytes += [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] as [UInt8]
        bytes += Array("MTrk".utf8)
        bytes += [UInt8(length >> 24), UInt8(length >> 16 & 255), UInt8(length >> 8 & 255), UInt8(length & 255)] as [UInt8]
        bytes += track
        let midi = try StandardMIDIFile(bytes: bytes)
        XCTAssertEqual(midi.messages.count, 12000)
        let tone = Measure.sine(frequency: 500, frames: 24000, amplitude: 0.5)
        let renderer = OfflineRenderer(plan: try RackBuilding.plan(rack, maxFrames: 256))
        var left: [Float] = []
        renderer.render(input: AudioData(channels: [tone], sampleRate: 48000), midi: midi, frames: 24000, blockSize: 256) { bus, n in
            left += Array(UnsafeBufferPointer(start: bus[0], count: n))
        }
        XCTAssertEqual(left.count, 24000)
        XCTAssertEqual(Measure.peak(left[12000...]), 0.5 * powf(10, -30.0 / 20), accuracy: 0.002)
    }
}
