import CAllocCounter
import Foundation
import StageControl
import StageCore
import StageDrivers
import StagePlayer
import XCTest

/// Talk's one state (`TalkSwitch`, the engine's): a section's `talk on`, the MIDI toggle
/// and the remote's `talk` all go through it, so they never disagree, and Talk off puts
/// back the values the units had before (a delay's `feed` at 40 goes back to 40, not 100).
/// Measured on the engine's parameter targets and bypasses.
final class TalkStateTests: XCTestCase {
    static let rack = """
        { "format": 2,
          "units": { "mic": { "type": "input" }, "pitch": { "type": "pitch", "params": { "pitch": 700 } },
                     "echo": { "type": "delay", "params": { "feed": 40, "delayTime": 0.05, "feedback": 0, "wetDryMix": 100 } },
                     "out": { "type": "output" } },
          "connections": [ "mic -> pitch -> echo -> out" ],
          "midi": { "map": [ { "cc": 64, "action": "talk" } ] } }
        """

    /// A rig: song 1 of a setlist whose first section turns Talk on at bar 1.
    final class Rig {
        let plan: RenderPlan
        let player: RackPlayer
        let mapper: MIDIMapper
        let input = BusStorage(bufferCount: 1, maxFrames: 128)
        let output = BusStorage(bufferCount: 2, maxFrames: 128)

        init(sections: String) throws {
            let setlist = """
                { "format": 2, "songs": [ { "rack": "r.json", "tempo": 120, "sections": \(sections) } ] }
                """
            let dir = SongFiles.write(["set.json": setlist, "r.json": TalkStateTests.rack])
            plan = try SongFiles.plan(setlist: dir + "/set.json")
            player = RackPlayer(engine: RenderEngine(plan: plan))
            mapper = MIDIMapper(plan: plan)
        }

        func render(blocks: Int = 2) {
            for _ in 0..<blocks {
                player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
            }
        }

        /// The pedal pressed and released (the MIDI thread's part: the mapper, the player's queue).
        func press() {
            for value in [127, 0] {
                mapper.handle(.controlChange(channel: 0, controller: 64, value: value)) { XCTAssertTrue(player.events.push($0)) }
            }
            render()
        }

        var feed: Float {
            let a = plan.address(of: "echo.feed")!
            return plan.parameters[a.unit].targetValue(a.parameter)
        }
        var pitchBypass: Float { player.current.bypassTarget(unit: plan.unitIndex("pitch")!) }
        var talk: Bool { player.current.talkIsOn }
    }

