import StageCore
import XCTest

#if canImport(Glibc)
import Glibc
#endif

final class SPSCQueueTests: XCTestCase {
    func testFillsToCapacityAndKeepsOrder() {
        let q = SPSCQueue<Int>(minimumCapacity: 5)
        XCTAssertGreaterThanOrEqual(q.capacity, 5)
        for i in 0..<q.capacity { XCTAssertTrue(q.push(i)) }
        XCTAssertFalse(q.push(99), "a full queue refuses, it never overwrites")
        XCTAssertEqual(q.peek(), 0)
        for i in 0..<q.capacity { XCTAssertEqual(q.pop(), i) }
        XCTAssertNil(q.pop())
    }

    /// Two threads, a million messages: none lost, none duplicated, order kept.
    func testTwoThreadsLoseNothing() {
        let q = SPSCQueue<EngineEvent>(minimumCapacity: 256)
        let total = 1_000_000
        let producer = Thread {
            var i = 0
            while i < total {
                if q.push(EngineEvent(kind: .parameter, sampleTime: Int64(i))) { i += 1 } else { sched_yield() }
            }
        }
        producer.start()
        var expected: Int64 = 0
        var wrong = 0
        while expected < Int64(total) {
            if let e = q.pop() {
                if e.sampleTime != expected { wrong += 1 }
                expected += 1
            } else {
                sched_yield()
            }
        }
        XCTAssertEqual(wrong, 0)
        XCTAssertNil(q.pop())
    }
}

import Foundation
