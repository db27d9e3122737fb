import StageCore
import StageDrivers
import XCTest

/// A song with no sections, count-in, click or MIDI-file backing, played by a box in a band
/// (`GraphCompiler.Options.leadsBand`): its clock is bare (it lists no beats and, with
/// nothing asked, only follows the tempo), yet a held recall and a live transpose still land
/// on their bar line's frame at any block size, one after another.
extension SongSectionTests {
    func bareSong() -> String { folder(sections: "[]", startOnLoad: true, extra: #", "transposeAt": "now""#) }

    func testABareClockHoldsRecallsForTheirBarLinesAtAnyBlockSize() throws {
        let dir = bareSong()
        let quiet = try snapshotIndex("quiet", in: dir), loud = try snapshotIndex("loud", in: dir)
        let barThree = Self.frame(beat: 8), barFive = Self.frame(beat: 16)
        // quiet asked in bar 2 (held for bar 3); loud asked in bar 4, after the clock has had
        // blocks with nothing to do (held for bar 5).
        let events: [EngineEvent] = [.snapshot(quiet, at: Int64(Self.frame(beat: 5.3))), .snapshot(loud, at: Int64(Self.frame(beat: 13.1)))]
        for block in [64, 97, 512] {
            let plan = try SongFiles.plan(setlist: dir + "/set.json", block: block, leadsBand: true)
            let renderer = OfflineRenderer(plan: plan)
            for e in events { XCTAssertTrue(renderer.player.controlEvents.push(e)) }
            let clock = try XCTUnwrap(renderer.player.current.songClock, "a box in a band has a clock for every song")
            var out: [Float] = []
            var beatsListed = 0
            renderer.render(input: nil, midi: nil, frames: barFive + 2400, blockSize: block) { bus, n in
                out += UnsafeBufferPointer(start: bus[0], count: n)
                beatsListed += clock.beatCount
            }
            XCTAssertEqual(out[barThree - 1], 0.3, accuracy: 0.005, "block \(block): the rack's own level before bar 3")
            XCTAssertEqual(firstFrame(out, at: 0.003), barThree, "block \(block): quiet from bar 3's first frame")
            XCTAssertEqual(out[barFive - 1], 0.003, accuracy: 0.0005, "block \(block): still quiet before bar 5")
            XCTAssertEqual(firstFrame(out, at: 0.3, from: barThree), barFive, "block \(block): loud from bar 5's first frame")
            XCTAssertEqual(clock.heldSnapshots?.armedRecall?.count, 2, "block \(block): both published")
            XCTAssertEqual(clock.heldSnapshots?.armedRecall?.bar, 16, "block \(block)")
            XCTAssertEqual(beatsListed, 0, "block \(block): a bare clock lists no beats (only a click hears them)")
        }
    }

    func testABareClocksTransposeAskedNowWaitsForTheNextBarLine() throws {
        let dir = bareSong()
        let barThree = Int64(Self.frame(beat: 8)), barFour = Int64(Self.frame(beat: 12))
        for block in [64, 97, 512] {
            let asked: [EngineEvent] = [.transpose(1, at: Int64(Self.frame(beat: 5.3))), .transpose(1, at: Int64(Self.frame(beat: 9.5)))]
            let (applied, transposer) = try transposesApplied(dir, events: asked, frames: Int(barFour) + 2400, block: block)
            XCTAssertEqual(applied, [barThree, barFour], "block \(block): each on its bar line's first frame")
            XCTAssertEqual(transposer.published, 2)
            XCTAssertEqual(transposer.armedTranspose?.bar, 12, "block \(block): the second published with bar 4's song beat")
        }
    }
}
