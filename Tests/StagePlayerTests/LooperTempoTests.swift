import Foundation
import StageCore
import StageDrivers
import StagePlayer
import StageUnits
import XCTest

/// The looper's bars and beats: with no other tempo source the first loop's length sets the
/// rack's tempo (measured in a synced delay); with one, recording starts on the next bar and
/// the loop is a whole number of bars (measured in frames).
final class LooperTempoTests: XCTestCase {
    static func rack(tempo: String = "", looper: String = "", delay: Bool = true) -> String {
        """
        { "format": 2, \(tempo)
          "units": { "mic": { "type": "input" },
                     "loop": { "type": "looper", "maxLength": 20\(looper) },
                     \(delay ? #""echo": { "type": "delay", "params": { "sync": "1/4", "feedback": 0, "wetDryMix": 100 } },"# : "")
                     "out": { "type": "output" } },
          "connections": ["mic -> loop -> \(delay ? "echo -> " : "")out"],
          "midi": { "map": [ { "note": 60, "action": "loop.record" } ] } }
        """
    }

    func probe(_ text: String) throws -> TempoProbe {
        let rack = try RackReader(registry: PlayerRacks.registry).read(text: text, file: "test.json")
        return TempoProbe(plan: try GraphCompiler(registry: PlayerRacks.registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 128, realTime: false)))
    }

    func press(_ p: TempoProbe, at seconds: Double) {
        p.render(seconds: seconds - p.seconds)
        p.send(.noteOn(channel: 0, note: 60, velocity: 100), at: seconds)
        p.send(.noteOff(channel: 0, note: 60), at: seconds + 0.01)
    }

    func looper(_ p: TempoProbe) throws -> LooperUnit {
        try XCTUnwrap(p.engine.plan.units.compactMap { $0 as? LooperUnit }.first)
    }

    func testTheFirstLoopSetsTheTempoWhenNothingElseDoes() throws {
        // Two bars of 4 beats recorded in 3.2 s: 150 BPM, a quarter of 19,200 frames.
        let p = try probe(Self.rack(looper: #", "bars": 2"#))
        XCTAssertNil(p.engine.tempoSource)
        press(p, at: 0.5)
        press(p, at: 3.7)
        p.render(seconds: 0.01)
        let looper = try looper(p)
        XCTAssertEqual(looper.loopFrames, 153_600)
        XCTAssertEqual(looper.reportedTempo, 150, accuracy: 1e-9)
        XCTAssertEqual(p.engine.tempoSource, .loop)
        XCTAssertEqual(p.echoFrames(), 19_200, "the delay follows the loop's tempo")
        // Three-beat bars: the same length is 6 beats, 112.5 BPM.
        let waltz = try probe(Self.rack(looper: #", "bars": 2, "beatsPerBar": 3"#))
        press(waltz, at: 0.5)
        press(waltz, at: 3.7)
        XCTAssertEqual(waltz.echoFrames(), 25_600)
    }

    func testTheSongsTempoLeadsAndTheLoopIsQuantisedToItsBars() throws {
        // 100 BPM: a beat is 28,800 frames, a bar 115,200. Recording asked at 0.5 s starts on
        // bar 2 (2.4 s); the close 0.3 s after two bars (at 7.5 s) makes a two-bar loop.
        let p = try probe(Self.rack(tempo: #""tempo": 100,"#, delay: false))
        XCTAssertEqual(p.engine.tempoSource, .song)
        p.input[115_200 + 480] = 0.9  // a click 10 ms into the loop
        press(p, at: 0.5)
        p.render(seconds: 0.1)
        XCTAssertEqual(try looper(p).transportState, "armed", "waiting for the bar line")
        press(p, at: 7.5)
        p.render(seconds: 0.01)
        let looper = try looper(p)
        XCTAssertEqual(looper.loopFrames, 2 * 115_200)
        XCTAssertEqual(looper.reportedTempo, 0, "a quantised loop gives no tempo")
        XCTAssertEqual(p.engine.tempo, 100)
        // The loop plays on in time from the close (the 0.3 s recorded past its end became the
        // start of its second pass): the click comes back on the grid, two loops after it
        // was played, and every loop after.
        p.render(seconds: 7)
        let start = Int(p.frame) - p.output.count
        let clicks = p.output.indices.filter { abs(p.output[$0]) > 0.5 }.map { $0 + start }
        XCTAssertEqual(clicks, [115_200 + 480 + 2 * 230_400])
    }

    func testAnEarlyCloseRecordsOnToTheBarLine() throws {
        let p = try probe(Self.rack(tempo: #""tempo": 100,"#, looper: #", "quantize": "beat""#, delay: false))
        // "beat": recording starts on the next beat (0.6 s); closed at 5.1 s, 4.5 s in:
        // 1.875 bars, so it records on to two bars (4.8 s).
        press(p, at: 0.5)
        press(p, at: 5.1)
        p.render(seconds: 0.2)
        XCTAssertEqual(try looper(p).transportState, "recording")
        p.render(seconds: 0.2)
        XCTAssertEqual(try looper(p).transportState, "playing")
        XCTAssertEqual(try looper(p).loopFrames, 230_400)
    }

    func testWithQuantizeOffTheLoopIsFreeEvenWithASongTempo() throws {
        let p = try probe(Self.rack(tempo: #""tempo": 100,"#, looper: #", "quantize": "off""#, delay: false))
        press(p, at: 0.5)
        press(p, at: 2.0)
        p.render(seconds: 0.01)
        XCTAssertEqual(try looper(p).loopFrames, 72_000)
        XCTAssertEqual(p.engine.tempo, 100, "the song's tempo still leads")
    }
}
