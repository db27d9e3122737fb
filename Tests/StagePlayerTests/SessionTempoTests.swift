import Foundation
import StageCore
import StageDrivers
import XCTest

/// A shared session's place in the tempo precedence (`play --link`; racks/README.md,
/// "Tempo"): below a running MIDI clock, above taps and the song; the rack's beat grid is the
/// session's; what this box says (a clock, a new tap, its own tempo while alone) is proposed
/// to the session. The session here is a stand-in for this layer's test; the real one
/// (Ableton Link between two `play` processes) is measured by Tests/cli/link.sh.
final class SessionTempoTests: XCTestCase {
    /// A session that says what the test sets and takes what is proposed. Thread: the test's.
    final class StandInSession: TempoSession {
        var state = TempoSessionState(tempo: 120, beat: 0, shared: false)
        var proposals: [Double] = []
        func read(quantum: Double) -> TempoSessionState { state }
        func propose(tempo: Double) {
            proposals.append(tempo)
            state.tempo = tempo
        }
    }

    func testTheSessionRanksBelowTheClockAboveTapsAndSongAndSetsTheBeatGrid() throws {
        let dir = SongFiles.write([
            "r.json": SongTempoTests.delayRack,
            "set.json": #"{ "format": 2, "songs": [ { "rack": "r.json", "tempo": 100 } ] }"#,
        ])
        let plan = try SongFiles.plan(setlist: dir + "/set.json")
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let session = StandInSession()
        player.session = session
        let input = BusStorage(bufferCount: 1, maxFrames: 128)
        let output = BusStorage(bufferCount: 2, maxFrames: 128)
        func block() {
            player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
        }
        // Alone: the rack keeps the song's tempo and the session takes it; the beat grid is
        // the session's (7.5 at the block's start, then one block at 100 BPM).
        session.state.beat = 7.5
        block()
        XCTAssertEqual(player.playingTempo.source, .song)
        XCTAssertEqual(player.playingTempo.bpm, 100)
        XCTAssertEqual(session.proposals, [100], "the session mirrors the rack while alone")
        let beatsPerBlock: Double = 128.0 * 100.0 / 60.0 / 48000.0
        XCTAssertEqual(player.current.beatPosition, 7.5 + beatsPerBlock, accuracy: 1e-9)
        // A peer shares the session at 90 BPM: the session leads over the song.
        session.state = TempoSessionState(tempo: 90, beat: 33.25, shared: true)
        block()
        XCTAssertEqual(player.playingTempo.source, .link)
        XCTAssertEqual(player.playingTempo.bpm, 90)
        XCTAssertEqual(session.proposals, [100], "a shared session is not told the song's tempo")
        // A tap (or the remote's tempo) goes to the session, and the rack follows it there.
        player.current.inject(.tempo(130, source: .tap))
        block()
        XCTAssertEqual(session.proposals, [100, 130])
        block()
        XCTAssertEqual(player.playingTempo.source, .link)
        XCTAssertEqual(player.playingTempo.bpm, 130)
        // A peer changes the tempo: the rack follows; the old tap is not proposed again.
        session.state.tempo = 96
        block()
        XCTAssertEqual(player.playingTempo.bpm, 96)
        XCTAssertEqual(session.proposals, [100, 130])
        // A running MIDI clock leads here and is proposed to the band.
        player.current.inject(.tempo(140, source: .clock))
        block()
        XCTAssertEqual(player.playingTempo.source, .clock)
        XCTAssertEqual(player.playingTempo.bpm, 140)
        XCTAssertEqual(session.proposals.last, 140)
        // The clock stops and the last peer leaves: the tap leads again, the session follows.
        player.current.inject(.tempo(0, source: .clock))
        session.state.shared = false
        block()
        block()
        XCTAssertEqual(player.playingTempo.source, .tap)
        XCTAssertEqual(player.playingTempo.bpm, 130)
        XCTAssertEqual(session.proposals.last, 130)
        player.session = nil
        withExtendedLifetime(session) {}
    }
}
