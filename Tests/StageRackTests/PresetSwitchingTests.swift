import Foundation
import StageCore
import StageControl
import StageDrivers
import StageTestSupport
import XCTest

/// Setlists, snapshots and switching, measured on offline renders.
final class PresetSwitchingTests: XCTestCase {
    let rate = 48000.0
    let block = 128

    func renderer(startingAt index: Int = 0) throws -> OfflineRenderer {
        let setlist = try RackFiles.readSetlist(Fixtures.path("setlists/gig.json"))
        XCTAssertEqual(setlist.entries.count, 3)
        let options = GraphCompiler.Options(sampleRate: rate, maxFrames: block, hostInputChannels: 1)
        let plan = try RackFiles.load(setlist.entries[index].rack, registry: Fixtures.registry, options: options)
        return OfflineRenderer(setlist: setlist, index: index, plan: plan, registry: Fixtures.registry, options: options, log: { _ in })
    }

    func render(_ r: OfflineRenderer, input: [Float], messages: [StandardMIDIFile.TimedMessage]) -> [[Float]] {
        var out: [[Float]] = [[], []]
        r.render(
            input: AudioData(channels: [input], sampleRate: rate), midi: StandardMIDIFile(messages: messages, duration: 0),
            frames: input.count, blockSize: block
        ) { bus, n in
            for c in 0..<2 { out[c] += UnsafeBufferPointer(start: bus[c], count: n) }
        }
        return out
    }

    func testProgramChangeSwitchesWithoutAClickWhileTheOldEchoRingsOut() throws {
        let r = try renderer()
        // A tone for 0.5 s, then silence; program 2 at 0.5 s: song B (dry) has nothing to
        // play, so everything after the switch is song A's echo ringing out.
        var input = Measure.sine(frequency: 330, frames: 24000, amplitude: 0.4)
        input += [Float](repeating: 0, count: 48000)
        let out = render(r, input: input, messages: [.init(seconds: 0.5, message: .programChange(channel: 0, program: 1))])
        let left = out[0]
        let switchFrame = 24000
        XCTAssertEqual(r.switcher?.currentIndex, 1)
        XCTAssertEqual(r.player.switches.load(ordering: .relaxed), 1)
        // No click: no step bigger than the tone's own (with echo and pan gain headroom).
        let ownStep: Float = 0.4 * 2 * .pi * 330 / 48000
        XCTAssertLessThan(Measure.maxJump(left), ownStep * 2.5)
        // The echo keeps ringing after the switch: repeats every 100 ms, each 70 % of the last.
        let repeats = (1...4).map { k in Measure.rms(left[(switchFrame + k * 4800 - 1200)..<(switchFrame + k * 4800 + 1200)]) }
        XCTAssertGreaterThan(repeats[0], 0.02, "the old rack's tail is heard under the new rack")
        XCTAssertTrue(zip(repeats, repeats.dropFirst()).allSatisfy { $1 < $0 * 0.9 }, "and decays: \(repeats)")
    }

    func testTheNewRackSoundsWithinOneBlockPlusTheCrossfade() throws {
        // From song B (dry, left) to song A (echo, centred): A's dry half of a DC input is
        // 0.125 on both sides from one block plus the crossfade after the program change,
        // until its first echo returns 100 ms later. B leaves no tail.
        let r = try renderer(startingAt: 1)
        let input = [Float](repeating: 0.25, count: 48000)
        let pc = 0.25
        let out = render(r, input: input, messages: [.init(seconds: pc, message: .programChange(channel: 0, program: 0))])
        XCTAssertEqual(r.switcher?.currentIndex, 0)
        let settle = Int(pc * rate) + block + r.player.crossfadeFrames
        for c in 0..<2 {
            for i in stride(from: settle, to: settle + 3000, by: 100) {
                XCTAssertEqual(out[c][i], 0.125, accuracy: 1e-3, "channel \(c) frame \(i)")
            }
        }
        XCTAssertEqual(out[1][Int(pc * rate) - block - 10], 0, accuracy: 1e-6, "song B was hard left before")
        XCTAssertEqual(r.player.switches.load(ordering: .relaxed), 1)
    }

    func testSnapshotRecallMorphsWithoutRebuilding() throws {
        let r = try renderer()
        let input = Measure.sine(frequency: 330, frames: 96000, amplitude: 0.25)
        let at = 1.0
        let out = render(r, input: input, messages: [.init(seconds: at, message: .programChange(channel: 0, program: 9))])
        XCTAssertEqual(r.player.switches.load(ordering: .relaxed), 0, "a snapshot does not switch racks")
        let f = Int(at * rate)
        // "quiet" sets mix.gain1 to −20 dB over 50 ms.
        let before = Measure.rms(out[0][(f - 12000)..<f])
        let after = Measure.rms(out[0][(f + 4800)..<(f + 16800)])
        XCTAssertEqual(after / before, powf(10, -20.0 / 20), accuracy: 0.01)
        let ownStep: Float = Measure.peak(out[0][(f - 12000)..<f]) * 2 * .pi * 330 / 48000
        XCTAssertLessThan(Measure.maxJump(out[0][(f - 2400)..<(f + 4800)]), ownStep * 1.05, "the morph does not click")
    }

