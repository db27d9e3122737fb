import Foundation
import StageControl
import StageCore
import StageDrivers
import StagePlayer
import XCTest
import CAllocCounter

/// A section's spoken cue starts on the frame one bar before the section, mixed into the
/// click's output at the click's level, whatever the block size; a cue that does not decode
/// is an error at load naming the file.
final class SongCueTests: XCTestCase {
    let clicks = SongCueRenders()

    /// The song (tempo 130, 4/4, a bar of count-in) rendered with its cues minus the same
    /// song with `"cues": false`: only the cues remain.
    func cuesAlone(_ song: String, frames: Int, block: Int, files: (String) -> Void = { _ in }) throws -> [Float] {
        // −20 dB: the click and a cue together stay far below the output's limiter.
        let rack = SongClickTests.clickRack.replacingOccurrences(of: "\"level\": -6", with: "\"level\": -20")
        let with = clicks.folder(song: "\"countIn\": 1, " + song, rack: rack)
        let without = clicks.folder(song: "\"countIn\": 1, \"cues\": false, " + song, rack: rack)
        files(with)
        files(without)
        let a = try clicks.render(with, frames: frames, block: block)
        let b = try clicks.render(without, frames: frames, block: block)
        return zip(a, b).map { $0 - $1 }
    }

    func testANamedCueStartsOnItsFrameOneBarBeforeTheSection() throws {
        let cue = [Float](repeating: 0.25, count: 2000)  // peak-normalised to the click's level
        let song = #""sections": [ { "name": "verse", "at": "1:1", "cue": "cue.wav" }, { "name": "chorus", "at": "3:1", "cue": "cue.wav" } ]"#
        let verseCue = SongClickTests.frame(0)  // one bar before bar 1: the count-in's downbeat
        let chorusCue = SongClickTests.frame(8)  // bar 2: the count-in bar and bar 1 come first
        for block in [64, 97, 512] {
            let x = try cuesAlone(song, frames: chorusCue + 4000, block: block) {
                TrackFiles.write($0 + "/cue.wav", channels: [cue], rate: 48000)
            }
            let starts = clicks.onsets(x).map(\.frame)
            XCTAssertEqual(starts, [verseCue, chorusCue], "block \(block): each cue on the frame one bar before its section")
            XCTAssertEqual(x[chorusCue], 0.1, accuracy: 0.0005, "block \(block): at the click's level (−20 dB)")
            XCTAssertEqual(x[chorusCue + 1999], 0.1, accuracy: 0.0005)
            XCTAssertEqual(x[chorusCue + 2000], 0, "block \(block): to the cue's end")
        }
    }

    func testTheShippedCueForASectionNameIsResampledAndSpoken() throws {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../racks/cues/chorus.flac").path
        let song = #""sections": [ { "name": "Chorus", "at": "2:1" } ]"#
        let at = SongClickTests.frame(4)
        let x = try cuesAlone(song, frames: at + 48000, block: 128) { dir in
            try? FileManager.default.createDirectory(atPath: dir + "/cues", withIntermediateDirectories: true)
            try? FileManager.default.copyItem(atPath: shipped, toPath: dir + "/cues/chorus.flac")
        }
        let heard = x.indices.filter { abs(x[$0]) > 1e-3 }
        let first = try XCTUnwrap(heard.first, "the shipped chorus cue is heard")
        XCTAssertGreaterThanOrEqual(first, at, "not before its bar")
        XCTAssertLessThan(first - at, 480, "within 10 ms of its bar (the spoken word's own attack)")
        let peak = x.map(abs).max() ?? 0
        XCTAssertEqual(peak, 0.1, accuracy: 0.01, "at the click's level")
        let seconds = Double(heard.last! - first) / 48000
        XCTAssertGreaterThan(seconds, 0.2, "a spoken word, resampled from 16 kHz (\(seconds) s)")
        XCTAssertLessThan(seconds, 1.5)
    }

    func testACueThatDoesNotDecodeIsAnErrorAtLoadNamingIt() throws {
        let dir = clicks.folder(song: #""sections": [ { "name": "verse", "at": "2:1", "cue": "broken.wav" } ]"#, rack: SongClickTests.clickRack)
        FileManager.default.createFile(atPath: dir + "/broken.wav", contents: Data("not a sound".utf8))
        XCTAssertThrowsError(try SongFiles.plan(setlist: dir + "/set.json")) { error in
            XCTAssertTrue("\(error)".contains("broken.wav"), "\(error)")
        }
        let missing = clicks.folder(song: #""sections": [ { "name": "verse", "at": "2:1", "cue": "gone.wav" } ]"#, rack: SongClickTests.clickRack)
        XCTAssertThrowsError(try SongFiles.plan(setlist: missing + "/set.json")) { error in
            XCTAssertTrue("\(error)".contains("gone.wav"), "\(error)")
        }
    }

    func testABadCueKeyIsAnErrorAtItsPlace() throws {
        let dir = clicks.folder(song: #""cues": true, "sections": [ { "name": "verse", "at": "2:1", "cue": 3 } ]"#, rack: SongClickTests.clickRack)
        XCTAssertThrowsError(try RackFiles.readSetlist(dir + "/set.json")) { error in
            XCTAssertTrue("\(error)".contains("songs[0].cues: can only be false"), "\(error)")
            XCTAssertTrue("\(error)".contains("songs[0].sections[0].cue: must be a sound file"), "\(error)")
        }
    }

    func testCuesAllocateNothingOnTheRenderThread() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds; `make test` runs release")
        #else
        let sections = (1...40).map { #"{ "name": "s\#($0)", "at": \#($0), "cue": "cue.wav" }"# }
        let dir = clicks.folder(song: "\"countIn\": 1, \"sections\": [\(sections.joined(separator: ", "))]", rack: SongClickTests.clickRack)
        TrackFiles.write(dir + "/cue.wav", channels: [[Float](repeating: 0.25, count: 4000)], rate: 22050)
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: 128)
        let engine = RenderEngine(plan: plan)
        engine.warmUp()
        engine.render(frameCount: 128)
        alloc_counter_start()
        for _ in 0..<6000 { engine.render(frameCount: 128) }
        let count = alloc_counter_stop()
        XCTAssertEqual(count, 0, "the engine allocated \(count) times in 6000 blocks of cues")
        #endif
    }
}

/// SongClickTests' song folders, renders and onsets, for the cue tests. Thread: the test's.
struct SongCueRenders {
    func folder(song: String, rack: String) -> String {
        let setlist = "{ \"format\": 2, \"songs\": [ { \"rack\": \"r.json\", \"tempo\": 130, \(song) } ] }"
        return SongFiles.write(["set.json": setlist, "r.json": rack])
    }

    func render(_ dir: String, frames: Int, block: Int) throws -> [Float] {
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: block)
        let renderer = OfflineRenderer(plan: plan)
        var left: [Float] = []
        renderer.render(input: nil, midi: StandardMIDIFile(messages: [], duration: 0), frames: frames, blockSize: block) { bus, n in
            left += UnsafeBufferPointer(start: bus[0], count: n)
        }
        return left
    }

    /// Frames where the signal starts after at least 100 frames of silence, with their peaks.
    func onsets(_ x: [Float]) -> [(frame: Int, peak: Float)] {
        var out: [(Int, Float)] = []
        var quiet = 100
        for i in x.indices {
            if abs(x[i]) > 1e-4 {
                if quiet >= 100 { out.append((i, x[i...min(i + 200, x.count - 1)].map(abs).max() ?? 0)) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return out
    }
}
