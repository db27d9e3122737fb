import Foundation
import StageCore
import CAllocCounter
import StageDrivers
import StageLink
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
        var quantum = 0.0
        func read(quantum: Double) -> TempoSessionState {
            self.quantum = quantum
            return state
        }
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
        XCTAssertEqual(session.quantum, 4, "a rack without a looper keeps the session's phase to 4 beats")
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

extension SessionTempoTests {
    func testTheSessionsPhaseIsKeptToTheLoopersBar() throws {
        let text = LooperTempoTests.rack(looper: #", "beatsPerBar": 3"#)
        let rack = try RackReader(registry: PlayerRacks.registry).read(text: text, file: "waltz.json")
        let plan = try GraphCompiler(registry: PlayerRacks.registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 128, realTime: false))
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let session = StandInSession()
        player.session = session
        let input = BusStorage(bufferCount: 1, maxFrames: 128)
        let output = BusStorage(bufferCount: 2, maxFrames: 128)
        player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
        XCTAssertEqual(session.quantum, 3, "the looper's three-beat bar is the session's quantum")
        player.session = nil
        withExtendedLifetime(session) {}
    }
}

/// The real Link session on the render path: Link's audio API (capture, beat at a time,
/// commit) inside `RackPlayer.render` allocates nothing. Link is made but not enabled: it
/// touches no network here (the two-process test, Tests/cli/link.sh, runs in a network
/// namespace of its own).
final class LinkRenderPathTests: XCTestCase {
    func testLinkOnTheRenderPathAllocatesNothing() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds; `make test` runs release")
        #else
        let dir = SongFiles.write([
            "r.json": SongTempoTests.delayRack,
            "set.json": #"{ "format": 2, "songs": [ { "rack": "r.json", "tempo": 100 } ] }"#,
        ])
        let player = RackPlayer(engine: RenderEngine(plan: try SongFiles.plan(setlist: dir + "/set.json")))
        let session = try LinkSession(tempo: 120, latencySeconds: 0.005)
        player.session = session
        let input = BusStorage(bufferCount: 1, maxFrames: 128)
        let output = BusStorage(bufferCount: 2, maxFrames: 128)
        func block() {
            player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
        }
        block()
        block()  // warm-up: the session took the song's 100 BPM (alone, it mirrors the rack)
        XCTAssertEqual(session.lastBlock?.tempo ?? 0, 100, accuracy: 1e-9)
        // Every 200 blocks the session's tempo is moved (as a peer would; here from this
        // thread, between blocks): the next block reads it, and, alone, proposes the rack's
        // 100 BPM back (Link's commitAudioSessionState). (Tempo events are not used here:
        // the engine's own handling of one allocates once, with or without Link.)
        var proposals = 0
        alloc_counter_start()
        for k in 0..<2000 {
            if k % 200 == 0 { session.propose(tempo: 90) }
            block()
            if session.lastBlock?.tempo == 90 { proposals += 1 }
        }
        let count = alloc_counter_stop()
        XCTAssertEqual(count, 0, "the render path with Link allocated \(count) times in 2000 blocks")
        XCTAssertEqual(proposals, 10, "each moved tempo was read once, then the rack's proposed back")
        XCTAssertEqual(session.lastBlock?.tempo ?? 0, 100, accuracy: 1e-9)
        player.session = nil
        withExtendedLifetime(session) {}
        #endif
    }
}