    func testABrokenRackKeepsTheCurrentOnePlaying() throws {
        let log = Lines()
        let setlist = try RackFiles.readSetlist(Fixtures.path("setlists/gig.json"))
        let options = GraphCompiler.Options(sampleRate: rate, maxFrames: block, hostInputChannels: 1)
        let plan = try RackFiles.load(setlist.entries[0].rack, registry: Fixtures.registry, options: options)
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let switcher = PresetSwitcher(
            setlist: setlist, index: 0, player: player, firstPlan: plan, registry: Fixtures.registry, options: options,
            log: { log.append($0) })
        XCTAssertFalse(switcher.perform(.program(3, bank: 0), at: EngineEvent.now))
        XCTAssertEqual(switcher.currentIndex, 0)
        XCTAssertTrue(log.all.joined().contains("broken-c.json:1:44: units.out.type: unknown unit type \"outptu\""), "\(log)")
        XCTAssertFalse(switcher.perform(.program(77, bank: 0), at: EngineEvent.now), "an unbound program does nothing")
    }

    /// 50 program changes within a second: the last one wins, one load at a time, nothing grows.
    func testABurstOfProgramChangesEndsOnTheLastOne() throws {
        let setlist = try RackFiles.readSetlist(Fixtures.path("setlists/gig.json"))
        let options = GraphCompiler.Options(sampleRate: rate, maxFrames: block, hostInputChannels: 1)
        let plan = try RackFiles.load(setlist.entries[0].rack, registry: Fixtures.registry, options: options)
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let switcher = PresetSwitcher(
            setlist: setlist, index: 0, player: player, firstPlan: plan, registry: Fixtures.registry, options: options,
            log: { _ in })
        let violations = queueOwnershipViolations.load(ordering: .relaxed)
        try switcher.start()
        defer { switcher.stop() }
        // A render thread stand-in that plays blocks in real time-ish.
        let input = BusStorage(bufferCount: 1, maxFrames: block)
        let output = BusStorage(bufferCount: 2, maxFrames: block)
        let finished = Lines()
        let renderThreadEnded = DispatchSemaphore(value: 0)
        let renderThread = Thread {
            while finished.all.isEmpty {
                player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
                usleep(500)
            }
            renderThreadEnded.signal()
        }
        renderThread.start()
        for i in 0..<50 {
            switcher.request(.program(i % 2 == 0 ? 2 : 1, bank: 0))
            usleep(20_000)
        }
        switcher.request(.program(2, bank: 0))  // the last request: song B
        let deadline = Date().addingTimeInterval(5)
        // Until the render thread has begun the switch to every rack the switcher submitted.
        func settled() -> Bool {
            switcher.currentIndex == 1 && player.switches.load(ordering: .relaxed) == switcher.loadsCompleted.load(ordering: .relaxed)
        }
        while !settled() && Date() < deadline { usleep(1_000) }
        XCTAssertTrue(settled(), "the render thread took every rack submitted within 5 s")
        finished.append("done")
        XCTAssertEqual(switcher.currentIndex, 1, "ends on the last program requested")
        XCTAssertEqual(switcher.maxLoadsInFlight.load(ordering: .relaxed), 1, "never more than one load in flight")
        XCTAssertGreaterThan(switcher.loadsCompleted.load(ordering: .relaxed), 1)
        // Each rack was warmed on the control thread, then rendered on the render thread.
        renderThreadEnded.wait()
        XCTAssertTrue(player.current.warmedUp, "the switcher warms the racks it loads")
        XCTAssertEqual(queueOwnershipViolations.load(ordering: .relaxed), violations, "each queue kept one consumer")
    }

    func testSetlistErrorsHaveLineAndColumn() {
        let text = """
            { "format": 1, "songs": [ { "rack": "a.json", "program": 1 }, { "rack": "b.json", "program": 1 },
              { "progam": 3 } ] }
            """
        XCTAssertThrowsError(try SetlistReader.read(text: text, file: "s.json")) { error in
            let lines = (error as! RackError).diagnostics.map(\.description)
            XCTAssertEqual(lines, [
                "s.json:1:94: songs[1].program: program 1 (bank 0) already selects songs[0]",
                "s.json:2:5: songs[2].progam: unknown key in a song (did you mean \"program\"?)",
                "s.json:2:3: songs[2].rack: missing (the rack file, relative to the setlist)",
            ])
        }
    }
}

/// Lines collected from several threads.
final class Lines: @unchecked Sendable {
    private var lines: [String] = []
    private let lock = NSLock()
    func append(_ s: String) {
        lock.lock()
        lines.append(s)
        lock.unlock()
    }
    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}
