import StageCore
import StageControl
import StageRemote
import StageUnits
import XCTest

/// The rack's `performance` section (issue 32's performer view): read with its errors at
/// line and column, a default for racks without one (the mixer's inputs by their sources,
/// the time effects' bypass), and the page's `perform` message moving every target of a
/// control, shown back as a position.
final class PerformanceSectionTests: XCTestCase {
    static let registry = UnitRegistry(StandardUnits.types)

    static func rack(performance: String?) -> String {
        """
        { "format": 2, "name": "perf",
          "units": { "mic": { "type": "input" }, "eq": { "type": "eq" }, "double": { "type": "pitch" },
            "delay": { "type": "delay" }, "verb": { "type": "reverb" },
            "mix": { "type": "mixer", "inputs": 3, "params": { "gain1": -6, "gain3": -60 } }, "out": { "type": "output" } },
          "connections": [ "mic -> eq -> mix:1", "mic -> delay -> verb -> mix:2", "mic -> double -> mix:3", "mix -> out" ]\(performance.map { ",\n\"performance\": \($0)" } ?? "") }
        """
    }

    static func read(_ performance: String?) throws(RackError) -> RackDescription {
        try RackReader(registry: registry).read(text: rack(performance: performance), file: "p.json")
    }

    /// The errors, as `LINE:COL: path: message` (the section is on line 6, from column 16).
    static func errors(_ performance: String) -> [String] {
        do {
            _ = try read(performance)
            return []
        } catch {
            return error.diagnostics.map { String($0.description.dropFirst("p.json:".count)) }
        }
    }

    func testTheSectionIsRead() throws {
        let rack = try Self.read(
            """
            [ { "label": "Voice", "to": "mix.gain1", "min": -40, "max": 6 },
              { "label": "Effects", "to": ["mix.gain2", "mix.gain3"], "comment": "a group" },
              { "label": "Echo", "to": "delay.bypass" } ]
            """)
        let c = rack.performanceControls
        XCTAssertEqual(c.map(\.label), ["Voice", "Effects", "Echo"])
        XCTAssertEqual(c.map(\.kind), [.fader, .fader, .toggle])
        XCTAssertEqual(c[0].min, -40)
        XCTAssertEqual(c[0].max, 6)
        XCTAssertEqual(c[1].targets, ["mix.gain2", "mix.gain3"])
        XCTAssertEqual(try Self.read("[]").performanceControls, [], "an empty section: no controls, not the default")
    }

    func testTheDefaultNamesTheMixersInputsByTheirSourcesAndTheTimeEffects() throws {
        let c = try Self.read(nil).performanceControls
        XCTAssertEqual(c.map(\.label), ["Mic", "Verb level", "Double", "Delay", "Verb"])
        XCTAssertEqual(c.map(\.targets), [["mix.gain1"], ["mix.gain2"], ["mix.gain3"], ["delay.bypass"], ["verb.bypass"]])
        XCTAssertEqual(c.map(\.kind), [.fader, .fader, .fader, .toggle, .toggle])
    }

