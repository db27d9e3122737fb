import StageCore
import StageDrivers
import StageRemote
import XCTest

/// MIDI learn from the page on the control thread, without the servers: the hub arms the
/// router, the router copies what comes in, the learner settles, the mapping joins a new
/// mapper (the one `remap` hands the MIDI thread) and the view lists it; `unlearn` takes it
/// away; learning stops when another rack plays; a command for another rack is refused.
final class PageLearnTests: XCTestCase {
    final class Remaps: @unchecked Sendable {
        let list = Locked<[MIDIMapper]>([])
    }

    func rig() throws -> (ParameterStateTests.Rig, Remaps) {
        let rig = try ParameterStateTests.Rig()
        rig.router.reportMessagesForLearning()
        let remaps = Remaps()
        rig.hub.attachLearning(router: rig.router, remap: { m in remaps.list.withLock { $0.append(m) } })
        return (rig, remaps)
    }

    func learn(_ rig: ParameterStateTests.Rig, _ unit: String, _ param: String) throws {
        var c = try rig.hub.view().command(unit: unit, parameter: param, value: 0).get()
        c.kind = .learn
        XCTAssertTrue(rig.hub.fromWeb.push(c))
        rig.hub.tick()
    }

    func turnKnob(_ rig: ParameterStateTests.Rig, cc: Int, values: [Int]) {
        let now = monotonicNanoseconds()
        for (i, v) in values.enumerated() {
            rig.router.handle(.controlChange(channel: 0, controller: cc, value: v), arrivalNanoseconds: now + UInt64(i) * 10_000_000)
        }
    }

    func waitForLearned(_ rig: ParameterStateTests.Rig) {
        let end = monotonicSeconds() + 5
        while rig.hub.view().learning != nil && monotonicSeconds() < end {
            rig.hub.tick()
            usleep(20_000)
        }
    }

    func testAKnobMovedWhileLearningIsMapped() throws {
        let (rig, remaps) = try rig()
        turnKnob(rig, cc: 30, values: [1, 2])  // before the page asked: not the control
        try learn(rig, "verb", "dryWetMix")
        XCTAssertEqual(rig.hub.view().learning, "verb.dryWetMix")
        XCTAssertTrue(rig.router.learnArmed.load(ordering: .relaxed))
        turnKnob(rig, cc: 21, values: [10, 20, 30, 40])
        waitForLearned(rig)
        let view = rig.hub.view()
        XCTAssertNil(view.learning)
        XCTAssertFalse(rig.router.learnArmed.load(ordering: .relaxed))
        XCTAssertEqual(view.mappings.last, RemoteMapping(MIDIMappingDescription(source: .cc(21), channel: 1, target: "verb.dryWetMix"), learned: 0))
        XCTAssertEqual(view.mappings.count, 3, "the rack's two and the learned one")
        let mapper = try XCTUnwrap(remaps.list.withLock { $0.last })
        XCTAssertTrue(mapper.mappings.contains { $0.source == .cc(21) }, "the new mapper has it")
        XCTAssertEqual(mapper.mappings.count, 3)
        XCTAssertEqual(rig.hub.mapper(for: rig.plan).mappings.count, 3, "a reload of this song keeps it")
    }

    func testUnlearnRemovesItAndAnotherRackStopsLearning() throws {
        let (rig, remaps) = try rig()
        try learn(rig, "vox", "gain")
        turnKnob(rig, cc: 22, values: [5, 6, 7, 8])
        waitForLearned(rig)
        XCTAssertEqual(rig.hub.view().mappings.count, 3)
        XCTAssertTrue(rig.hub.fromWeb.push(RemoteCommand(kind: .unlearn, generation: rig.plan.generation, index: 0)))
        rig.hub.tick()
        XCTAssertEqual(rig.hub.view().mappings.count, 2)
        XCTAssertEqual(remaps.list.withLock { $0.last?.mappings.count }, 2)
        XCTAssertTrue(rig.hub.view().notice?.hasPrefix("removed") == true)
        // No such learned mapping, or another rack's: refused, nothing changes.
        let refused = rig.hub.commandsRefused.load(ordering: .relaxed)
        XCTAssertTrue(rig.hub.fromWeb.push(RemoteCommand(kind: .unlearn, generation: rig.plan.generation, index: 0)))
        XCTAssertTrue(rig.hub.fromWeb.push(RemoteCommand(kind: .learn, generation: rig.plan.generation &+ 99, unit: 1, parameter: 0)))
        rig.hub.tick()
        XCTAssertEqual(rig.hub.commandsRefused.load(ordering: .relaxed), refused + 2)
        XCTAssertNil(rig.hub.view().learning)
        // Learning, then the rack changes: learning stops.
        try learn(rig, "vox", "gain")
        XCTAssertNotNil(rig.hub.view().learning)
        rig.hub.planChanged(try ParameterStateTests.plan(), song: 1)
        XCTAssertNil(rig.hub.view().learning)
        XCTAssertFalse(rig.router.learnArmed.load(ordering: .relaxed))
    }

    func testTheRouterCopiesMessagesOnlyWhileArmed() throws {
        let (rig, _) = try rig()
        let queue = try XCTUnwrap(rig.router.learnMessages)
        turnKnob(rig, cc: 21, values: [1, 2, 3])
        XCTAssertNil(queue.pop())
        rig.router.learnArmed.store(true, ordering: .relaxed)
        turnKnob(rig, cc: 21, values: [1, 2, 3])
        var n = 0
        while queue.pop() != nil { n += 1 }
        XCTAssertEqual(n, 3)
    }

    func testThePagesLearnAndSaveMessages() throws {
        let view = try ParameterStateTests.Rig().hub.view()
        func request(_ text: String) -> Result<WebRequest, RemoteError> { WebProtocol.request(text, view: view) }
        guard case .success(.command(let c)) = request(#"{"type":"learn","unit":"vox","param":"gain"}"#) else { return XCTFail() }
        XCTAssertEqual(c.kind, .learn)
        XCTAssertEqual(view.state.name(c.address), "vox.gain")
        guard case .failure = request(#"{"type":"learn","unit":"vox","param":"nope"}"#) else { return XCTFail() }
        guard case .success(.command(let u)) = request(#"{"type":"unlearn","index":2}"#), u.kind == .unlearn, u.index == 2 else { return XCTFail() }
        guard case .failure = request(#"{"type":"unlearn","index":-1}"#) else { return XCTFail() }
        guard case .failure = request(#"{"type":"unlearn","index":1.5}"#) else { return XCTFail() }
        XCTAssertEqual(try request(#"{"type":"save"}"#).get(), .save(snapshot: nil))
        XCTAssertEqual(try request(#"{"type":"save","snapshot":"  late set "}"#).get(), .save(snapshot: "late set"))
        for bad in [#"{"type":"save","snapshot":""}"#, #"{"type":"save","snapshot":"   "}"#, #"{"type":"save","snapshot":7}"#,
                    #"{"type":"save","snapshot":"a\u0001b"}"#, "{\"type\":\"save\",\"snapshot\":\"\(String(repeating: "x", count: 65))\"}"] {
            guard case .failure = request(bad) else { return XCTFail(bad) }
        }
        XCTAssertTrue(WebProtocol.state(view).contains(#""mappings":[{"target":"vox.gain","#), "the state lists the mappings")
    }
}
