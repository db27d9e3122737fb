import StageCore
import StageSynth
import StageTestSupport
import XCTest

/// Events take effect at their frame: exactly on FluidSynth's 64-frame grid, never early,
/// whatever the engine's block size.
final class SynthTimingTests: XCTestCase {
    /// The first frame above -80 dBFS of an A4 struck at frame `k`, rendered in blocks of
    /// `blockSize`.
    private func onset(k: Int, blockSize: Int) throws -> Int {
        let h = try SynthTest.harness(["program": .number(0)])
        h.send(.noteOn(channel: 0, note: 69, velocity: 110), atFrame: Int64(k))
        let x = h.render(frames: k + 6000, blockSize: blockSize)[0]
        return try XCTUnwrap(Measure.onset(x, threshold: 1e-4), "the note sounds")
    }

    func testNoteAtFrameKStartsAtFrameK() throws {
        try SynthTest.requireTimGM()
        // The synth's own attack: frames from the note-on at frame 0 to the onset.
        let attack = try onset(k: 0, blockSize: 64)
        XCTAssertLessThan(attack, 2000)
        for (k, block) in [(1000, 64), (1037, 17), (1111, 512), (1500, 1), (2048, 100), (3000, 333)] {
            let late = try onset(k: k, blockSize: block) - k - attack
            XCTAssertGreaterThanOrEqual(late, 0, "k=\(k), blocks of \(block): never early")
            XCTAssertLessThan(late, 64, "k=\(k), blocks of \(block): within FluidSynth's 64-frame block")
            // On FluidSynth's grid exactly: the note starts at the first multiple of 64 ≥ k.
            XCTAssertEqual(late, (64 - k % 64) % 64, "k=\(k), blocks of \(block)")
        }
    }

    func testOnsetsFollowTheirOffsetsAcrossBlockSizes() throws {
        try SynthTest.requireTimGM()
        let k = 2413
        let a = try onset(k: k, blockSize: 64)
        for (offset, block) in [(101, 17), (640, 512), (7, 1), (1000, 256)] {
            let b = try onset(k: k + offset, blockSize: block)
            XCTAssertLessThanOrEqual(abs(b - a - offset), 63, "offset \(offset) in blocks of \(block): \(b - a)")
        }
    }

    func testNoteOffAndControllersFollowTheirFrameToo() throws {
        try SynthTest.requireTimGM()
        // A note-off at frame 12000 (organ: ends within a few ms): the level before stays,
        // the level after falls, in any block size.
        for block in [1, 64, 500] {
            let h = try SynthTest.harness(["program": .number(16)])
            h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 0)
            h.send(.noteOff(channel: 0, note: 60), atFrame: 12000)
            let x = h.render(frames: 24000, blockSize: block)[0]
            XCTAssertGreaterThan(SpectrumMeasure.level(x, from: 11000, to: 12000), -40, "blocks of \(block)")
            XCTAssertLessThan(SpectrumMeasure.level(x, from: 20000, to: 24000), -100, "blocks of \(block)")
        }
    }
}
