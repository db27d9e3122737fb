import CAllocCounter
import StageCore
import XCTest

/// A switch held for a shared beat (a band's boxes in step, `StageSync`;
/// `RackPlayer.holdNextSwitch`): the render thread begins it at the block nearest the beat,
/// says the beat it took there, allocates nothing while it waits, ignores the hold without a
/// session and never waits on an absurd one. The session is a stand-in for this layer's test;
/// three real `play --link --sync` boxes are measured by Tests/cli/sync.sh.
final class HeldSwitchTests: XCTestCase {
    /// A session at the beat the test sets. Thread: the test's.
    final class StandInSession: TempoSession {
        var state = TempoSessionState(tempo: 120, beat: 0, shared: true)
        func read(quantum: Double) -> TempoSessionState { state }
        func propose(tempo: Double) {}
    }

    let frames = 128
    /// Beats in one 128-frame block at 120 BPM, 48 kHz.
    let beatsPerBlock: Double = 128.0 * 120.0 / 60.0 / 48000.0

    func player() throws -> (RackPlayer, RenderEngine) {
        let dir = SongFiles.write([
            "r.json": SongTempoTests.delayRack,
            "set.json": #"{ "format": 2, "songs": [ { "rack": "r.json", "tempo": 120 } ] }"#,
        ])
        let first = RenderEngine(plan: try SongFiles.plan(setlist: dir + "/set.json"))
        let second = RenderEngine(plan: try SongFiles.plan(setlist: dir + "/set.json"))
        return (RackPlayer(engine: first), second)
    }

    /// Renders blocks with the session at block k's beat `start + k * beatsPerBlock` until
    /// the switch begins (at most `limit` blocks); the block it began in, or nil.
    lazy var input = BusStorage(bufferCount: 1, maxFrames: frames)
    lazy var output = BusStorage(bufferCount: 2, maxFrames: frames)

    func blocksUntilSwitch(_ p: RackPlayer, _ session: StandInSession?, start: Double, limit: Int) -> Int? {
        let (input, output) = (self.input, self.output)
        let before = p.switches.load(ordering: .relaxed)
        for k in 0..<limit {
            session?.state.beat = start + Double(k) * beatsPerBlock
            p.render(frameCount: frames, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
            if p.switches.load(ordering: .relaxed) > before { return k }
        }
        return nil
    }

    func testAHeldSwitchBeginsAtTheBlockNearestItsBeatAndSaysWhichBeat() throws {
        let (p, next) = try player()
        let session = StandInSession()
        p.session = session
        _ = blocksUntilSwitch(p, session, start: 6, limit: 2)  // warm-up blocks, no switch waiting
        p.holdNextSwitch(untilBeat: 8)
        XCTAssertTrue(p.submit(next))
        alloc_counter_start()
        let k = blocksUntilSwitch(p, session, start: 6.3, limit: 1000)
        let allocations = alloc_counter_stop()
        let block = try XCTUnwrap(k, "the held switch never began")
        let beat: Double = 6.3 + Double(block) * beatsPerBlock
        XCTAssertEqual(beat, 8, accuracy: beatsPerBlock / 2, "began at beat \(beat), not the block nearest 8")
        XCTAssertEqual(p.switchOnBeat.count, 1)
        XCTAssertEqual(p.switchOnBeat.beat, beat, accuracy: 1e-12, "the beat reported is the switch block's")
        #if !DEBUG
        XCTAssertEqual(allocations, 0, "waiting for the beat allocated \(allocations) times")
        #endif
        p.session = nil
        withExtendedLifetime(session) {}
    }

    func testWithoutASessionTheHoldIsIgnored() throws {
        let (p, next) = try player()
        p.holdNextSwitch(untilBeat: 8)
        XCTAssertTrue(p.submit(next))
        XCTAssertEqual(blocksUntilSwitch(p, nil, start: 0, limit: 10), 0)
        XCTAssertEqual(p.switchOnBeat.count, 0, "no session: no beat to report")
    }

    func testAnAbsurdHoldDoesNotStopTheShow() throws {
        let (p, next) = try player()
        let session = StandInSession()
        p.session = session
        p.holdNextSwitch(untilBeat: 6 + RackPlayer.longestSwitchHoldBeats + 1)
        XCTAssertTrue(p.submit(next))
        XCTAssertEqual(blocksUntilSwitch(p, session, start: 6, limit: 10), 0)
        p.session = nil
        withExtendedLifetime(session) {}
    }
}