    func testErrorsSayWhere() {
        XCTAssertEqual(Self.errors("{}"), [#"6:16: performance: must be a list of controls like { "label": "Voice", "to": "mix.gain1" }, found an object"#])
        XCTAssertEqual(Self.errors(#"[ { "label": "A", "to": "mix.gain9" } ]"#).count, 1)
        XCTAssertTrue(Self.errors(#"[ { "label": "A", "to": "mix.gain9" } ]"#)[0].hasPrefix("6:40: performance[1].to: a mixer unit has no parameter \"gain9\""))
        XCTAssertEqual(Self.errors(#"[ { "label": "A", "to": "mix.gain1", "colour": 1 } ]"#), [#"6:53: performance[1].colour: unknown key in a performance control"#])
        XCTAssertEqual(Self.errors(#"[ { "to": "mix.gain1" } ]"#), [#"6:18: performance[1].label: missing (the name the performer reads, e.g. "Harmony")"#])
        XCTAssertEqual(
            Self.errors(#"[ { "label": "A", "to": ["mix.gain1", "delay.bypass"] } ]"#),
            [#"6:54: performance[1].to: "delay.bypass" is a toggle, the group's first is a fader: one control moves one kind"#])
        XCTAssertEqual(Self.errors(#"[ { "label": "A", "to": "mix.gain1", "min": -200 } ]"#), [#"6:60: performance[1].min: -200 is outside -96…24"#])
        XCTAssertEqual(Self.errors(#"[ { "label": "A", "to": "delay.bypass", "max": 1 } ]"#), [#"6:56: performance[1].max: only a fader has "min" and "max" (this control is a toggle)"#])
        XCTAssertEqual(
            Self.errors(#"[ { "label": "A", "to": "mix.gain1" }, { "label": "A", "to": "mix.gain2" } ]"#),
            [#"6:66: performance[2].label: "A" already labels another control"#])
        let nine = "[" + (1...9).map { _ in #"{ "label": "x", "to": "mix.gain1" }"# }.joined(separator: ",") + "]"
        XCTAssertTrue(Self.errors(nine).contains { $0.contains("performance[9]: at most 8 controls") }, "\(Self.errors(nine))")
        XCTAssertEqual(Self.errors(#"[ { "label": "A", "to": [] } ]"#), [#"6:40: performance[1].to: a group moves 1…8 parameters, found 0"#])
        XCTAssertTrue(Self.errors(#"[ { "label": "A", "to": 3 } ]"#)[0].contains("must be a \"unit.param\" address or a list of them, found a number"))
    }

    /// The page's `perform` moves every target of a group; toggles of a bypass read "on"
    /// while the unit is in use; the state shows the position.
    func testThePageMovesAGroupAndSeesThePosition() throws {
        let text = Self.rack(performance: #"[ { "label": "Voice", "to": "mix.gain1", "min": -40, "max": 0 }, { "label": "Both", "to": ["mix.gain2", "mix.gain3"], "min": -60, "max": 0 }, { "label": "Echo", "to": "delay.bypass" } ]"#)
        let rack = try RackReader(registry: Self.registry).read(text: text, file: "p.json")
        let plan = try GraphCompiler(registry: Self.registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 128, hostInputChannels: 1))
        let events = SPSCQueue<EngineEvent>(minimumCapacity: 64)
        let hub = RemoteHub(
            plan: plan, songs: ["one"], song: 0, engineEvents: events, midiChanges: nil,
            canBypass: { !["input", "output"].contains($0) }, tellMIDI: { _, _ in }, perform: { _ in })
        var view = hub.view()
        XCTAssertEqual(view.performance.map(\.label), ["Voice", "Both", "Echo"])
        let state = WebProtocol.state(view)
        XCTAssertTrue(state.contains(#"{"label":"Voice","kind":"fader","position":0.85,"text":"-6 dB","targets":["mix.gain1"]}"#), state)
        XCTAssertTrue(state.contains(#"{"label":"Echo","kind":"toggle","position":1,"text":"on","targets":["delay.bypass"]}"#), state)

        guard case .success(.command(let both)) = WebProtocol.request(#"{"type":"perform","control":1,"value":0.5}"#, view: view) else {
            return XCTFail("perform refused")
        }
        guard case .success(.command(let echo)) = WebProtocol.request(#"{"type":"perform","control":2,"value":0}"#, view: view) else {
            return XCTFail("perform refused")
        }
        XCTAssertTrue(hub.fromWeb.push(both))
        XCTAssertTrue(hub.fromWeb.push(echo))
        hub.tick()
        let old = view
        view = hub.view()
        for t in ["gain2", "gain3"] {
            XCTAssertEqual(view.state.value(view.state.address(unit: "mix", parameter: t)!), -30)
        }
        XCTAssertEqual(view.state.value(view.state.address(unit: "delay", parameter: "bypass")!), 1, "Echo off: the delay bypassed")
        var pushed = 0
        while events.pop() != nil { pushed += 1 }
        XCTAssertEqual(pushed, 3, "one engine event per target")
        let changes = WebProtocol.changes(from: old, to: view)
        XCTAssertTrue(changes.contains(#"{"type":"perform","control":1,"position":0.5,"text":"-30 dB"}"#), "\(changes)")
        XCTAssertTrue(changes.contains(#"{"type":"perform","control":2,"position":0,"text":"off"}"#), "\(changes)")

        for bad in [
            #"{"type":"perform","control":3,"value":0}"#, #"{"type":"perform","control":0,"value":1.5}"#,
            #"{"type":"perform","control":2,"value":0.5}"#, #"{"type":"perform","control":-1,"value":0}"#,
            #"{"type":"perform","control":0}"#, #"{"type":"tempo","bpm":1000}"#,
        ] {
            guard case .failure = WebProtocol.request(bad, view: view) else { return XCTFail("accepted: \(bad)") }
        }
        guard case .success(.command(let tempo)) = WebProtocol.request(#"{"type":"tempo","bpm":96}"#, view: view) else {
            return XCTFail("tempo refused")
        }
        XCTAssertTrue(hub.fromWeb.push(tempo))
        hub.tick()
        XCTAssertEqual(hub.view().tempo, 96)
        XCTAssertEqual(events.pop()?.kind, .tempo)
    }

    /// The looper's commands as transport buttons: `command` fires a press and a release at
    /// the unit, and names that are not there are errors.
    func testTransportCommands() throws {
        let text = """
            { "format": 2, "units": { "mic": { "type": "input" }, "loop": { "type": "looper" }, "out": { "type": "output" } },
              "connections": [ "mic -> loop -> out" ] }
            """
        let rack = try RackReader(registry: Self.registry).read(text: text, file: "t.json")
        let plan = try GraphCompiler(registry: Self.registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 128, hostInputChannels: 1))
        let events = SPSCQueue<EngineEvent>(minimumCapacity: 64)
        let hub = RemoteHub(
            plan: plan, songs: ["one"], song: 0, engineEvents: events, midiChanges: nil,
            canBypass: { !["input", "output"].contains($0) }, tellMIDI: { _, _ in }, perform: { _ in })
        let view = hub.view()
        XCTAssertEqual(view.transport.map(\.unit), ["loop"])
        XCTAssertTrue(view.transport[0].commands.contains("record"))
        XCTAssertTrue(WebProtocol.state(view).contains(#""transport":[{"unit":"loop","commands":["record","overdub","#), WebProtocol.state(view))
        guard case .success(.command(let record)) = WebProtocol.request(#"{"type":"command","unit":"loop","command":"record"}"#, view: view) else {
            return XCTFail("command refused")
        }
        XCTAssertTrue(hub.fromWeb.push(record))
        hub.tick()
        let press = try XCTUnwrap(events.pop())
        let release = try XCTUnwrap(events.pop())
        XCTAssertEqual(press.kind, .midi)
        XCTAssertEqual(UnitCommand.index(of: press.message), view.transport[0].commands.firstIndex(of: "record"))
        XCTAssertEqual(press.message.data2, 1)
        XCTAssertEqual(release.message.data2, 0)
        for bad in [#"{"type":"command","unit":"mic","command":"record"}"#, #"{"type":"command","unit":"loop","command":"fly"}"#, #"{"type":"command","unit":"loop"}"#] {
            guard case .failure = WebProtocol.request(bad, view: view) else { return XCTFail("accepted: \(bad)") }
        }
    }
}
