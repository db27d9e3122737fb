import CAllocCounter
import StageCore
import StageTestSupport
import StageUnits
import XCTest

/// The contract every unit type keeps, checked over all registered processor and generator
/// types: block-size invariance, reset reproducibility, silence after the tail without
/// denormals, no NaN/Inf or runaway level under extreme parameters and fast sweeps, and
/// no heap allocation in render.
final class UnitContractTests: XCTestCase {
    /// Types whose output legitimately depends on block boundaries, with the reason.
    static let blockVariant: [String: String] = [:]

    /// Types whose output is silent for this test's signal and settings, with the reason.
    /// Every other type must sound, or the block-size and reset comparisons would pass for
    /// a unit that outputs nothing.
    static let silentHere: [String: String] = [
        "click": "sounds only on the song clock's beats (RenderContext.songBeats), which a lone unit has not; SongClickTests measures its onsets at blocks of 64, 97 and 512"
    ]

    /// Fails when every channel of `out` is silent: a comparison of silences proves nothing.
    func assertNotSilent(_ out: [[Float]], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let peak = out.map { Measure.peak($0) }.max() ?? 0
        XCTAssertGreaterThan(peak, 1e-3, "\(what): the output is silent (peak \(peak)), so comparing it proves nothing", file: file, line: line)
    }

    var types: [any UnitType] {
        StandardUnits.types.filter { $0.role == .processor || $0.role == .generator }
    }

    /// A test signal: a decaying noise burst, a sine, then silence.
    func signal(_ frames: Int) -> [Float] {
        var seed: UInt32 = 12345
        return (0..<frames).map { i in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            let noise = (Float(seed >> 8) / Float(1 << 24) - 0.5) * expf(-Float(i) / 2000)
            let tone = i > 4000 && i < 12000 ? 0.4 * sinf(Float(i) * 0.05) : 0
            return 0.5 * noise + tone
        }
    }

    func harness(_ type: any UnitType, maxFrames: Int = 512) throws -> UnitHarness {
        try UnitHarness(type: type, maxFrames: maxFrames, inputChannels: type.layout(UnitSettings(), UnitBuildContext(sampleRate: 48000, hostInputChannels: 1)).inputs.map { _ in 1 })
    }

    /// Renders with a parameter move halfway and notes for MIDI units.
    func render(_ type: any UnitType, block: Int, frames: Int = 16000) throws -> [[Float]] {
        let h = try harness(type)
        if let spec = h.specs.first(where: { $0.unit != .choice }) {
            let mid = spec.range.lowerBound + (spec.range.upperBound - spec.range.lowerBound) * 0.3
            h.set(spec.id, mid, atFrame: 6001)
        }
        if type.receivesMIDI {
            h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 100)
            h.send(.noteOff(channel: 0, note: 60), atFrame: 9000)
        }
        return h.render(input: [signal(frames)], frames: frames, blockSize: block)
    }

    func testBlockSizeInvariance() throws {
        for type in types where Self.blockVariant[type.name] == nil {
            let reference = try render(type, block: 1)
            if Self.silentHere[type.name] == nil { assertNotSilent(reference, "\(type.name): block 1") }
            for block in [17, 64, 512] {
                let out = try render(type, block: block)
                for c in 0..<out.count {
                    let diff = zip(out[c], reference[c]).map { abs($0 - $1) }.max() ?? 0
                    XCTAssertLessThanOrEqual(diff, 1e-6, "\(type.name): block \(block), channel \(c)")
                }
            }
        }
    }

    func testResetReproducesTheOutput() throws {
        for type in types {
            let h = try harness(type)
            if type.receivesMIDI { h.send(.noteOn(channel: 0, note: 64, velocity: 90), atFrame: 10) }
            let first = h.render(input: [signal(8000)], frames: 8000, blockSize: 256)
            h.reset()
            if type.receivesMIDI { h.send(.noteOn(channel: 0, note: 64, velocity: 90), atFrame: 10) }
            let second = h.render(input: [signal(8000)], frames: 8000, blockSize: 256)
            if Self.silentHere[type.name] == nil { assertNotSilent(first, "\(type.name): before reset") }
            XCTAssertEqual(first, second, "\(type.name): reset must restore the initial state")
        }
    }

    func testSilenceAfterTheTailWithoutDenormals() throws {
        for type in types {
            let h = try harness(type)
            if type.receivesMIDI {
                h.send(.noteOn(channel: 0, note: 60, velocity: 100), atFrame: 0)
                h.send(.noteOff(channel: 0, note: 60), atFrame: 4000)
            }
            let tail = min(h.unit.tailSeconds, 30) + 1.5
            let frames = 8000 + Int(tail * 48000)
            let out = h.render(input: [signal(8000)], frames: frames, blockSize: 512)
            for c in 0..<out.count {
                let end = out[c][(frames - 4800)...]
                XCTAssertLessThan(Measure.peak(end), 1e-5, "\(type.name): not silent \(formatNumber(tail)) s after the input stopped")
                XCTAssertFalse(out[c].contains { $0.isSubnormal }, "\(type.name): denormal samples in the output")
            }
        }
    }

    func testExtremeParametersAndFastSweepsStayFiniteAndBounded() throws {
        for type in types {
            let h = try harness(type)
            var frame: Int64 = 0
            for spec in h.specs {
                for value in [spec.range.lowerBound, spec.range.upperBound] {
                    h.set(spec.id, value, atFrame: frame)
                    frame += 700
                }
            }
            // Then sweep every parameter between its ends every 32 frames.
            for step in 0..<300 {
                for spec in h.specs {
                    h.set(spec.id, step % 2 == 0 ? spec.range.upperBound : spec.range.lowerBound, atFrame: frame)
                }
                frame += 32
            }
            if type.receivesMIDI {
                for n in stride(from: 0, to: 128, by: 3) { h.send(.noteOn(channel: 0, note: n, velocity: 127), atFrame: Int64(n * 50)) }
            }
            let frames = Int(frame) + 4800
            let loud = (0..<frames).map { i in sinf(Float(i) * 0.2) * (i % 5000 < 10 ? 1 : 0.9) }
            let out = h.render(input: [loud], frames: frames, blockSize: 128)
            // What the parameters imply: every dB of boost they allow, with 12 dB of room
            // (pan laws, resonance, feedback build-up).
            let boost = h.specs.filter { $0.unit == .decibels }.reduce(Float(0)) { $0 + max(0, $1.range.upperBound) }
            let bound = 4 * powf(10, boost / 20)
            for c in 0..<out.count {
                XCTAssertTrue(out[c].allSatisfy { $0.isFinite }, "\(type.name): NaN or Inf")
                XCTAssertLessThan(Measure.peak(out[c]), bound, "\(type.name): runaway level for full-scale input")
            }
        }
    }

    func testNoHeapAllocationInRender() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds; `make test` runs release")
        #else
        for type in types {
            let h = try harness(type, maxFrames: 256)
            let input = signal(256)
            for (c, bus) in h.inputs.enumerated() where c == 0 {
                input.withUnsafeBufferPointer { bus[0].update(from: $0.baseAddress!, count: 256) }
            }
            h.renderBlock(frames: 256)  // warm-up
            alloc_counter_start()
            for _ in 0..<2000 { h.renderBlock(frames: 256) }
            let count = alloc_counter_stop()
            XCTAssertEqual(count, 0, "\(type.name) allocated \(count) times in 2000 blocks")
        }
        #endif
    }
}
