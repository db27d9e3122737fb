import Foundation
import StageCore
import StageDrivers
import XCTest

/// The sequencer client against a real kernel sequencer. These machines have none
/// (/dev/snd/seq is missing): the tests then say so and skip. Tests/e2e/midi.sh runs them
/// in the VM (and drives `stagerack midi-monitor` there with amidi, aconnect, aplaymidi).
final class ALSASequencerTests: XCTestCase {
    override func setUpWithError() throws {
        guard FileManager.default.fileExists(atPath: "/dev/snd/seq") else {
            throw XCTSkip("no /dev/snd/seq on this machine (the kernel has no ALSA sequencer); Tests/e2e/midi.sh runs these in a VM")
        }
    }

    let rack = """
        { "format": 1, "units": { "mic": { "type": "input" }, "vox": { "type": "gain" }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> out" ],
          "midi": { "connect": [ "TestSender*" ], "map": [ { "cc": 7, "to": "vox.gain", "min": -40, "max": 0, "feedback": true } ] } }
        """

    func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = monotonicSeconds() + seconds
        while monotonicSeconds() < end {
            if condition() { return true }
            usleep(5000)
        }
        return condition()
    }

    func testAControllerAppearingLaterIsConnectedAndMapped() throws {
        let plan = try RackBuilding.plan(rack)
        let mapper = MIDIMapper(plan: plan, presetsByDefault: true)
        let queue = SPSCQueue<EngineEvent>(minimumCapacity: 1024)
        let input = try MIDIInput(options: MIDIInput.Options(clientName: "StageRackTest", patterns: ["TestSender*"]), mapper: mapper, events: queue)
        try input.start()
        defer { input.stop() }

        var sender: ALSASequencer? = try ALSASequencer(name: "TestSender")
        let port = try sender!.createPort(name: "out", input: false)
        XCTAssertTrue(waitUntil(5) { input.connectedSources.contains { $0.hasPrefix("TestSender:out") } }, "\(input.takeLog())")
        try sender!.send(MIDIBytes(0xB0, 7, 0, count: 3), from: port)
        var got: EngineEvent?
        XCTAssertTrue(waitUntil(5) {
            got = got ?? queue.pop()
            return got != nil
        })
        XCTAssertEqual(got?.kind, .parameter)
        XCTAssertEqual(got?.value, -40)
        XCTAssertEqual(input.messagesReceived, 1)
        XCTAssertEqual(got?.generation, plan.generation, "tagged for the plan the mapper was made for")

        // A program change becomes an action for the control thread.
        try sender!.send(MIDIBytes(0xC0, 3, count: 2), from: port)
        var action: ControlAction?
        XCTAssertTrue(waitUntil(5) {
            action = action ?? input.actions.pop()
            return action != nil
        })
        XCTAssertEqual(action, ControlAction(kind: .selectPreset, program: 3))

        sender = nil  // the client quits
        XCTAssertTrue(waitUntil(5) { input.connectedSources.isEmpty })
        XCTAssertTrue(input.takeLog().contains { $0.hasPrefix("disconnected: TestSender:out") })
    }

    func testErrorsNameTheFunction() throws {
        let s = try ALSASequencer(name: "StageRackTest")
        XCTAssertThrowsError(try s.connectFrom(250, 0, to: 0)) { error in
            let e = error as? ALSASequencerError
            XCTAssertEqual(e?.function, "snd_seq_connect_from")
            XCTAssertTrue("\(error)".hasPrefix("snd_seq_connect_from failed: "), "\(error)")
        }
    }

    func testStopIsPromptAndTheClientGoesAway() throws {
        let input = try MIDIInput(options: MIDIInput.Options(clientName: "StageRackStopTest"), mapper: nil, events: nil)
        try input.start()
        let t0 = monotonicSeconds()
        input.stop()
        XCTAssertLessThan(monotonicSeconds() - t0, 0.5)
        let ports = try ALSASequencer(name: "probe").ports()
        XCTAssertTrue(ports.contains { $0.clientName == "StageRackStopTest" }, "still open until released")
    }
}
