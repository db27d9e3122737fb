import StageOSC
import StageRemote
import XCTest

/// Issue 32's locks as pure logic: the PIN lock per source under a global ceiling, the Host
/// check against the addresses served, the refusal log, OSC's reply budget.
final class RemoteSecurityTests: XCTestCase {
    func testAGuesserLocksOutOnlyItself() {
        var s = WebSecurity(pin: "4711")
        var t = 0.0
        for _ in 0..<WebSecurity.freeFailures { XCTAssertEqual(s.login("0000", from: "10.0.0.9", now: t), .wrongPIN(waitSeconds: 0)) }
        XCTAssertEqual(s.login("0000", from: "10.0.0.9", now: t), .wrongPIN(waitSeconds: 2))
        // Locked: even the right PIN is refused unchecked, and checking it never happens.
        XCTAssertEqual(s.login("4711", from: "10.0.0.9", now: t + 1), .tooSoon(waitSeconds: 1))
        // The singer on another address logs in; that does not reset the guesser's count.
        guard case .token = s.login("4711", from: "10.0.0.2", now: t + 1) else { return XCTFail("the singer was locked out") }
        XCTAssertEqual(s.failures(from: "10.0.0.9"), 4)
        t += 2
        XCTAssertEqual(s.login("0000", from: "10.0.0.9", now: t), .wrongPIN(waitSeconds: 4))
    }

    func testOneGuesserOverAnHourNeverEmptiesTheGlobalCeiling() {
        var s = WebSecurity(pin: "4711")
        var t = 0.0
        var checked = 0
        while t < 3600 {  // a wrong PIN every 0.5 s from one address
            switch s.login("0000", from: "10.0.0.9", now: t) {
            case .wrongPIN: checked += 1
            case .tooManyGuesses: return XCTFail("one guesser emptied the global ceiling at \(t) s")
            default: break
            }
            if case .token = s.login("4711", from: "10.0.0.2", now: t + 0.25) {} else { return XCTFail("the singer was refused at \(t) s") }
            t += 0.5
        }
        XCTAssertLessThanOrEqual(checked, 9 + 60, "guesses checked in an hour")
    }

    func testManyAddressesTogetherMeetTheCeiling() {
        var s = WebSecurity(pin: "4711")
        var checked = 0
        var t = 0.0
        for i in 0..<2000 {  // a new address for every guess, ten a second, for 200 s
            if case .wrongPIN = s.login("0000", from: "10.1.\(i / 256).\(i % 256)", now: t) { checked += 1 }
            t += 0.1
        }
        XCTAssertLessThanOrEqual(Double(checked), WebSecurity.guessBurst + 200 / WebSecurity.guessRefillSeconds + 1)
        if case .tooManyGuesses = s.login("4711", from: "10.0.0.2", now: t) {} else { XCTFail("a guess past the ceiling was checked") }
    }

    func testHostsServed() {
        let served = WebSecurity.servedHosts(addresses: ["127.0.0.1", "192.168.1.20", "fe80::1%eth0"], port: 8080, tls: false, hostname: "Pi")
        for ok in ["127.0.0.1:8080", "localhost:8080", "192.168.1.20:8080", "[fe80::1]:8080", "pi:8080", "PI.local:8080", "pi.local.:8080"] {
            XCTAssertTrue(WebSecurity.hostServed(ok, served: served), ok)
        }
        for bad in ["evil.example:8080", "192.168.1.20", "192.168.1.21:8080", "localhost:8081", "", String(repeating: "a", count: 400)] {
            XCTAssertFalse(WebSecurity.hostServed(bad, served: served), bad)
        }
        XCTAssertFalse(WebSecurity.hostServed(nil, served: served))
        let only = WebSecurity.servedHosts(addresses: ["192.168.1.20"], port: 80, tls: false, hostname: nil)
        XCTAssertTrue(WebSecurity.hostServed("192.168.1.20", served: only))
        XCTAssertFalse(WebSecurity.hostServed("localhost", served: only), "localhost only when loopback is served")
    }

    func testRefusalLogOncePerMinutePerClass() {
        var log = RefusalLog()
        XCTAssertNotNil(log.note("host", "refused a", now: 0))
        XCTAssertNotNil(log.note("pin", "a wrong PIN", now: 1))
        for i in 0..<100 { XCTAssertNil(log.note("host", "refused \(i)", now: 2 + Double(i) * 0.1)) }
        XCTAssertEqual(log.flush(now: 30), [])
        let lines = log.flush(now: 61)
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(lines[0].hasPrefix("100 refused"), lines[0])
        XCTAssertNil(log.note("host", "refused b", now: 62))
        XCTAssertEqual(log.note("host", "refused c", now: 122), "refused c (and 1 more like it in the last 61 s)")
    }

    func testOSCReplyBudget() {
        var b = OSCReplyBudget()
        let stranger: [UInt8] = [10, 0, 0, 9]
        var sent = 0
        var replied = 0
        for i in 0..<1000 {
            b.received(24, from: stranger, allowed: false, now: Double(i) * 0.01)
            sent += 24
            if b.take(3272, to: stranger, allowed: false, now: Double(i) * 0.01) { replied += 3272 }
            if b.take(60, to: stranger, allowed: false, now: Double(i) * 0.01) { replied += 60 }
        }
        XCTAssertLessThanOrEqual(replied, 2 * sent, "amplification for a source not allowed")
        let friend: [UInt8] = [127, 0, 0, 1]
        var got = 0
        for i in 0..<1000 where b.take(3272, to: friend, allowed: true, now: Double(i) * 0.001) { got += 3272 }  // 1 s
        XCTAssertLessThanOrEqual(Double(got), OSCReplyBudget.allowedBurst + OSCReplyBudget.allowedBytesPerSecond)
        XCTAssertGreaterThan(got, 3272 * 10)
    }
}
