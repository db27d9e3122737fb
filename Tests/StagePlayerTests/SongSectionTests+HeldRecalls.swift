import StageCore
import StageDrivers
import XCTest

/// Snapshot recalls and transposes held for a bar line of the song's clock (`HeldSnapshots`,
/// `SongTranspose`; a band's boxes in step): a leader's own waits for the next bar line,
/// whatever the block size, and is published for the leader to tell; a follower's lands on
/// the bar line of its song beat, or on the next one when that has passed.
extension SongSectionTests {
    func renderHeld(_ dir: String, events: [EngineEvent], frames: Int, block: Int) throws -> (out: [Float], renderer: OfflineRenderer) {
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: block)
        let renderer = OfflineRenderer(plan: plan)
        for e in events { XCTAssertTrue(renderer.player.controlEvents.push(e)) }
        var out: [Float] = []
        out.reserveCapacity(frames)
        renderer.render(input: nil, midi: nil, frames: frames, blockSize: block) { bus, n in
            out += UnsafeBufferPointer(start: bus[0], count: n)
        }
        return (out, renderer)
    }

    func snapshotIndex(_ name: String, in dir: String) throws -> Int {
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: 64)
        return try XCTUnwrap(plan.rack.snapshots.firstIndex { $0.name == name })
    }

    func testARecallHeldForTheNextBarLineLandsOnItAtAnyBlockSize() throws {
        let dir = folder(sections: #"[ { "name": "A", "at": "1:1", "actions": ["snapshot quiet"] } ]"#, startOnLoad: true)
        let loud = try snapshotIndex("loud", in: dir)
        let asked = Self.frame(beat: 5.3)  // in bar 2: held for bar 3's line (song beat 8)
        let barThree = Self.frame(beat: 8)
        for block in [64, 97, 512] {
            let (out, renderer) = try renderHeld(dir, events: [.snapshot(loud, at: Int64(asked))], frames: barThree + 2400, block: block)
            XCTAssertEqual(out[barThree - 1], 0.003, accuracy: 0.0005, "block \(block): still quiet on the frame before the bar line")
            XCTAssertEqual(firstFrame(out, at: 0.3), barThree, "block \(block): loud from bar 3's first frame")
            let armed = try XCTUnwrap(renderer.player.current.songClock?.heldSnapshots?.armedRecall, "block \(block)")
            XCTAssertEqual(armed.count, 1)
            XCTAssertEqual(armed.snapshot, loud)
            XCTAssertEqual(armed.bar, 8, "block \(block): published with the song beat of its bar line")
        }
    }

    func testAFollowersRecallLandsOnItsBarLineOrTheNext() throws {
        let dir = folder(sections: #"[ { "name": "A", "at": "1:1", "actions": ["snapshot quiet"] } ]"#, startOnLoad: true)
        let half = try snapshotIndex("half", in: dir)
        let barThree = Self.frame(beat: 8)
        // For song beat 8, asked in bar 1; for song beat 4, asked at beat 6 (passed): bar 3.
        for (atBar, sent) in [(8, Self.frame(beat: 1)), (4, Self.frame(beat: 6))] {
            let (out, renderer) = try renderHeld(
                dir, events: [.snapshot(half, atBar: atBar, at: Int64(sent))], frames: barThree + 2400, block: 97)
            XCTAssertEqual(firstFrame(out, at: 0.03), barThree, "the recall for beat \(atBar), sent at frame \(sent): from bar 3")
            XCTAssertNil(renderer.player.current.songClock?.heldSnapshots?.armedRecall, "a follower's recall is not published again")
        }
    }

    func testAHeldRecallOfANumberTheRackDoesNotHaveIsIgnored() throws {
        let dir = folder(sections: #"[ { "name": "A", "at": "1:1", "actions": ["snapshot quiet"] } ]"#, startOnLoad: true)
        let (out, _) = try renderHeld(dir, events: [.snapshot(9, at: 0), .snapshot(-1, at: 0)], frames: Self.frame(beat: 9), block: 64)
        XCTAssertEqual(out.last ?? 0, 0.003, accuracy: 0.0005, "still the quiet snapshot")
    }

    /// The frames the song's transpose was applied on, rendering `dir`'s leader song with
    /// `events` pushed first.
    func transposesApplied(_ dir: String, events: [EngineEvent], frames: Int, block: Int) throws -> ([Int64], SongTranspose) {
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: block, leadsBand: true)
        let renderer = OfflineRenderer(plan: plan)
        for e in events { XCTAssertTrue(renderer.player.controlEvents.push(e)) }
        let transposer = try XCTUnwrap(renderer.player.current.songClock?.transposer)
        var applied: [Int64] = []
        renderer.render(input: nil, midi: nil, frames: frames, blockSize: block) { _, _ in
            if transposer.appliedAt >= 0 { applied.append(transposer.appliedAt) }
        }
        return (applied, transposer)
    }

    func testALeadersTransposeAskedNowWaitsForTheNextBarLine() throws {
        let dir = folder(
            sections: #"[ { "name": "A", "at": "1:1", "actions": ["snapshot quiet"] } ]"#, startOnLoad: true,
            extra: #", "transposeAt": "now""#)
        let barThree = Int64(Self.frame(beat: 8))
        for block in [64, 97, 512] {
            let asked = EngineEvent.transpose(1, at: Int64(Self.frame(beat: 5.3)))
            let (applied, transposer) = try transposesApplied(dir, events: [asked], frames: Int(barThree) + 2400, block: block)
            XCTAssertEqual(applied, [barThree], "block \(block): applied once, on bar 3's first frame")
            XCTAssertEqual(transposer.published, 1)
            let armed = try XCTUnwrap(transposer.armedTranspose, "block \(block)")
            XCTAssertEqual(armed.count, 1)
            XCTAssertEqual(armed.total, 1)
            XCTAssertEqual(armed.bar, 8, "block \(block): published with the song beat of its bar line")
        }
    }

    func testAFollowersTransposeLandsOnTheLeadersBarLine() throws {
        let dir = folder(
            sections: #"[ { "name": "A", "at": "1:1" }, { "name": "B", "at": "9:1" } ]"#, startOnLoad: true)
        let barThree = Int64(Self.frame(beat: 8))
        for (atBar, sent) in [(8, Self.frame(beat: 1)), (4, Self.frame(beat: 6))] {
            let told = EngineEvent.transpose(to: 2, atBar: atBar, at: Int64(sent))
            let (applied, transposer) = try transposesApplied(dir, events: [told], frames: Int(barThree) + 2400, block: 97)
            XCTAssertEqual(applied, [barThree], "for beat \(atBar), sent at frame \(sent): on bar 3, not at the next section")
            XCTAssertEqual(transposer.published, 2)
            XCTAssertNil(transposer.armedTranspose, "a follower's is not published again")
        }
    }

    func testALeadersTransposeAtTheNextSectionIsPublishedWithItsBeat() throws {
        let dir = folder(sections: #"[ { "name": "A", "at": "1:1" }, { "name": "B", "at": "4:1" } ]"#, startOnLoad: true)
        let sectionB = Int64(Self.frame(beat: 12))
        let (applied, transposer) = try transposesApplied(
            dir, events: [.transpose(-1, at: Int64(Self.frame(beat: 2)))], frames: Int(sectionB) + 2400, block: 64)
        XCTAssertEqual(applied, [sectionB], "at section B (its transposeAt is the default, a section)")
        XCTAssertEqual(transposer.armedTranspose?.bar, 12, "told with B's song beat")
        XCTAssertEqual(transposer.armedTranspose?.total, -1)
    }
}
