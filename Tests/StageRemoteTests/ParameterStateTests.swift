import StageCore
import StageControl
import StageDrivers
import StageRemote
import StageUnits
import Synchronization
import XCTest

/// The one parameter state on the control side: a remote change reaches the render thread
/// and the MIDI mapper (takeover, feedback); a MIDI knob's change reaches the state; songs,
/// snapshots and panic go where they belong; commands for a rack that no longer plays, or
/// for parameters that do not exist, change nothing.
final class ParameterStateTests: XCTestCase {
    static let rackText = """
        { "format": 2, "name": "remote test",
          "units": { "mic": { "type": "input" }, "vox": { "type": "gain", "params": { "gain": -6 } },
            "verb": { "type": "reverb", "params": { "dryWetMix": 20 } }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> verb -> out" ],
          "midi": { "map": [ { "cc": 7, "to": "vox.gain", "min": -40, "max": 0, "takeover": "pickup", "feedback": true },
                             { "cc": 80, "button": "toggle", "to": "verb.bypass" } ] },
          "snapshots": { "wet": { "params": { "verb.dryWetMix": 80 }, "morph": 0 } } }
        """

    static let registry = UnitRegistry(StandardUnits.types)

    static func plan(maxFrames: Int = 128) throws -> RenderPlan {
        let rack = try RackReader(registry: registry).read(text: rackText, file: "remote.json")
        return try GraphCompiler(registry: registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: maxFrames, hostInputChannels: 1))
    }

    final class Recorder: Sendable {
        let list = Locked<[PresetSwitcher.Request]>([])
    }

    /// A hub wired as `play` wires it, with the switcher's requests recorded.
    final class Rig: @unchecked Sendable {
        let plan: RenderPlan
        let player: RackPlayer
        let router: MIDIRouter
        let hub: RemoteHub
        let recorder = Recorder()
        var requests: [PresetSwitcher.Request] { recorder.list.withLock { $0 } }

        init() throws {
            plan = try ParameterStateTests.plan()
            player = RackPlayer(engine: RenderEngine(plan: plan))
            let router = MIDIRouter(mapper: MIDIMapper(plan: plan, presetsByDefault: true), events: player.events, clock: nil, monitor: false)
            router.reportParameterChanges()
            self.router = router
            let recorder = self.recorder
            hub = RemoteHub(
                plan: plan, songs: ["one", "two"], song: 0, engineEvents: player.controlEvents,
                midiChanges: router.parameterChanges, canBypass: { !["input", "output"].contains($0) },
                tellMIDI: { a, v in _ = router.notices.push(ParameterNotice(address: a, value: v, byPreset: false)) },
                perform: { r in recorder.list.withLock { $0.append(r) } })
        }

        func render(blocks: Int = 2) {
            let input = BusStorage(bufferCount: 1, maxFrames: 128)
            let output = BusStorage(bufferCount: 2, maxFrames: 128)
            for _ in 0..<blocks {
                player.render(frameCount: 128, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
            }
        }

        func target(_ name: String) -> Float {
            let a = plan.address(of: name)!
            return plan.parameters[a.unit].targetValue(a.parameter)
        }

        func stateValue(_ unit: String, _ parameter: String) -> Float? {
            let v = hub.view()
            return v.state.address(unit: unit, parameter: parameter).flatMap { v.state.value($0) }
        }
    }

    func testTheStateStartsFromTheRacksValuesAndDefaults() throws {
        let rig = try Rig()
        XCTAssertEqual(rig.stateValue("vox", "gain"), -6)
        XCTAssertEqual(rig.stateValue("verb", "dryWetMix"), 20)
        XCTAssertEqual(rig.stateValue("verb", "bypass"), 0)
        XCTAssertNil(rig.stateValue("mic", "bypass"), "the I/O units have no bypass")
        XCTAssertEqual(rig.hub.view().snapshots, ["wet"])
    }

    /// A change from the page or OSC: the render thread gets it as an engine event, the state
    /// shows it, and the MIDI mapper is told (the knob waits for pickup; feedback goes out).
    func testARemoteChangeReachesTheEngineTheStateAndTheMapper() throws {
        let rig = try Rig()
        let view = rig.hub.view()
        let command = try view.command(unit: "verb", parameter: "dryWetMix", value: 65).get()
        XCTAssertTrue(rig.hub.fromWeb.push(command))
        rig.hub.tick()
        rig.render()
        XCTAssertEqual(rig.target("verb.dryWetMix"), 65)
        XCTAssertEqual(rig.stateValue("verb", "dryWetMix"), 65)
        XCTAssertGreaterThan(rig.hub.view().serial, view.serial)

        // vox.gain from OSC to −10 dB; the knob (pickup) then sits at 0 (−40 dB) and does not
        // jump the parameter back; feedback carries −10 dB to the controller.
        XCTAssertTrue(rig.hub.fromOSC.push(try view.command(unit: "vox", parameter: "gain", value: -10).get()))
        rig.hub.tick()
        rig.router.poll(nanoseconds: 1_000_000)
        var sent: [MIDIMessage] = []
        rig.router.sendFeedback { sent.append($0) }
        let cc7 = sent.last { $0.status & 0xF0 == 0xB0 && $0.data1 == 7 }
        XCTAssertEqual(Int(cc7?.data2 ?? 0), Int((30.0 / 40 * 127).rounded()), "feedback: −10 dB on a −40…0 knob")
        rig.router.handle(.controlChange(channel: 0, controller: 7, value: 0), arrivalNanoseconds: 2_000_000)
        rig.render()
        XCTAssertEqual(rig.target("vox.gain"), -10, "pickup: the knob far away does not jump the value")
        // Crossing the value picks it up: the knob moves the parameter again.
        rig.router.handle(.controlChange(channel: 0, controller: 7, value: 100), arrivalNanoseconds: 3_000_000)
        rig.router.handle(.controlChange(channel: 0, controller: 7, value: 110), arrivalNanoseconds: 4_000_000)
        rig.render()
        XCTAssertEqual(rig.target("vox.gain"), -40 + 40 * 110 / 127, accuracy: 0.01)
    }

    /// A MIDI knob's change reaches the state (and so every page and OSC subscriber).
    func testAMIDIChangeReachesTheState() throws {
        let rig = try Rig()
        rig.router.handle(.controlChange(channel: 0, controller: 80, value: 127), arrivalNanoseconds: 1_000_000)
        rig.hub.tick()
        XCTAssertEqual(rig.stateValue("verb", "bypass"), 1, "the bypass button")
        // The pickup knob's first move sets nothing (−6 dB is at 108), crossing it does.
        rig.router.handle(.controlChange(channel: 0, controller: 7, value: 100), arrivalNanoseconds: 2_000_000)
        rig.hub.tick()
        XCTAssertEqual(rig.stateValue("vox", "gain"), -6)
        rig.router.handle(.controlChange(channel: 0, controller: 7, value: 115), arrivalNanoseconds: 3_000_000)
        rig.hub.tick()
        XCTAssertEqual(rig.stateValue("vox", "gain") ?? 0, -40 + 40 * 115 / 127, accuracy: 0.01)
    }

    /// Program changes from MIDI keep working with the remote on: the router still sends
    /// them to the control thread (its `actions`), between remote commands and MIDI knobs.
    func testProgramChangesStillReachTheControlThread() throws {
        let rig = try Rig()
        let view = rig.hub.view()
        rig.hub.fromWeb.push(try view.command(unit: "verb", parameter: "dryWetMix", value: 30).get())
        rig.router.handle(.programChange(channel: 0, program: 1), arrivalNanoseconds: 1_000_000)
        rig.router.handle(.controlChange(channel: 0, controller: 80, value: 127), arrivalNanoseconds: 2_000_000)
        rig.hub.tick()
        let action = rig.router.actions.pop()
        XCTAssertEqual(action?.kind, .selectPreset)
        XCTAssertEqual(action.map { Int($0.program) }, 1, "program 2 as displayed")
        XCTAssertEqual(rig.stateValue("verb", "dryWetMix"), 30)
        XCTAssertEqual(rig.stateValue("verb", "bypass"), 1)
    }

    func testSongsSnapshotsAndPanicGoWhereTheyBelong() throws {
        let rig = try Rig()
        let view = rig.hub.view()
        rig.hub.fromOSC.push(try view.songCommand(1).get())
        rig.hub.fromOSC.push(RemoteCommand(kind: .next))
        rig.hub.fromOSC.push(RemoteCommand(kind: .previous))
        rig.hub.fromWeb.push(try view.snapshotCommand("wet").get())
        rig.hub.tick()
        XCTAssertEqual(rig.requests, [.entry(1), .next, .previous, .snapshot("wet")])
        XCTAssertThrowsError(try view.snapshotCommand("dry").get())
        XCTAssertThrowsError(try view.songCommand(2).get())

        // The recall (on the switcher's thread, its onRecall) updates the state.
        rig.hub.recalled(rig.plan, snapshot: rig.plan.rack.snapshots[0])
        XCTAssertEqual(rig.stateValue("verb", "dryWetMix"), 80)
        XCTAssertEqual(rig.hub.view().snapshot, "wet")

        rig.hub.fromWeb.push(RemoteCommand(kind: .panic))
        rig.hub.tick()
        XCTAssertEqual(rig.player.controlEvents.approximateCount, 1, "panic: one reset for the render thread")

        // A switch (the switcher's onChange) makes a new state; the serial keeps counting up
        // (the servers compare serials to see that something changed).
        let before = rig.hub.view().serial
        rig.hub.planChanged(try ParameterStateTests.plan(), song: 1)
        XCTAssertGreaterThan(rig.hub.view().serial, before)
        XCTAssertEqual(rig.hub.view().song, 1)
    }

    /// A command made for a rack that no longer plays, a parameter that is not there, or a
    /// value that is not a number changes nothing.
    func testStaleAndBadCommandsChangeNothing() throws {
        let rig = try Rig()
        let view = rig.hub.view()
        var stale = try view.command(unit: "vox", parameter: "gain", value: -20).get()
        stale.generation &+= 1
        rig.hub.fromWeb.push(stale)
        var nowhere = try view.command(unit: "vox", parameter: "gain", value: -20).get()
        nowhere.parameter = 99
        rig.hub.fromWeb.push(nowhere)
        rig.hub.tick()
        XCTAssertEqual(rig.hub.commandsRefused.load(ordering: .relaxed), 2)
        XCTAssertEqual(rig.stateValue("vox", "gain"), -6)
        XCTAssertEqual(rig.player.controlEvents.approximateCount, 0)
        XCTAssertEqual(view.command(unit: "vox", parameter: "gian", value: 0), .failure(RemoteError("unit \"vox\" has no parameter \"gian\"")))
        XCTAssertThrowsError(try view.command(unit: "nobody", parameter: "gain", value: 0).get())
        XCTAssertThrowsError(try view.command(unit: "vox", parameter: "gain", value: .nan).get())
        // Out of range: clamped to the range, never past it.
        rig.hub.fromWeb.push(try view.command(unit: "vox", parameter: "gain", value: 1e9).get())
        rig.hub.tick()
        XCTAssertEqual(rig.stateValue("vox", "gain"), rig.plan.spec(rig.plan.address(of: "vox.gain")!).range.upperBound)
    }
}
