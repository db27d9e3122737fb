import Foundation
import StageCore
import StageControl
import StageDrivers
import StagePlayer
import StageTestSupport
import XCTest

/// What players add to a rack switch: every load opens each player's file and reads each
/// start point's preload (2 s by default) on the control thread. Measured as the control
/// thread's CPU time of a whole load (read, check, compile, make), best of interleaved runs:
/// the KTV preset (an Ogg Vorbis track, two start points) against the same rack without its
/// player, and a rack with four players of two start points each.
final class PlayerLoadTimeTests: XCTestCase {
    func testRackLoadTimeWithPlayersIsMeasured() throws {
        let racks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../racks").standardizedFileURL.path
        let ktv = try String(contentsOfFile: racks + "/ktv.json", encoding: .utf8)
        let dir = TrackFiles.folder()
        try FileManager.default.createDirectory(atPath: dir + "/tracks", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: racks + "/tracks/demo-backing.ogg", toPath: dir + "/tracks/demo-backing.ogg")
        try ktv.write(toFile: dir + "/ktv.json", atomically: true, encoding: .utf8)
        let without = ktv.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("\"action\": \"track.") }
            .map { $0.contains("\"type\": \"player\"") ? "    \"track\":  { \"type\": \"gain\" }," : String($0) }
            .joined(separator: "\n")
        try without.write(toFile: dir + "/no-player.json", atomically: true, encoding: .utf8)
        let tone = (0..<(48000 * 60)).map { 0.2 * sinf(Float($0) * 0.05) }
        TrackFiles.write(dir + "/long.flac", channels: [tone, tone], rate: 44100, flac: true)
        let players = (1...4).map { "\"p\($0)\": { \"type\": \"player\", \"file\": \"long.flac\", \"cues\": { \"chorus\": 30 } }" }
        let four = """
            { "format": 2, "units": { \(players.joined(separator: ", ")), "mix": { "type": "mixer", "inputs": 4 }, "out": { "type": "output" } },
              "connections": [ "p1 -> mix:1", "p2 -> mix:2", "p3 -> mix:3", "p4 -> mix:4", "mix -> out" ] }
            """
        try four.write(toFile: dir + "/four.json", atomically: true, encoding: .utf8)

        let options = GraphCompiler.Options(sampleRate: 48000, maxFrames: 256)
        let files = ["no-player.json", "ktv.json", "four.json"]
        var walls = [Double](repeating: .infinity, count: files.count)
        let cpu = try ScalingMeasure.bestSeconds(cases: files.count, rounds: 5) { i in
            let t0 = monotonicSeconds()
            let plan = try RackFiles.load(dir + "/" + files[i], registry: PlayerRacks.registry, options: options)
            walls[i] = min(walls[i], monotonicSeconds() - t0)
            _ = plan
        }
        let ms = { (s: Double) in String(format: "%.1f", s * 1000) }
        print("player: rack load (control thread CPU, best of 5; wall in brackets): KTV without its player \(ms(cpu[0])) ms (\(ms(walls[0]))), "
              + "KTV \(ms(cpu[1])) ms (\(ms(walls[1]))), four players × 2 start points of a 44.1 kHz FLAC \(ms(cpu[2])) ms (\(ms(walls[2]))); "
              + "per start point \(ms((cpu[2]) / 8)) ms")
        // A sanity bound, not a benchmark: a song switch with four players stays well under a second.
        XCTAssertLessThan(cpu[2], 1.0)
        XCTAssertGreaterThan(cpu[1], cpu[0], "the player's preload costs something")
    }
}
