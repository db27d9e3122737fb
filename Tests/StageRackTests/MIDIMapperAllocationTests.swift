import CAllocCounter
import StageCore
import StageTestSupport
import XCTest

/// The MIDI thread never allocates while mapping: every kind of message and mapping.
final class MIDIMapperAllocationTests: XCTestCase {
    func testMappingAllocatesNothing() throws {
        guard alloc_counter_available() != 0 else { throw XCTSkip("allocation counter needs glibc") }
        #if DEBUG
        throw XCTSkip("counts are for release builds")
        #endif
        let text = try String(contentsOfFile: Fixtures.path("racks/valid/midi-every-kind.json"), encoding: .utf8)
        let plan = try RackBuilding.plan(text, maxFrames: 128)
        let mapper = MIDIMapper(plan: plan)
        let queue = SPSCQueue<EngineEvent>(minimumCapacity: 1 << 16)
        let stream: [MIDIMessage] = [
            .controlChange(channel: 0, controller: 7, value: 90), .controlChange(channel: 3, controller: 8, value: 5),
            .controlChange(channel: 0, controller: 1, value: 50), .controlChange(channel: 0, controller: 33, value: 7),
            .controlChange(channel: 0, controller: 99, value: 9), .controlChange(channel: 0, controller: 98, value: 82),
            .controlChange(channel: 0, controller: 6, value: 70), .controlChange(channel: 0, controller: 38, value: 1),
            .controlChange(channel: 0, controller: 96, value: 0), .controlChange(channel: 0, controller: 16, value: 1),
            .controlChange(channel: 0, controller: 17, value: 65), .controlChange(channel: 0, controller: 18, value: 63),
            .controlChange(channel: 0, controller: 80, value: 127), .controlChange(channel: 0, controller: 80, value: 0),
            .controlChange(channel: 0, controller: 81, value: 127), .controlChange(channel: 0, controller: 82, value: 127),
            .noteOn(channel: 9, note: 36, velocity: 100), .noteOn(channel: 9, note: 37, velocity: 100),
            .noteOff(channel: 9, note: 37), .controlChange(channel: 0, controller: 90, value: 127),
            .controlChange(channel: 15, controller: 0, value: 1), .programChange(channel: 15, program: 3),
            .noteOn(channel: 0, note: 60, velocity: 1), .pitchBend(channel: 0, value: 3), .clock, .start, .stop,
            .controlChange(channel: 0, controller: 1, value: 51),
        ]
        var seconds = 0.0
        func run(_ rounds: Int) {
            for _ in 0..<rounds {
                for m in stream {
                    seconds += 0.0003
                    mapper.handle(m, seconds: seconds) { _ = queue.push($0) }
                }
                seconds += 0.01
                mapper.poll(seconds: seconds) { _ = queue.push($0) }
                while queue.pop() != nil {}
                while mapper.feedback.pop() != nil {}
                while mapper.actions.pop() != nil {}
            }
        }
        run(2)  // warm-up
        alloc_counter_start()
        run(2000)
        let allocations = alloc_counter_stop()
        XCTAssertEqual(allocations, 0, "mapping \(2000 * stream.count) messages allocated \(allocations) times")
    }
}
