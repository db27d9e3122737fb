import Foundation
import StageCore
import StagePlayer
import StageTestSupport
import XCTest

/// The file's first start at the song's transpose (`songTranspose`, set by the setlist
/// song) plays a preload made at that pitch on the control thread: live it sounds at once,
/// and the disk thread's shifter goes on from where that preload ends, so the stream is the
/// one a transposed start that waits for the disk gives (offline), frame for frame.
extension PlayerTransposeTests {
    func primedHarness(_ path: String, semitones: Int, offline: Bool, maxFrames: Int) throws -> UnitHarness {
        let settings: [String: JSONValue] = [
            "file": .string(path), "startOnLoad": .bool(true), RackDescription.songTransposeKey: .number(Double(semitones)),
        ]
        let h = try UnitHarness(type: Self.registry.type(named: "player")!, settings: settings, maxFrames: maxFrames)
        (h.unit as! PlayerUnit).waitsForDisk = offline
        h.set("transpose", Float(semitones))
        return h
    }

    func testAPrimedLiveStartSoundsAtOnceAtTheSongsPitch() throws {
        let tones = tonesFile(seconds: 4)
        let t0 = DispatchTime.now().uptimeNanoseconds
        _ = try harness(tones.path, offline: false, maxFrames: 256)
        let t1 = DispatchTime.now().uptimeNanoseconds
        let h = try primedHarness(tones.path, semitones: 5, offline: false, maxFrames: 256)
        let t2 = DispatchTime.now().uptimeNanoseconds
        let plainLoad: Double = Double(t1 - t0) / 1e6, primedLoad: Double = Double(t2 - t1) / 1e6
        print("player: made in \(formatNumber(plainLoad)) ms, primed at +5 in \(formatNumber(primedLoad)) ms (the song's load)")
        var out: [Float] = []
        for _ in 0..<(Int(rate) / 256) {
            h.renderBlock(frames: 256)
            out += UnsafeBufferPointer(start: h.outputs[0][0], count: 256)
            usleep(5333)  // a 256-frame period at 48 kHz
        }
        let first = out.firstIndex { abs($0) > 0.01 } ?? out.count
        let opening = Array(out[2400..<14400])  // 50 to 300 ms: within the primed preload
        let cents = Measure.cents(Measure.dominantFrequency(in: opening[...], low: 300, high: 700), from: 440 * pow(2, 5.0 / 12))
        print("player: a start at the song's transpose (+5) sounds after \(first) frames; its opening \(formatNumber(cents)) cents off")
        XCTAssertLessThan(first, 256, "sounds in the first period, not after the disk's first chunk")
        XCTAssertEqual(cents, 0, accuracy: 5, "the opening is at the song's pitch")
        XCTAssertEqual((h.unit as! PlayerUnit).underruns, 0, "the disk went on in time after the primed preload")
    }

    func testAPrimedStartIsTheStreamADiskStartGivesAtAnyBlockSize() throws {
        let tones = tonesFile(seconds: 3)
        let frames = Int(2.5 * rate)  // past the primed preload (24,576 frames) and the 2-s one
        let plain = try render(tones.path, changes: [(0, 5)], seconds: 2.5, block: 256)
        for block in [64, 97, 512] {
            let h = try primedHarness(tones.path, semitones: 5, offline: true, maxFrames: block)
            let out = h.render(frames: frames, blockSize: block)
            var worst: Float = 0
            var worstAt = 0
            for c in 0..<2 {
                for i in 0..<frames where abs(out[c][i] - plain[c][i]) > worst {
                    worst = abs(out[c][i] - plain[c][i])
                    worstAt = i
                }
            }
            print("player: primed start, block \(block): largest difference from a disk start \(worst) at frame \(worstAt)")
            XCTAssertLessThanOrEqual(worst, 1e-6, "block \(block): the same stream, the join at the preload's end included")
        }
    }

    func testOnlyTheFirstStartIsPrimedAnotherPitchWaitsForTheDisk() throws {
        let tones = tonesFile(seconds: 3)
        // The song asked +5, but the transpose is +2 at the start: the primed preload is
        // not at that pitch, so the start streams from the disk (offline: waits for it).
        let h = try primedHarness(tones.path, semitones: 5, offline: true, maxFrames: 256)
        h.set("transpose", 2)
        let out = h.render(frames: Int(rate), blockSize: 256)
        let cents = Measure.cents(
            Measure.dominantFrequency(in: out[0][2400..<14400], low: 300, high: 700), from: 440 * pow(2, 2.0 / 12))
        XCTAssertEqual(cents, 0, accuracy: 5, "the start at +2 is at +2, not the primed +5")
    }
}
