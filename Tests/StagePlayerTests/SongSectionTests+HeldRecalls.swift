import StageCore
import StageDrivers
import XCTest

/// Snapshot recalls held for a bar line of the song's clock (`HeldSnapshots`, a band's boxes
/// in step): a leader's own waits for the next bar line, whatever the block size, and is
/// published for the leader to tell; a follower's lands on the bar line of its song beat, or
/// on the next one when that has passed.
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
}
