import Foundation
import StageCore
import StagePlayer
import StageTestSupport
import XCTest

/// Leaving a rack stops its backing track (a 10 ms fade): the next song does not play
/// over the old one's track while the old rack's tails ring out.
final class PlayerSwitchTests: XCTestCase {
    func testASwitchStopsTheOldRacksTrack() throws {
        let dir = TrackFiles.folder()
        let tone = (0..<(48000 * 10)).map { 0.3 * sinf(Float($0) * 0.05) }
        TrackFiles.write(dir + "/tone.wav", channels: [tone], rate: 48000)
        let withTrack = try PlayerRacks.plan(PlayerRacks.text(file: dir + "/tone.wav", settings: "\"startOnLoad\": true"), block: 256)
        let silent = try PlayerRacks.plan(
            #"{ "format": 2, "units": { "g": { "type": "gain" }, "out": { "type": "output" } }, "connections": [ "g -> out" ] }"#, block: 256)
        let player = RackPlayer(engine: RenderEngine(plan: withTrack))
        let storage = BusStorage(bufferCount: 3, maxFrames: 256)
        let input = storage.bus(first: 0, channels: 1)
        let output = storage.bus(first: 1, channels: 2)
        var out: [Float] = []
        for k in 0..<(48000 * 2 / 256) {
            if k == 100 { XCTAssertTrue(player.submit(RenderEngine(plan: silent))) }
            player.render(frameCount: 256, input: input, output: output)
            out += UnsafeBufferPointer(start: output[0], count: 256)
            _ = player.collectRetired()
        }
        let before = Measure.peak(out[(90 * 256)..<(100 * 256)])
        let after = Measure.peak(out[(100 * 256 + 2400)...])
        print("player: switch: track peak \(before) before, \(after) from 50 ms after the switch")
        XCTAssertGreaterThan(before, 0.2)
        XCTAssertLessThan(after, 1e-6, "the old rack's track plays on after the switch")
    }

    /// A rack with a track that starts on load, switched to after `PresetSwitcher`'s warm-up
    /// on another thread (`RenderEngine.warmUp`: a silent block rendered there starts the
    /// track, the reset stops it): the track starts at the switch from its first frame, as
    /// without the warm-up, and the render thread takes the stream's queues over (no
    /// ownership violation).
    func testATrackThatStartsOnLoadStartsAtTheSwitchAfterTheWarmUp() throws {
        let dir = TrackFiles.folder()
        let tone = (0..<(48000 * 10)).map { 0.3 * sinf(Float($0) * 0.05) }
        TrackFiles.write(dir + "/tone.wav", channels: [tone], rate: 48000)
        let silent = #"{ "format": 2, "units": { "g": { "type": "gain" }, "out": { "type": "output" } }, "connections": [ "g -> out" ] }"#
        func play(warm: Bool) throws -> [Float] {
            let player = RackPlayer(engine: RenderEngine(plan: try PlayerRacks.plan(silent, block: 256)))
            let next = RenderEngine(plan: try PlayerRacks.plan(PlayerRacks.text(file: dir + "/tone.wav", settings: "\"startOnLoad\": true"), block: 256))
            if warm { runOnAnotherThread { next.warmUp() } }
            let storage = BusStorage(bufferCount: 3, maxFrames: 256)
            var out: [Float] = []
            for k in 0..<(48000 * 3 / 256) {
                if k == 10 { XCTAssertTrue(player.submit(next)) }
                player.render(frameCount: 256, input: storage.bus(first: 0, channels: 1), output: storage.bus(first: 1, channels: 2))
                out += UnsafeBufferPointer(start: storage.buffer(1), count: 256)
                _ = player.collectRetired()
            }
            return Array(out[(10 * 256)...])
        }
        let violations = queueOwnershipViolations.load(ordering: .relaxed)
        let cold = try play(warm: false)
        let warm = try play(warm: true)
        XCTAssertEqual(queueOwnershipViolations.load(ordering: .relaxed), violations, "each queue kept one consumer")
        // After the 20 ms fade-in, the track from its first frame (rendered as the stream reads it).
        let fade = 960
        var maxDiff: Float = 0
        for i in 0..<cold.count { maxDiff = max(maxDiff, abs(cold[i] - warm[i])) }
        XCTAssertEqual(maxDiff, 0, "the same with and without the warm-up")
        XCTAssertEqual(Measure.peak(warm[fade..<(fade + 4800)]), 0.3, accuracy: 0.01, "the track plays")
        XCTAssertEqual(warm[fade + 100], tone[fade + 100], accuracy: 1e-4, "from its start")
    }
}
