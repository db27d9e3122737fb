import CAllocCounter
import Foundation
import StageCore
import StageDrivers
import StageLV2
import StageTestSupport
import XCTest

/// The lv2 unit against real plugins from Debian (mda-lv2, x42-plugins) and `lv2apply`.
final class LV2UnitTests: XCTestCase {
    /// Stereo input under −6 dBFS: noise plus a 5 kHz tone (sibilance for the de-esser).
    func testInput(frames: Int) -> [[Float]] {
        let a = PitchMeasure.noise(frames: frames, amplitude: 0.2, seed: 7)
        let b = PitchMeasure.noise(frames: frames, amplitude: 0.2, seed: 11)
        let tone = Measure.sine(frequency: 5000, frames: frames, amplitude: 0.2)
        return [zip(a, tone).map { $0 + $1 }, zip(b, tone).map { $0 - $1 }]
    }

    /// `lv2apply` over the same input and controls; returns its output channels.
    func lv2apply(_ uri: String, _ controls: [String: Float], input: [[Float]]) throws -> [[Float]] {
        let dir = LV2Testing.temporaryDirectory("apply")
        let inPath = dir + "/in.wav"
        let outPath = dir + "/out.wav"
        let w = try AudioFileWriter(path: inPath, channels: input.count, sampleRate: 48000, maxFrames: input[0].count)
        try w.write(channels: input)
        try w.close()
        var args = ["-i", inPath, "-o", outPath]
        for (k, v) in controls.sorted(by: { $0.key < $1.key }) { args += ["-c", k, "\(v)"] }
        let (status, err) = try LV2Testing.run("lv2apply", args + [uri])
        XCTAssertEqual(status, 0, err)
        return try AudioData.read(path: outPath).channels
    }

    func compareWithLV2Apply(_ uri: String, _ controls: [String: Float], block: Int) throws {
        let input = testInput(frames: 48000)
        XCTAssertLessThan(Measure.peak(input[0] + input[1]), 0.5)
        let reference = try lv2apply(uri, controls, input: input)
        let params = controls.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ")
        let rack = """
            { "format": 2, "units": { "mic": { "type": "input" },
              "fx": { "type": "lv2", "plugin": "\(uri)", "params": { \(params) } }, "out": { "type": "output" } },
              "connections": [ "mic -> fx -> out" ] }
            """
        let out = try LV2Testing.render(rack, input: input, block: block)
        for c in 0..<2 {
            let peak = Measure.peak(reference[c])
            XCTAssertGreaterThan(peak, 0.01, "\(uri) channel \(c) is silent")
            let diff = Measure.peak(zip(out[c], reference[c]).map { $0 - $1 })
            let db = Measure.decibels(diff / peak)
            print("lv2 \(uri) channel \(c) block \(block): difference from lv2apply \(db) dB of the peak")
            XCTAssertLessThan(db, -80, "\(uri) channel \(c)")
        }
    }

    func testDeEssEqualsLV2Apply() throws {
        try LV2Testing.require(LV2Testing.deEss, package: "mda-lv2")
        try LV2Testing.run("lv2apply", ["--version"])
        for block in [256, 37] {
            try compareWithLV2Apply(LV2Testing.deEss, ["thresh": 0.2, "freq": 0.7, "hf_drive": 0.6], block: block)
        }
    }

    func testDetuneEqualsLV2Apply() throws {
        try LV2Testing.require(LV2Testing.detune, package: "mda-lv2")
        for block in [256, 64] {
            try compareWithLV2Apply(LV2Testing.detune, ["detune": 0.4, "mix": 0.7, "output": 0.5], block: block)
        }
    }

    /// x42 fil4 (urid:map, atom ports) with one band at 1 kHz +12 dB: the measured response
    /// peaks there and stays flat an octave and more away.
    func testFil4ResponseShowsTheBand() throws {
        try LV2Testing.require(LV2Testing.fil4, package: "x42-plugins")
        let h = try UnitHarness(
            type: LV2UnitType(), settings: ["plugin": .string(LV2Testing.fil4)],
            parameters: ["freq2": 1000, "gain2": 12, "q2": 1], maxFrames: 256)
        func gain(at f: Double) -> Double {
            h.reset()
            let x = Measure.sine(frequency: f, frames: 24000, amplitude: 0.25)
            let y = h.render(input: [x], frames: x.count, blockSize: 256)[0]
            let tail = 12000..<24000
            return 20 * log10(Measure.magnitude(at: f, in: y[tail]) / Measure.magnitude(at: f, in: x[tail]))
        }
        let freqs = (0...24).map { 500 * pow(2, Double($0) / 24) }  // 500 Hz … 2 kHz, quarter tones
        let gains = freqs.map(gain)
        let best = gains.indices.max { gains[$0] < gains[$1] }!
        print("fil4: peak \(gains[best]) dB at \(freqs[best]) Hz; 100 Hz \(gain(at: 100)) dB, 10 kHz \(gain(at: 10000)) dB")
        XCTAssertEqual(gains[best], 12, accuracy: 0.5)
        XCTAssertEqual(freqs[best], 1000, accuracy: 1000 * 0.06)
        XCTAssertEqual(gain(at: 100), 0, accuracy: 1)
        XCTAssertEqual(gain(at: 10000), 0, accuracy: 1)
    }

    /// racks/lv2/x42-vocal-eq.json does what its comment says, measured with quiet sines
    /// (under the compressor's threshold) relative to 1 kHz.
    func testX42VocalEQRackShapesTheVoice() throws {
        try LV2Testing.require(LV2Testing.fil4, package: "x42-plugins")
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOfFile: repository.path + "/racks/lv2/x42-vocal-eq.json", encoding: .utf8)
        func level(_ f: Double) throws -> Double {
            let x = Measure.sine(frequency: f, frames: 24000, amplitude: 0.01)
            let y = try LV2Testing.render(text, input: [x], block: 256)[0]
            return 20 * log10(Measure.magnitude(at: f, in: y[12000..<24000]) / Measure.magnitude(at: f, in: x[12000..<24000]))
        }
        let reference = try level(1000)
        let low = try level(30) - reference
        let mud = try level(300) - reference
        let presence = try level(3000) - reference
        print("x42-vocal-eq: 30 Hz \(low) dB, 300 Hz \(mud) dB, 3 kHz \(presence) dB relative to 1 kHz")
        XCTAssertLessThan(low, -12, "high-pass at 90 Hz")
        XCTAssertEqual(mud, -3, accuracy: 1.2)
        XCTAssertEqual(presence, 3, accuracy: 1.2)
    }
}
