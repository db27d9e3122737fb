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
}
