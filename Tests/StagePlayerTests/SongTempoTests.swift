import Foundation
import StageCore
import StageDrivers
import StagePlayer
import XCTest

/// The rack's tempo from its sources, highest first: MIDI clock while it runs, tap tempo,
/// the song's tempo, the looper's first loop (racks/README.md, "Tempo"), measured as the
/// time of a tempo-synced delay (a quarter note) in frames at 48 kHz.
final class SongTempoTests: XCTestCase {
    static let delayRack = """
        { "format": 2,
          "units": { "mic": { "type": "input" },
                     "echo": { "type": "delay", "params": { "sync": "1/4", "feedback": 0, "wetDryMix": 100 } },
                     "out": { "type": "output" } },
          "connections": ["mic -> echo -> out"],
          "midi": { "map": [ { "note": 50, "action": "tap-tempo" } ] } }
        """

    /// A quarter note at `bpm`, in frames at 48 kHz.
    func quarter(_ bpm: Double) -> Int { Int((60 / bpm * 48000).rounded()) }

    func tap(_ p: TempoProbe, times: Int, interval: Double) {
        for _ in 0..<times {
            p.send(.noteOn(channel: 0, note: 50, velocity: 100), at: p.seconds)
            p.render(seconds: 0.05)
            p.send(.noteOff(channel: 0, note: 50), at: p.seconds)
            p.render(seconds: interval - 0.05)
        }
    }

    func testPrecedenceClockThenTapThenSongMeasuredInTheDelay() throws {
        let dir = SongFiles.write([
            "r.json": Self.delayRack,
            "set.json": #"{ "format": 2, "songs": [ { "rack": "r.json", "tempo": 100 } ] }"#,
        ])
        let p = TempoProbe(plan: try SongFiles.plan(setlist: dir + "/set.json"))
        // The song's tempo.
        XCTAssertEqual(p.engine.tempoSource, .song)
        XCTAssertEqual(p.echoFrames(), quarter(100))
        // Taps at 0.5 s lead over the song.
        tap(p, times: 4, interval: 0.5)
        XCTAssertEqual(p.engine.tempoSource, .tap)
        XCTAssertEqual(p.echoFrames(), quarter(120))
        // A running clock leads over the taps.
        p.clockBPM = 150
        p.render(seconds: 1.5)
        XCTAssertEqual(p.engine.tempoSource, .clock)
        XCTAssertEqual(try XCTUnwrap(p.echoFrames()), quarter(150), accuracy: 2)
        // The clock stops (no more ticks): the taps lead again once it is 0.3 s quiet.
        p.clockBPM = nil
        XCTAssertEqual(p.echoFrames(settle: 0.5), quarter(120))
        XCTAssertEqual(p.engine.tempoSource, .tap)
        // Clock again, then MIDI Stop with ticks still coming (as many devices send): the
        // clock no longer leads until Start or Continue.
        p.clockBPM = 75
        p.render(seconds: 2)
        XCTAssertEqual(try XCTUnwrap(p.echoFrames()), quarter(75), accuracy: 4)
        p.send(.stop, at: p.seconds)
        XCTAssertEqual(p.echoFrames(), quarter(120))
        XCTAssertEqual(p.engine.tempoSource, .tap)
        p.send(.continue, at: p.seconds)
        p.render(seconds: 0.1)
        XCTAssertEqual(p.engine.tempoSource, .clock)
        XCTAssertEqual(try XCTUnwrap(p.echoFrames()), quarter(75), accuracy: 4)
    }

    func testARackWithoutSongTempoPlaysAt120AndItsOwnTempoKeyIsTheSongTempo() throws {
        let dir = SongFiles.write([
            "r.json": Self.delayRack,
            "own.json": Self.delayRack.replacingOccurrences(of: "\"format\": 2,", with: "\"format\": 2, \"tempo\": 90,"),
            "set.json": #"{ "format": 2, "songs": [ "r.json", "own.json", { "rack": "own.json", "tempo": 80 } ] }"#,
        ])
        let none = TempoProbe(plan: try SongFiles.plan(setlist: dir + "/set.json", song: 0))
        XCTAssertNil(none.engine.tempoSource)
        XCTAssertEqual(none.echoFrames(), quarter(120))
        let own = TempoProbe(plan: try SongFiles.plan(setlist: dir + "/set.json", song: 1))
        XCTAssertEqual(own.engine.tempoSource, .song)
        XCTAssertEqual(own.echoFrames(), quarter(90))
        let song = TempoProbe(plan: try SongFiles.plan(setlist: dir + "/set.json", song: 2))
        XCTAssertEqual(song.echoFrames(), quarter(80), "the setlist's tempo overrides the rack's")
    }

    func testTheClockRunsOnAcrossASwitchButTapsAndSongTempoBelongToTheirRack() throws {
        let dir = SongFiles.write([
            "r.json": Self.delayRack,
            "set.json": #"{ "format": 2, "songs": [ { "rack": "r.json", "tempo": 100 }, { "rack": "r.json", "tempo": 80 } ] }"#,
        ])
        let first = try SongFiles.plan(setlist: dir + "/set.json", song: 0)
        let player = RackPlayer(engine: RenderEngine(plan: first))
        let input = BusStorage(bufferCount: 1, maxFrames: 128)
        let output = BusStorage(bufferCount: 2, maxFrames: 128)
        player.current.inject(.tempo(140, source: .clock))
        player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
        player.current.inject(.tempo(90, source: .tap))
        player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
        XCTAssertEqual(player.current.tempo, 140)
        XCTAssertEqual(player.playingTempo.bpm, 140, "what the remote and the page show")
        XCTAssertEqual(player.playingTempo.source, .clock)
        XCTAssertTrue(player.submit(RenderEngine(plan: try SongFiles.plan(setlist: dir + "/set.json", song: 1))))
        player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
        XCTAssertEqual(player.current.tempoSources.clock, 140)
        XCTAssertEqual(player.current.tempoSources.tap, 0, "a tap tempo holds until the next song")
        XCTAssertEqual(player.current.tempoSources.song, 80)
        player.current.inject(.tempo(0, source: .clock))
        player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
        XCTAssertEqual(player.current.tempo, 80)
        XCTAssertEqual(player.playingTempo.bpm, 80)
        XCTAssertEqual(player.playingTempo.source, .song)
        player.collectRetired()
    }
}
