import CAllocCounter
import StageCore
import StageSynth
import StageTestSupport
import XCTest

/// The shared unit contract (Tests/StageUnitsTests/UnitContractTests.swift) applied to the
/// synth as the app would make it: default settings, so the default SoundFont. Same
/// scenarios and thresholds, with one documented difference in the reset check.
final class SynthContractTests: XCTestCase {
    private func harness(maxFrames: Int = 512) throws -> UnitHarness {
        try UnitHarness(type: SynthUnitType(), maxFrames: maxFrames)
    }

    private func render(block: Int, frames: Int = 16000) throws -> [[Float]] {
        let h = try harness()
        h.set("gain", -96 + 108 * 0.3, atFrame: 6001)
        h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 100)
        h.send(.noteOff(channel: 0, note: 60), atFrame: 9000)
        return h.render(frames: frames, blockSize: block)
    }

    func testBlockSizeInvariance() throws {
        let reference = try render(block: 1)
        XCTAssertGreaterThan(Measure.rms(reference[0]), 1e-4)
        for block in [17, 64, 512] {
            let out = try render(block: block)
            for c in 0..<2 { XCTAssertEqual(out[c], reference[c], "block \(block), channel \(c)") }
        }
    }

    /// The contract compares the whole output after reset for equality. The synth's differs
    /// in exactly one FluidSynth block: the first 64 frames of the re-struck note, which
    /// reuses a FluidSynth voice whose pan gains start where they ended instead of fading
    /// in from 0 as a never-used voice's do (libfluidsynth 2.3.1 has no call to reset them).
    func testResetReproducesTheOutputExceptTheFirstBlockOfAReusedVoice() throws {
        let h = try harness()
        h.send(.noteOn(channel: 0, note: 64, velocity: 90), atFrame: 10)
        let first = h.render(frames: 8000, blockSize: 256)
        h.reset()
        h.send(.noteOn(channel: 0, note: 64, velocity: 90), atFrame: 10)
        let second = h.render(frames: 8000, blockSize: 256)
        for c in 0..<2 {
            // The note-on at frame 10 starts on FluidSynth's grid at frame 64.
            XCTAssertEqual(Array(first[c][..<64]), Array(second[c][..<64]), "channel \(c) before the note")
            XCTAssertEqual(Array(first[c][128...]), Array(second[c][128...]), "channel \(c) after its first block")
            let diff = (64..<128).map { abs(first[c][$0] - second[c][$0]) }.max()!
            XCTAssertLessThan(diff, 0.01, "channel \(c): first block of the note, \(diff)")
        }
    }

    func testSilenceAfterTheTailWithoutDenormals() throws {
        let h = try harness()
        h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 0)
        h.send(.noteOff(channel: 0, note: 60), atFrame: 4000)
        let tail = min(h.unit.tailSeconds, 30) + 1.5
        let frames = 8000 + Int(tail * 48000)
        let out = h.render(frames: frames, blockSize: 512)
        for c in 0..<2 {
            XCTAssertLessThan(Measure.peak(out[c][(frames - 4800)...]), 1e-5, "not silent after \(tail) s")
            XCTAssertFalse(out[c].contains { $0.isSubnormal })
        }
    }

    func testExtremeParametersAndFastSweepsStayFiniteAndBounded() throws {
        let h = try harness()
        var frame: Int64 = 0
        for spec in h.specs {
            for value in [spec.range.lowerBound, spec.range.upperBound] {
                h.set(spec.id, value, atFrame: frame)
                frame += 700
            }
        }
        for step in 0..<300 {
            for spec in h.specs {
                h.set(spec.id, step % 2 == 0 ? spec.range.upperBound : spec.range.lowerBound, atFrame: frame)
            }
            frame += 32
        }
        for n in stride(from: 0, to: 128, by: 3) { h.send(.noteOn(channel: 0, note: n, velocity: 127), atFrame: Int64(n * 50)) }
        let out = h.render(frames: Int(frame) + 4800, blockSize: 128)
        let boost = h.specs.filter { $0.unit == .decibels }.reduce(Float(0)) { $0 + max(0, $1.range.upperBound) }
        for c in 0..<2 {
            XCTAssertTrue(out[c].allSatisfy { $0.isFinite })
            XCTAssertLessThan(Measure.peak(out[c]), 4 * powf(10, boost / 20))
        }
    }

    func testNoHeapAllocationInRender() throws {
        let h = try harness(maxFrames: 256)
        h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 0)
        h.renderBlock(frames: 256)  // warm-up
        alloc_counter_start()
        for _ in 0..<2000 { h.renderBlock(frames: 256) }
        let count = alloc_counter_stop()
        XCTAssertEqual(count, 0, "allocated \(count) times in 2000 blocks")
    }
}
