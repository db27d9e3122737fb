import CAllocCounter
import StageCore
import StageTestSupport
import StageUnits
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Block-size invariance of the strip units with everything working and moving (the
/// contract test runs their defaults, where most EQ bands are flat and skipped): bands
/// active, knobs turning, bypass switching, a type change, the de-esser's split moving.
final class StripBlockSizeTests: XCTestCase {
    func signal(_ frames: Int) -> [Float] {
        var seed: UInt32 = 5
        return (0..<frames).map { i in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            let envelope: Float = i % 12000 < 8000 ? 0.5 : 0.002
            return envelope * (0.6 * sinf(Float(i) * 0.031) + 0.4 * (Float(seed >> 8) / 8_388_608 - 1))
        }
    }

    func render(_ type: any UnitType, _ parameters: [String: Float], moves: [(String, Float, Int64)], block: Int) throws -> [Float] {
        let h = try UnitHarness(type: type, parameters: parameters, sampleRate: 48000, maxFrames: 512)
        for (id, value, frame) in moves { h.set(id, value, atFrame: frame) }
        return h.render(input: [signal(48000)], frames: 48000, blockSize: block)[0]
    }

    func assertInvariant(_ type: any UnitType, _ parameters: [String: Float], moves: [(String, Float, Int64)]) throws {
        let reference = try render(type, parameters, moves: moves, block: 1)
        for block in [17, 64, 256, 512] {
            let out = try render(type, parameters, moves: moves, block: block)
            let diff = zip(out, reference).map { abs($0 - $1) }.max() ?? 0
            XCTAssertLessThanOrEqual(diff, 1e-6, "\(type.name): block \(block)")
        }
    }

    func testEQ() throws {
        try assertInvariant(
            EQUnitType(), ["gain2": -6, "gain3": 4, "gain4": 3, "gain5": 5],
            moves: [
                ("frequency3", 3000, 5000), ("gain2", 9, 9001), ("bypass4", 1, 12_000), ("type3", 7, 20_003),
                ("bandwidth2", 3, 25_000), ("bypass4", 0, 30_017), ("gain5", 0, 33_000), ("globalGain", -6, 40_000),
            ])
    }

    func testDynamics() throws {
        try assertInvariant(
            DynamicsUnitType(), ["threshold": -30, "expansionThreshold": -45, "expansionRatio": 4],
            moves: [("threshold", -12, 7000), ("ratio", 10, 15_000), ("attackTime", 0.05, 20_000), ("knee", 0, 31_000)])
    }

    func testDeEsser() throws {
        try assertInvariant(
            DeEsserUnitType(), ["threshold": -40, "range": 10],
            moves: [("frequency", 3000, 9000), ("mode", 1, 20_000), ("threshold", -20, 30_000), ("mode", 0, 40_001)])
    }

    /// No heap allocation in render while everything moves (the contract test renders defaults).
    func testNoAllocationWhileKnobsMove() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds")
        #else
        let cases: [(any UnitType, [String: Float], [(String, Float)])] = [
            (EQUnitType(), ["gain2": -6, "gain3": 4], [("frequency3", 3000), ("gain2", 9), ("bypass4", 1), ("type3", 7)]),
            (DynamicsUnitType(), ["expansionRatio": 4], [("threshold", -40), ("attackTime", 0.05), ("ratio", 20)]),
            (DeEsserUnitType(), ["threshold": -50], [("frequency", 3000), ("mode", 1), ("range", 20)]),
        ]
        for (type, parameters, moves) in cases {
            let h = try UnitHarness(type: type, parameters: parameters, sampleRate: 48000, maxFrames: 256)
            let input = signal(256)
            input.withUnsafeBufferPointer { h.inputs[0][0].update(from: $0.baseAddress!, count: 256) }
            for (k, m) in moves.enumerated() { h.set(m.0, m.1, atFrame: Int64(1000 + 3000 * k)) }
            h.renderBlock(frames: 256)
            alloc_counter_start()
            for _ in 0..<200 { h.renderBlock(frames: 256) }
            let count = alloc_counter_stop()
            XCTAssertEqual(count, 0, "\(type.name) allocated \(count) times")
        }
        #endif
    }
}
