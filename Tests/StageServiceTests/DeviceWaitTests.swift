import StageService
import XCTest

/// Waiting for devices at start-up, with an injected opener and a fake clock: the device
/// appears after some attempts, other errors end the wait at once, the limit and a stop
/// request are honoured, and the log stays short.
final class DeviceWaitTests: XCTestCase {
    struct Absent: Error, CustomStringConvertible {
        var description: String { "hw:CARD=USB,DEV=0: snd_pcm_open failed: No such device (-19)" }
    }
    struct Busy: Error, CustomStringConvertible {
        var description: String { "hw:CARD=USB,DEV=0: snd_pcm_open failed: Device or resource busy (-16)" }
    }
    struct Refused: Error, CustomStringConvertible {
        var description: String { "hw:0: the device offers 44100 Hz only" }
    }

    /// A fake world: `pause` advances the clock, the log is recorded.
    final class World {
        var clock = 0.0
        var log: [(LogLevel, String)] = []
        var pauses: [Double] = []
        var stopAt: Double?
        func waiter(limit: Double?) -> DeviceWaiter {
            DeviceWaiter(
                limit: limit,
                isAbsent: { $0 is Absent || $0 is Busy },
                pause: { s in
                    self.pauses.append(s)
                    self.clock += s
                    if let stop = self.stopAt, self.clock >= stop { return true }
                    return false
                },
                now: { self.clock },
                log: { self.log.append(($0, $1)) })
        }
    }

    func testADeviceThatAppearsLateIsOpened() throws {
        let w = World()
        var attempts = 0
        let result = try w.waiter(limit: nil).wait(for: "playback \"hw:CARD=USB,DEV=0\"") { () throws -> String in
            attempts += 1
            if w.clock < 7 { throw Absent() }
            return "opened"
        }
        XCTAssertEqual(result, "opened")
        XCTAssertEqual(attempts, 8, "one attempt a second: at 0…7 s")
        XCTAssertEqual(w.pauses, Array(repeating: 1, count: 7))
        XCTAssertEqual(w.log.map(\.0), [.warning, .info, .info])
        XCTAssertEqual(
            w.log[0].1,
            "waiting for playback \"hw:CARD=USB,DEV=0\": hw:CARD=USB,DEV=0: snd_pcm_open failed: No such device (-19); retrying every 1 s until it appears")
        XCTAssertEqual(w.log[1].1, "still waiting for playback \"hw:CARD=USB,DEV=0\" (5 s): \(Absent())")
        XCTAssertEqual(w.log[2].1, "playback \"hw:CARD=USB,DEV=0\": ready after 7 s (8 attempts)")
    }

    func testAPresentDeviceLogsNothing() throws {
        let w = World()
        XCTAssertEqual(try w.waiter(limit: nil).wait(for: "x") { 42 }, 42)
        XCTAssertTrue(w.log.isEmpty)
        XCTAssertTrue(w.pauses.isEmpty)
    }

    func testOtherErrorsAreNotWaitedFor() {
        let w = World()
        var attempts = 0
        XCTAssertThrowsError(try w.waiter(limit: nil).wait(for: "x") { () throws -> Int in
            attempts += 1
            throw Refused()
        }) { XCTAssertTrue($0 is Refused) }
        XCTAssertEqual(attempts, 1)
        XCTAssertTrue(w.log.isEmpty)
    }

    func testTheLimitIsHonoured() {
        let w = World()
        var attempts = 0
        XCTAssertThrowsError(try w.waiter(limit: 2.5).wait(for: "x") { () throws -> Int in
            attempts += 1
            throw Absent()
        }) { XCTAssertTrue($0 is Absent) }
        XCTAssertEqual(w.pauses, [1, 1, 0.5], "the last pause ends at the limit")
        XCTAssertEqual(attempts, 4)
        XCTAssertEqual(w.log.last?.0, .error)
        XCTAssertEqual(w.log.last?.1, "x: gave up after 2.5 s: \(Absent())")

        // 0: no waiting at all, and no "gave up" line (the caller reports the error).
        let now = World()
        XCTAssertThrowsError(try now.waiter(limit: 0).wait(for: "x") { () throws -> Int in throw Absent() })
        XCTAssertTrue(now.log.isEmpty)
        XCTAssertTrue(now.pauses.isEmpty)
    }

    func testAStopRequestEndsTheWait() throws {
        let w = World()
        w.stopAt = 3
        let result = try w.waiter(limit: nil).wait(for: "x") { () throws -> Int in throw Absent() }
        XCTAssertNil(result)
        XCTAssertEqual(w.clock, 3)
        XCTAssertEqual(w.log.last?.1, "stopped while waiting for x")
    }

    func testAnHourOfWaitingLeavesAShortLogAndAChangedReasonIsSaid() throws {
        let w = World()
        var attempts = 0
        let result = try w.waiter(limit: nil).wait(for: "x") { () throws -> Int in
            attempts += 1
            if w.clock >= 3600 { return 1 }
            if w.clock >= 100 && w.clock < 103 { throw Busy() }
            throw Absent()
        }
        XCTAssertEqual(result, 1)
        XCTAssertEqual(attempts, 3601)
        // start, reminders at 5, 10, 20, 40, 60, then each minute to 59 min, busy, absent again, ready
        XCTAssertLessThanOrEqual(w.log.count, 70, "\(w.log.count) lines for an hour")
        XCTAssertGreaterThanOrEqual(w.log.count, 60)
        let reasons = w.log.filter { $0.1.contains("now ") }.map(\.1)
        XCTAssertEqual(reasons, ["still waiting for x (100 s): now \(Busy())", "still waiting for x (103 s): now \(Absent())"])
        XCTAssertEqual(DeviceWaiter.nextReminder(after: 0), 5)
        XCTAssertEqual(DeviceWaiter.nextReminder(after: 40), 60)
        XCTAssertEqual(DeviceWaiter.nextReminder(after: 60), 120)
        XCTAssertEqual(DeviceWaiter.nextReminder(after: 125), 180)
    }
}
