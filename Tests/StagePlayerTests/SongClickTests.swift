import Foundation
import StageCore
import StageControl
import StageDrivers
import StagePlayer
import XCTest
import CAllocCounter

/// The click follows the song's tempo and time signature with an accented downbeat, on the
/// frame of each beat whatever the block size; a count-in of N bars comes before the song's
/// track and first section, which start on the downbeat after it.
final class SongClickTests: XCTestCase {
    static let framesPerBeat: Double = 60 * 48000 / 130.0

    /// The first frame at or after `beats` beats from frame 0.
    static func frame(_ beats: Double) -> Int {
        let frames: Double = beats * framesPerBeat
        return Int(frames.rounded(.up))
    }

    func folder(song: String, rack: String) -> String {
        let setlist = "{ \"format\": 2, \"songs\": [ { \"rack\": \"r.json\", \"tempo\": 130, \(song) } ] }"
        let dir = SongFiles.write(["set.json": setlist, "r.json": rack])
        TrackFiles.write(dir + "/dc.wav", channels: [[Float](repeating: 0.3, count: 48000 * 6)], rate: 48000)
        return dir
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

    static let clickRack = """
        { "format": 2, "units": { "click": { "type": "click", "params": { "level": -6 } }, "out": { "type": "output" } },
          "connections": ["click -> out"] }
        """

    func testTheClickCountsInAndFollowsTheBarOnItsFrames() throws {
        let dir = folder(
            song: #""timeSignature": "3/4", "countIn": 1, "sections": [ { "name": "verse", "at": "1:1" } ]"#, rack: Self.clickRack)
        let beats = 7  // one bar of count-in, then bar 1 and a beat of bar 2
        let expected = (0..<beats).map { Self.frame(Double($0)) }
        for block in [64, 512, 97] {
            let found = onsets(try render(dir, frames: expected.last! + 4800, block: block))
            XCTAssertEqual(found.map(\.frame), expected, "block \(block): a click on each beat's frame")
            let downbeat: Float = 0.5  // −6 dB
            let peaks = found.map(\.peak)
            for (k, peak) in peaks.enumerated() {
                let accented = k % 3 == 0
                XCTAssertEqual(peak / (accented ? downbeat : downbeat / 2), 1, accuracy: 0.01, "block \(block), beat \(k): accent on the downbeat only")
            }
        }
    }

    func testTheTrackAndTheFirstSectionStartOnTheDownbeatAfterTheCountIn() throws {
        let rack = """
            { "format": 2, "units": { "backing": { "type": "player", "file": "dc.wav", "startOnLoad": true },
                                      "g": { "type": "gain" }, "out": { "type": "output" } },
              "connections": ["backing -> g -> out"],
              "snapshots": { "loud": { "morph": 0, "params": { "g.gain": 0 } }, "soft": { "morph": 0, "params": { "g.gain": -20 } } } }
            """
        let dir = folder(
            song: #""track": "dc.wav", "countIn": 2, "sections": [ { "name": "intro", "at": "1:1", "actions": ["snapshot soft"] }, { "name": "verse", "at": "2:1", "actions": ["snapshot loud"] } ]"#,
            rack: rack)
        let downbeat = Self.frame(8)  // two bars of 4/4
        let verse = Self.frame(12)
        for block in [64, 512, 97] {
            let out = try render(dir, frames: verse + 2400, block: block)
            XCTAssertEqual(out[..<downbeat].map(abs).max(), 0, "block \(block): nothing in the count-in (startOnLoad waits for it)")
            XCTAssertEqual(out[downbeat], 0.03, accuracy: 0.0005, "block \(block): the track and the intro on the downbeat")
            XCTAssertEqual(out[verse - 1], 0.03, accuracy: 0.0005)
            XCTAssertEqual(out[verse], 0.3, accuracy: 0.005, "block \(block): the verse a bar later")
        }
    }

    func testTheRacksOwnTrackWaitsForTheCountInToo() throws {
        let rack = """
            { "format": 2, "units": { "backing": { "type": "player", "file": "dc.wav", "startOnLoad": true }, "out": { "type": "output" } },
              "connections": ["backing -> out"] }
            """
        let dir = folder(song: #""countIn": 1, "timeSignature": "3/4""#, rack: rack)
        let downbeat = Self.frame(3)
        let out = try render(dir, frames: downbeat + 480, block: 97)
        XCTAssertEqual(out[..<downbeat].map(abs).max(), 0, "startOnLoad waits for the count-in")
        XCTAssertEqual(out[downbeat], 0.3, accuracy: 0.001, "the track from the downbeat")
    }

    func testACountInOnlyClickStopsAtTheDownbeat() throws {
        let rack = Self.clickRack.replacingOccurrences(of: "\"level\": -6", with: "\"level\": -6, \"mode\": 1")
        let dir = folder(song: #""countIn": 1"#, rack: rack)
        let found = onsets(try render(dir, frames: Self.frame(8), block: 128))
        XCTAssertEqual(found.map(\.frame), (0..<4).map { Self.frame(Double($0)) }, "the four count-in beats, then silence")
    }

    func testABadCountInIsAnErrorAtItsPlace() throws {
        let dir = folder(song: #""countIn": 9"#, rack: Self.clickRack)
        do {
            _ = try RackFiles.readSetlist(dir + "/set.json")
            XCTFail("a count-in of 9 bars")
        } catch {
            XCTAssertTrue("\(error)".contains("songs[0].countIn: must be"), "\(error)")
        }
    }

    func testTheSongClockAllocatesNothingOnTheRenderThread() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds; `make test` runs release")
        #else
        let rack = """
            { "format": 2, "units": { "click": { "type": "click" }, "g": { "type": "gain" }, "out": { "type": "output" } },
              "connections": ["click -> g -> out"],
              "snapshots": { "a": { "morph": 0.1, "params": { "g.gain": -6 } }, "b": { "morph": 0, "params": { "g.gain": 0 } } } }
            """
        let sections = (1...40).map { #"{ "name": "s\#($0)", "at": \#($0), "actions": ["snapshot \#($0 % 2 == 0 ? "a" : "b")", "talk on"] }"# }
        let dir = folder(song: "\"countIn\": 1, \"sections\": [\(sections.joined(separator: ", "))]", rack: rack)
        let plan = try SongFiles.plan(setlist: dir + "/set.json", block: 128)
        let engine = RenderEngine(plan: plan)
        engine.warmUp()
        engine.render(frameCount: 128)
        alloc_counter_start()
        for k in 0..<6000 {
            if k % 500 == 0 { engine.inject(.section(k % 1000 == 0 ? .next : .repeatCurrent, at: engine.sampleTime + 64)) }
            engine.render(frameCount: 128)
        }
        let count = alloc_counter_stop()
        XCTAssertEqual(count, 0, "the engine allocated \(count) times in 6000 blocks of sections, jumps and clicks")
        let playing = try XCTUnwrap(engine.songClock?.published.current)
        XCTAssertGreaterThan(playing, 3, "sections went by")
        #endif
    }
}
