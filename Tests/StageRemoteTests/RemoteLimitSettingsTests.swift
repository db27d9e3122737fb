import StageRemote
import StageService
import XCTest

/// The remote's limits and TLS files as settings: defaults as they were fixed before,
/// ranges checked in config files and the environment; session tokens beyond the limit
/// forget the oldest.
final class RemoteLimitSettingsTests: XCTestCase {
    func testDefaultsConfigAndEnvironment() throws {
        let defaults = PlaySettings.builtIn(underSystemd: false)
        XCTAssertEqual(defaults.integer(.webRate), 50)
        XCTAssertEqual(defaults.integer(.webSessions), 64)
        XCTAssertEqual(defaults.integer(.oscSubscribers), 8)
        let reader = SettingsReader(sampleFormats: ["FLOAT_LE"])
        let s = try reader.fromFile(
            text: #"{ "webRate": 20, "webSessions": 4, "oscSubscribers": 2, "webCert": "/etc/stagerack/cert.pem", "webKey": "/etc/stagerack/key.pem" }"#,
            path: "c.json")
        XCTAssertEqual(s.integer(.webRate), 20)
        XCTAssertEqual(s.integer(.webSessions), 4)
        XCTAssertEqual(s.integer(.oscSubscribers), 2)
        XCTAssertEqual(s.text(.webCert), "/etc/stagerack/cert.pem")
        XCTAssertEqual(s.text(.webKey), "/etc/stagerack/key.pem")
        for bad in [#"{ "webRate": 0 }"#, #"{ "webRate": 1001 }"#, #"{ "webSessions": 2.5 }"#, #"{ "oscSubscribers": 65 }"#, #"{ "webCert": "" }"#] {
            XCTAssertThrowsError(try reader.fromFile(text: bad, path: "c.json"), bad)
        }
        let env = try reader.fromEnvironment(["STAGERACK_WEB_RATE": "5", "STAGERACK_OSC_SUBSCRIBERS": "1", "STAGERACK_WEB_CERT": "c.pem"])
        XCTAssertEqual(env.integer(.webRate), 5)
        XCTAssertEqual(env.integer(.oscSubscribers), 1)
        XCTAssertEqual(env.text(.webCert), "c.pem")
        XCTAssertThrowsError(try reader.fromEnvironment(["STAGERACK_WEB_SESSIONS": "0"]))
    }

    func testSessionsBeyondTheLimitForgetTheOldest() {
        var security = WebSecurity(pin: "1234", maxTokens: 2)
        var tokens: [String] = []
        for i in 0..<3 {
            guard case .token(let t) = security.login("1234", from: "10.0.0.1", now: Double(i)) else { return XCTFail() }
            tokens.append(t)
        }
        XCTAssertFalse(security.isValid(token: tokens[0]))
        XCTAssertTrue(security.isValid(token: tokens[1]))
        XCTAssertTrue(security.isValid(token: tokens[2]))
    }
}