    func testASectionTurnsTalkOnAndTheMIDIToggleThenTurnsItOff() throws {
        let rig = try Rig(sections: #"[ { "name": "chat", "at": "1:1", "actions": ["talk on"] } ]"#)
        rig.render()
        XCTAssertTrue(rig.talk, "the section turned Talk on")
        XCTAssertEqual(rig.feed, 0)
        XCTAssertEqual(rig.pitchBypass, 1)
        rig.press()
        XCTAssertFalse(rig.talk, "the toggle turns it off, not on again")
        XCTAssertEqual(rig.feed, 40, "feed back to the rack's 40, not 100")
        XCTAssertEqual(rig.pitchBypass, 0)
        rig.press()
        XCTAssertTrue(rig.talk)
        XCTAssertEqual(rig.feed, 0)
    }

    /// The remote's `talk` (the page, OSC) and the MIDI toggle: the same state. A knob moved
    /// before Talk is what Talk off restores.
    func testTheRemoteAndTheToggleShareTheStateAndTalkOffRestoresTheValueBefore() throws {
        let rig = try Rig(sections: #"[ { "name": "song", "at": "1:1" } ]"#)
        let feed = rig.plan.address(of: "echo.feed")!
        XCTAssertTrue(rig.player.controlEvents.push(.setParameter(feed, 55)))
        rig.render()
        XCTAssertEqual(rig.feed, 55)
        XCTAssertTrue(rig.player.controlEvents.push(.talk(.on)))
        rig.render()
        XCTAssertTrue(rig.talk)
        XCTAssertEqual(rig.feed, 0)
        XCTAssertTrue(rig.player.controlEvents.push(.talk(.on)))
        rig.render()
        XCTAssertEqual(rig.feed, 0, "on again changes nothing (and saves nothing)")
        rig.press()
        XCTAssertFalse(rig.talk, "the toggle after the remote's on: off")
        XCTAssertEqual(rig.feed, 55, "the knob's value from before Talk")
        XCTAssertTrue(rig.player.controlEvents.push(.talk(.off)))
        rig.render()
        XCTAssertEqual(rig.feed, 55, "off again changes nothing")
    }

    /// Turning Talk on and off allocates nothing on the render thread.
    func testTalkSwitchesWithoutAllocating() throws {
        #if DEBUG
        throw XCTSkip("counts are for release builds; `make test` runs release")
        #else
        let rig = try Rig(sections: #"[ { "name": "song", "at": "1:1" } ]"#)
        rig.render()
        var total = 0
        for k in 0..<200 {
            XCTAssertTrue(rig.player.controlEvents.push(.talk(k % 3 == 2 ? .toggle : k % 2 == 0 ? .on : .off)))
            alloc_counter_start()
            rig.render(blocks: 1)
            total += Int(alloc_counter_stop())
        }
        XCTAssertEqual(total, 0, "the render thread allocated \(total) times switching Talk")
        #endif
    }

    /// `"talkDuck": -12`: with Talk on the backing track (a player playing a constant 0.3)
    /// dips by 12 dB over 0.3 s and comes back with Talk off; no step bigger than the ramp's.
    func testTalkDucksTheBackingTrackByTheRacksAmount() throws {
        let rack = """
            { "format": 2, "talkDuck": -12,
              "units": { "backing": { "type": "player", "file": "dc.wav", "startOnLoad": true }, "out": { "type": "output" } },
              "connections": [ "backing -> out" ],
              "midi": { "map": [ { "cc": 64, "action": "talk" } ] } }
            """
        let dir = SongFiles.write(["r.json": rack])
        TrackFiles.write(dir + "/dc.wav", channels: [[Float](repeating: 0.3, count: 48000 * 4)], rate: 48000)
        let description = try RackFiles.read(dir + "/r.json", registry: PlayerRacks.registry)
        let plan = try GraphCompiler(registry: PlayerRacks.registry).compile(
            description, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 128, realTime: false))
        let press: [(Double, MIDIMessage)] = [
            (1.0, .controlChange(channel: 0, controller: 64, value: 127)), (1.05, .controlChange(channel: 0, controller: 64, value: 0)),
            (2.0, .controlChange(channel: 0, controller: 64, value: 127)), (2.05, .controlChange(channel: 0, controller: 64, value: 0)),
        ]
        let midi = StandardMIDIFile(messages: press.map { StandardMIDIFile.TimedMessage(seconds: $0.0, message: $0.1) }, duration: 2.05)
        var out: [Float] = []
        OfflineRenderer(plan: plan).render(input: nil, midi: midi, frames: 3 * 48000, blockSize: 128) { bus, n in
            out += UnsafeBufferPointer(start: bus[0], count: n)
        }
        let before = out[24000], dipped = out[Int(1.5 * 48000)], after = out[Int(2.6 * 48000)]
        XCTAssertEqual(before, 0.3, accuracy: 0.003)
        let dip: Float = 20 * log10(dipped / before)
        XCTAssertEqual(dip, -12, accuracy: 0.1, "Talk on: the backing track 12 dB down")
        XCTAssertEqual(after, before, accuracy: 0.003, "Talk off: back")
        var largestStep: Float = 0
        for i in 24000..<out.count { largestStep = max(largestStep, abs(out[i] - out[i - 1])) }
        XCTAssertLessThan(largestStep, 0.0002, "ramped: no click (largest step \(largestStep))")
        // Ramped over 0.3 s: halfway (in dB) 0.15 s after the press.
        let half: Float = 20 * log10(out[48000 + 7200] / before)
        XCTAssertEqual(half, -6, accuracy: 1.5, "0.15 s into the dip (\(half) dB)")
    }
}
