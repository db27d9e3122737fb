import CAllocCounter
import Foundation
import StageCore
import StagePlayer
import StageTestSupport
import XCTest

/// The player's disk side and the unit contract: a slow disk gives counted underruns and
/// never holds the render thread; block-size invariance, reset, extreme values, no
/// allocation in render.
final class PlayerStreamingTests: XCTestCase {
    static let registry = UnitRegistry(PlayerUnits.types)
    var type: any UnitType { Self.registry.type(named: "player")! }

    /// A 10 s mono file whose every sample says where it is (a slow ramp plus a tone).
    func trackFile() -> (path: String, samples: [Float]) {
        let dir = TrackFiles.folder()
        let samples = (0..<480_000).map { i in 0.3 * Float(i) / 480_000 + 0.2 * sinf(Float(i) * 0.031) }
        TrackFiles.write(dir + "/track.wav", channels: [samples], rate: 48000)
        return (dir + "/track.wav", samples)
    }

    func harness(_ path: String, _ extra: [String: JSONValue] = [:], maxFrames: Int = 512) throws -> UnitHarness {
        var settings: [String: JSONValue] = ["file": .string(path), "startOnLoad": .bool(true), "preload": .number(0.1), "buffer": .number(0.5)]
        for (k, v) in extra { settings[k] = v }
        return try UnitHarness(type: type, settings: settings, maxFrames: maxFrames)
    }

    /// The disk thread slowed to 1 s a chunk (4,096 frames, 85 ms of sound: twelve times too
    /// slow, so a busy machine cannot hide it): the render thread plays silence where chunks
    /// are missing, counts underruns, keeps the track in time, and no render call waits for
    /// the disk.
    func testSlowDiskGivesCountedUnderrunsAndNeverBlocksTheRender() throws {
        let (path, samples) = trackFile()
        let h = try harness(path)
        let player = h.unit as! PlayerUnit
        player.slowDiskForTesting(nanosecondsPerChunk: 1_000_000_000)
        var out: [Float] = []
        var slowest: UInt64 = 0
        var total: UInt64 = 0
        let block = 256
        for _ in 0..<(48000 * 3 / block) {
            let t0 = monotonicNanoseconds()
            h.renderBlock(frames: block)
            let dt = monotonicNanoseconds() - t0
            slowest = max(slowest, dt)
            total += dt
            out += UnsafeBufferPointer(start: h.outputs[0][0], count: block)
            nap(seconds: Double(block) / 48000)  // at the pace of a sound card
        }
        var heard = 0
        var wrong = 0
        for i in out.indices where out[i] != 0 {
            heard += 1
            if out[i] != samples[i] { wrong += 1 }
        }
        print("player: slow disk: \(player.underruns) underruns (\(player.underrunFrames) frames of silence), \(heard) frames heard, slowest render \(slowest / 1000) µs, mean \(total / UInt64(out.count / block) / 1000) µs")
        XCTAssertGreaterThan(player.underruns, 5, "a disk slower than the music must underrun")
        XCTAssertGreaterThan(player.underrunFrames, out.count / 2)
        XCTAssertGreaterThanOrEqual(heard, 4800, "the preload must play")
        XCTAssertEqual(wrong, 0, "what plays after an underrun is not at its place in the track")
        XCTAssertLessThan(slowest, 50_000_000, "a render call waited for the disk")
    }

    func nap(seconds: Double) { usleep(UInt32(seconds * 1e6)) }

    /// Renders with a start at frame 300, a cue at 9000, a stop at 15000, a gain move.
    func render(_ path: String, block: Int) throws -> [[Float]] {
        let rack = try RackReader(registry: PlayerRacks.registry).read(
            text: PlayerRacks.text(file: path, settings: "\"cues\": { \"b\": 4 }"), file: "test.json")
        let cues = rack.units.first { $0.id == "track" }!.settings.node("cues")!.value
        let h = try harness(path, ["cues": cues])
        (h.unit as! PlayerUnit).waitsForDisk = true
        h.set("gain", -6, atFrame: 6001)
        h.send(UnitCommand.message(3, pressed: true), atFrame: 300)  // restart
        h.send(UnitCommand.message(4, pressed: true), atFrame: 9000)  // cue b
        h.send(UnitCommand.message(1, pressed: true), atFrame: 15000)  // stop
        return h.render(frames: 16000, blockSize: block)
    }

    func testBlockSizeInvariance() throws {
        let (path, _) = trackFile()
        let reference = try render(path, block: 1)
        XCTAssertGreaterThan(Measure.peak(reference[0]), 0.1)
        for block in [17, 64, 512] {
            let out = try render(path, block: block)
            for c in 0..<2 { XCTAssertEqual(out[c], reference[c], "block \(block), channel \(c)") }
        }
    }

    func testResetReproducesTheOutput() throws {
        let (path, _) = trackFile()
        let h = try harness(path)
        (h.unit as! PlayerUnit).waitsForDisk = true
        let first = h.render(frames: 30000, blockSize: 256)
        h.reset()
        let second = h.render(frames: 30000, blockSize: 256)
        XCTAssertEqual(first, second, "reset must restore the initial state")
    }

    func testExtremeGainStaysFiniteAndBounded() throws {
        let (path, _) = trackFile()
        let h = try harness(path)
        (h.unit as! PlayerUnit).waitsForDisk = true
        for step in 0..<300 { h.set("gain", step % 2 == 0 ? 12 : -96, atFrame: Int64(step * 32)) }
        let out = h.render(frames: 20000, blockSize: 128)
        XCTAssertTrue(out[0].allSatisfy { $0.isFinite })
        XCTAssertLessThan(Measure.peak(out[0]), 0.5 * 4 + 0.01)
    }

    func testNoHeapAllocationInRender() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds; `make test` runs release")
        #else
        let (path, _) = trackFile()
        let h = try harness(path, ["loop": .bool(true)], maxFrames: 256)
        h.renderBlock(frames: 256)  // warm-up
        alloc_counter_start()
        for k in 0..<2000 {
            h.renderBlock(frames: 256)
            if k % 20 == 0 { usleep(1000) }  // let the disk thread run
        }
        let count = alloc_counter_stop()
        XCTAssertEqual(count, 0, "the player allocated \(count) times in 2000 blocks")
        #endif
    }
}
