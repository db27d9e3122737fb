import StageService
import XCTest

/// `--osc`/`--web` addresses, `oscAllow` networks and the remote's config keys.
final class RemoteSettingsTests: XCTestCase {
    func testListenAddresses() {
        XCTAssertEqual(try ListenAddress.parse("9000").get(), ListenAddress(host: "127.0.0.1", port: 9000), "localhost unless given")
        XCTAssertEqual(try ListenAddress.parse("0.0.0.0:8080").get().isWildcard, true)
        XCTAssertEqual(try ListenAddress.parse("*:8080").get().host, "0.0.0.0")
        XCTAssertEqual(try ListenAddress.parse("[::1]:8080").get(), ListenAddress(host: "::1", port: 8080))
        for bad in ["", "0", "70000", "pi.local:80", "1.2.3:80", "[::1]80", "1.2.3.4:", "256.1.1.1:80"] {
            if case .success(let a) = ListenAddress.parse(bad) { XCTFail("\(bad) parsed as \(a)") }
        }
    }

    func testNetworks() throws {
        let list = try NetworkList.parse("192.168.1.0/24, 10.0.0.5 fd00::/8").get()
        XCTAssertTrue(list.contains([192, 168, 1, 77]))
        XCTAssertFalse(list.contains([192, 168, 2, 77]))
        XCTAssertTrue(list.contains([10, 0, 0, 5]))
        XCTAssertFalse(list.contains([10, 0, 0, 6]))
        XCTAssertTrue(list.contains([0xFD] + Array(repeating: 0, count: 15)))
        XCTAssertTrue(list.contains(Array(repeating: 0, count: 10) + [0xFF, 0xFF, 192, 168, 1, 9]), "IPv4-mapped IPv6")
        for bad in ["", "10.0.0.0/33", "x", "::1/129"] {
            if case .success = NetworkList.parse(bad) { XCTFail("\(bad) parsed") }
        }
    }

    func testConfigKeysAndThePINNeverLogged() throws {
        let reader = SettingsReader(sampleFormats: ["FLOAT_LE"])
        let s = try reader.fromFile(
            text: #"{ "osc": "9000", "oscAllow": "192.168.1.0/24", "web": "0.0.0.0:8080", "webPin": "4711", "webViewers": false, "webClients": 4 }"#,
            path: "c.json")
        XCTAssertEqual(s.text(.osc), "127.0.0.1:9000")
        XCTAssertEqual(s.text(.web), "0.0.0.0:8080")
        XCTAssertEqual(s.flag(.webViewers), false)
        XCTAssertEqual(s.integer(.webClients), 4)
        XCTAssertFalse(s.originSummary.contains("4711"), s.originSummary)
        XCTAssertThrowsError(try reader.fromFile(text: #"{ "webPin": "12" }"#, path: "c.json"))
        XCTAssertThrowsError(try reader.fromFile(text: #"{ "osc": "pi.local:9000" }"#, path: "c.json"))
        let env = try reader.fromEnvironment(["STAGERACK_OSC_ALLOW": "10.0.0.0/8", "STAGERACK_WEB": "8080"])
        XCTAssertEqual(env.text(.oscAllow), "10.0.0.0/8")
        XCTAssertEqual(env.text(.web), "127.0.0.1:8080")
    }
}
