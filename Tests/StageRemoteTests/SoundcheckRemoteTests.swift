import StageCore
import StageRemote
import StageUnits
import XCTest

/// The page's soundcheck messages: `soundcheck` with `go` start (its lengths checked),
/// apply and cancel, as commands for the plan playing; anything else an error that says
/// what is allowed. And the hub without a live input: a notice, nothing armed.
final class SoundcheckRemoteTests: XCTestCase {
    func view() throws -> (RenderPlan, RemoteView) {
        let registry = UnitRegistry(StandardUnits.types)
        let text = """
            { "format": 2, "units": { "mic": { "type": "input" }, "comp": { "type": "dynamics" }, "out": { "type": "output" } },
              "connections": [ "mic -> comp -> out" ] }
            """
        let rack = try RackReader(registry: registry).read(text: text, file: "sc.json")
        let plan = try GraphCompiler(registry: registry).compile(
            rack, options: GraphCompiler.Options(sampleRate: 48000, maxFrames: 128, hostInputChannels: 1))
        return (plan, RemoteView(plan: plan, songs: ["sc"], song: 0, canBypass: { _ in true }))
    }

    func testTheMessagesAreCheckedAndBecomeCommands() throws {
        let (_, v) = try view()
        func command(_ text: String) -> RemoteCommand? {
            guard case .success(.command(let c)) = WebProtocol.request(text, view: v) else { return nil }
            return c
        }
        func error(_ text: String) -> String? {
            guard case .failure(let e) = WebProtocol.request(text, view: v) else { return nil }
            return e.message
        }
        let start = try XCTUnwrap(command(#"{"type":"soundcheck","go":"start"}"#))
        XCTAssertEqual(start.kind, .soundcheck)
        XCTAssertEqual(start.index, 0)
        XCTAssertEqual(start.generation, v.state.generation)
        XCTAssertEqual(start.value, 0, "the default lengths")
        let timed = try XCTUnwrap(command(#"{"type":"soundcheck","go":"start","sing":12.5,"quiet":4}"#))
        XCTAssertEqual(timed.value, 12.5)
        XCTAssertEqual(timed.parameter, 40)
        XCTAssertEqual(command(#"{"type":"soundcheck","go":"apply"}"#)?.index, 1)
        XCTAssertEqual(command(#"{"type":"soundcheck","go":"cancel"}"#)?.index, 2)
        XCTAssertEqual(error(#"{"type":"soundcheck","go":"now"}"#), #"soundcheck: "go" must be "start", "apply" or "cancel""#)
        XCTAssertEqual(error(#"{"type":"soundcheck","go":"start","sing":1}"#), #"soundcheck: "sing" must be 5…120 seconds"#)
        XCTAssertEqual(error(#"{"type":"soundcheck","go":"start","quiet":"x"}"#), #"soundcheck: "quiet" must be 2.5…60 seconds"#)
        XCTAssertTrue(WebProtocol.state(v).hasSuffix(#","soundcheck":null}"#), "no soundcheck in the state")
    }

    func testWithoutALiveInputThePageIsToldSo() throws {
        let (plan, v) = try view()
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let hub = RemoteHub(
            plan: plan, songs: ["sc"], song: 0, engineEvents: player.controlEvents, midiChanges: nil, canBypass: { _ in true },
            tellMIDI: { _, _ in }, perform: { _ in })
        guard case .success(.command(let start)) = WebProtocol.request(#"{"type":"soundcheck","go":"start"}"#, view: v) else {
            return XCTFail("not a command")
        }
        XCTAssertTrue(hub.fromWeb.push(start))
        hub.tick()
        XCTAssertNil(hub.view().soundcheck)
        XCTAssertEqual(hub.view().notice, "the soundcheck needs the live input (the rack has no input unit)")
    }
}
