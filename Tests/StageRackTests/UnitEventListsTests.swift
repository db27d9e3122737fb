import StageCore
import StageTestSupport
import XCTest

/// The block's events chained by unit (`UnitEventLists`): parameter, bypass and gate events
/// of two units, a few frames apart inside one block, land on their own unit at their own
/// frame, the same whether a block holds one of them or all of them.
final class UnitEventListsTests: XCTestCase {
    /// input → vox (gain) → mixer input 1; input → mixer input 2 (its mute a gate); → output.
    let rack = """
        { "format": 1,
          "units": {
            "mic": { "type": "input" },
            "vox": { "type": "gain", "params": { "gain": -3 } },
            "mix": { "type": "mixer", "inputs": 2, "params": { "gain2": -9 } },
            "out": { "type": "output" } },
          "connections": [ "mic -> vox -> mix:1", "mic -> mix:2", "mix -> out" ],
          "midi": { "map": [ { "cc": 7, "to": "vox.gain", "min": -40, "max": 6 },
                             { "cc": 80, "button": "toggle", "to": "vox.bypass" },
                             { "cc": 10, "to": "mix.pan1" }, { "cc": 20, "to": "mix.mute2" } ] } }
        """

    /// Frames 100…140, all inside the first 512-frame block: vox, mix, vox's bypass, mix's
    /// gate, vox again.
    var midi: [StandardMIDIFile.TimedMessage] {
        let events: [(frame: Int, message: MIDIMessage)] = [
            (100, .controlChange(channel: 0, controller: 7, value: 20)),
            (103, .controlChange(channel: 0, controller: 10, value: 127)),
            (105, .controlChange(channel: 0, controller: 80, value: 127)),
            (131, .controlChange(channel: 0, controller: 20, value: 127)),
            (140, .controlChange(channel: 0, controller: 7, value: 127)),
        ]
        return events.map { e in StandardMIDIFile.TimedMessage(seconds: Double(e.frame) / 48000, message: e.message) }
    }

    func testInterleavedEventsOfSeveralUnitsLandOnTheirOwnUnitAtTheirFrame() throws {
        let frames = 2048
        let voice: [Float] = (0..<frames).map { i in 0.3 * sinf(Float(i) * 0.031) + 0.1 * sinf(Float(i) * 0.37) }
        let reference = try RackBuilding.render(rack, input: [voice], midi: midi, frames: frames, block: 1)
        let untouched = try RackBuilding.render(rack, input: [voice], midi: [], frames: frames, block: 512)
        for block in [64, 512] {
            let out = try RackBuilding.render(rack, input: [voice], midi: midi, frames: frames, block: block)
            for c in 0..<2 {
                let diff: Float = zip(out[c], reference[c]).map { abs($0 - $1) }.max()!
                XCTAssertLessThanOrEqual(diff, 1e-6, "block \(block) channel \(c): against one frame a block")
            }
        }
        // The events changed the sound, and nothing before the first (the MIDI file's ticks
        // may move an event by a frame or so).
        for c in 0..<2 {
            let before: Float = zip(reference[c][0..<90], untouched[c][0..<90]).map { abs($0 - $1) }.max()!
            let after: Float = zip(reference[c][100...], untouched[c][100...]).map { abs($0 - $1) }.max()!
            XCTAssertEqual(before, 0, "channel \(c): nothing moves before the first event")
            XCTAssertGreaterThan(after, 0.01, "channel \(c): the events moved the sound")
        }
    }
}
