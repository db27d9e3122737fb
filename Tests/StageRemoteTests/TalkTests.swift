import StageControl
import StageCore
import StageDrivers
import StageOSC
import StageRemote
import StageUnits
import XCTest

/// Talk: which units it takes (the rack's `talk`, else pitch, harmony, tune, delay and
/// reverb), how (bypass; `feed` 0 for the delay and reverb, so their tails ring out), and
/// the three ways to switch it: a MIDI button, the page's `talk` message, OSC `/stagerack/talk`.
final class TalkTests: XCTestCase {
    static func rack(_ extra: String = "") -> String {
        """
        { "format": 2, "units": { "mic": { "type": "input" }, "comp": { "type": "dynamics" },
            "pitch": { "type": "pitch", "params": { "pitch": 700 } }, "verb": { "type": "reverb", "params": { "dryWetMix": 100 } },
            "mix": { "type": "mixer", "inputs": 2 }, "out": { "type": "output" } },
          "connections": [ "mic -> comp -> pitch -> mix:1", "pitch -> verb -> mix:2", "mix -> out" ],
          "midi": { "map": [ { "cc": 64, "action": "talk" } ] }\(extra) }
        """
    }

    func plan(_ text: String) throws -> RenderPlan {
        let registry = UnitRegistry(StandardUnits.types)
        let rack = try RackReader(registry: registry).read(text: text, file: "talk.json")
        return try GraphCompiler(registry: registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 128, hostInputChannels: 1))
    }

    func describe(_ plan: RenderPlan, _ targets: [TalkTarget]) -> [String] {
        targets.map { t in
            let u = plan.unitIDs[t.address.unit]
            let p = t.address.parameter == ParameterAddress.bypassIndex ? "bypass" : plan.parameters[t.address.unit].specs[t.address.parameter].id
            return "\(u).\(p) \(formatNumber(t.on))/\(formatNumber(t.off))"
        }
    }

    func testTargetsByDefaultAndByTheRack() throws {
        let p = try plan(Self.rack())
        XCTAssertEqual(describe(p, Talk.targets(in: p)), ["pitch.bypass 1/0", "verb.feed 0/100"], "the strip (comp) is kept")
        let named = try plan(Self.rack(#", "talk": [ "verb" ]"#))
        XCTAssertEqual(describe(named, Talk.targets(in: named)), ["verb.feed 0/100"])
        XCTAssertThrowsError(try plan(Self.rack(#", "talk": [ "verbb" ]"#))) { e in
            XCTAssertTrue("\(e)".contains("talk[0]: no unit named \"verbb\"") && "\(e)".contains("verb"), "\(e)")
        }
        XCTAssertThrowsError(try plan(Self.rack(#", "talk": "verb""#))) { e in
            XCTAssertTrue("\(e)".contains("talk: must be a list of unit names"), "\(e)")
        }
    }

    /// The button sends a toggle to the engine's one Talk state, which turns the targets:
    /// pitch bypassed, the hall fed nothing; the next press puts them back.
    func testAMIDIButtonTogglesTalk() throws {
        let p = try plan(Self.rack())
        let mapper = MIDIMapper(plan: p)
        let player = RackPlayer(engine: RenderEngine(plan: p))
        let input = BusStorage(bufferCount: 1, maxFrames: 128), output = BusStorage(bufferCount: 2, maxFrames: 128)
        func press() -> [EngineEvent] {
            var events: [EngineEvent] = []
            mapper.handle(.controlChange(channel: 0, controller: 64, value: 127)) { events.append($0) }
            mapper.handle(.controlChange(channel: 0, controller: 64, value: 0)) { events.append($0) }
            for e in events { XCTAssertTrue(player.events.push(e)) }
            player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
            return events
        }
        let pitch = p.unitIDs.firstIndex(of: "pitch")!, feed = p.address(of: "verb.feed")!
        let on = press()
        XCTAssertEqual(on.map(\.kind), [.talk], "one toggle for the press, nothing for the release")
        XCTAssertEqual(on.first?.parameter, TalkChange.toggle.rawValue)
        XCTAssertTrue(player.current.talkIsOn)
        XCTAssertEqual(player.current.bypassTarget(unit: pitch), 1, "pitch bypassed")
        XCTAssertEqual(p.parameters[feed.unit].targetValue(feed.parameter), 0, "the hall fed nothing")
        _ = press()
        XCTAssertFalse(player.current.talkIsOn, "the next press: back")
        XCTAssertEqual(player.current.bypassTarget(unit: pitch), 0)
        XCTAssertEqual(p.parameters[feed.unit].targetValue(feed.parameter), 100)
    }

    func testThePageAndOSCSwitchTalk() throws {
        let rig = try ParameterStateTests.Rig()
        let view = rig.hub.view()
        guard case .success(.command(let web)) = WebProtocol.request(#"{"type":"talk","on":true}"#, view: view) else {
            return XCTFail("the page's talk message")
        }
        XCTAssertEqual(web.kind, .talk)
        guard case .success(.command(let osc)) = OSCAddressSpace.request(OSCPacket(path: "/stagerack/talk", arguments: [.int(0)]), view: view)
        else { return XCTFail("OSC /stagerack/talk") }
        XCTAssertEqual(osc.kind, .talk)
        XCTAssertEqual(osc.value, 0)
        if case .success = WebProtocol.request(#"{"type":"talk","on":"yes"}"#, view: view) { XCTFail("talk needs true or false") }

        XCTAssertTrue(rig.hub.fromWeb.push(web))
        rig.hub.tick()
        rig.render()
        XCTAssertEqual(rig.target("verb.feed"), 0, "the engine has it")
        XCTAssertEqual(rig.stateValue("verb", "feed"), 100, "the knob's value is kept: Talk is not a knob")
        XCTAssertTrue(rig.hub.view().talk)
        XCTAssertTrue(WebProtocol.state(rig.hub.view()).contains("\"talk\":true"))
        XCTAssertTrue(rig.hub.fromOSC.push(osc))
        rig.hub.tick()
        rig.render()
        XCTAssertEqual(rig.target("verb.feed"), 100)
        XCTAssertFalse(rig.hub.view().talk)
    }
}
