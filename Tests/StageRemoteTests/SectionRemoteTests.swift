import StageCore
import StageOSC
import StageRemote
import StageService
import XCTest

/// The page and OSC jump to the song's next section or repeat the one playing (an engine
/// event the song clock takes at the next bar line); the meters show the section playing and
/// the next.
final class SectionRemoteTests: XCTestCase {
    func testThePageAndOSCSendSectionJumpsToTheEngine() throws {
        let rig = try ParameterStateTests.Rig()
        let view = rig.hub.view()
        guard case .success(.command(let web)) = WebProtocol.request(#"{"type":"section","go":"next"}"#, view: view) else {
            return XCTFail("the page's section message")
        }
        XCTAssertEqual(web.kind, .section)
        guard case .success(.command(let osc)) = OSCAddressSpace.request(OSCPacket(path: "/stagerack/section/repeat", arguments: []), view: view)
        else { return XCTFail("OSC /stagerack/section/repeat") }
        XCTAssertEqual(osc.kind, .section)
        if case .success = WebProtocol.request(#"{"type":"section","go":"back"}"#, view: view) { XCTFail("go must be next or repeat") }
        if case .success = OSCAddressSpace.request(OSCPacket(path: "/stagerack/section/skip", arguments: []), view: view) {
            XCTFail("only next and repeat")
        }
        XCTAssertTrue(rig.hub.fromWeb.push(web))
        XCTAssertTrue(rig.hub.fromOSC.push(osc))
        rig.hub.tick()
        var jumps: [Int32] = []
        while let e = rig.player.controlEvents.pop() {
            if e.kind == .section { jumps.append(e.parameter) }
        }
        XCTAssertEqual(jumps.sorted(), [SectionJump.next.rawValue, SectionJump.repeatCurrent.rawValue], "one of each (the hub takes OSC first)")
    }

    func testTheMetersShowTheSectionPlayingAndTheNext() {
        var m = RemoteMeters()
        m.section = "verse"
        m.nextSection = "chorus"
        XCTAssertTrue(WebProtocol.meters(m).contains(#""section":"verse","nextSection":"chorus","#), WebProtocol.meters(m))
        XCTAssertFalse(WebProtocol.meters(RemoteMeters()).contains("section"), "nothing without sections")
        var r = StatusRecord(rackName: "ktv", peakIn: nil, peakOut: 0, load: 0)
        r.section = "verse"
        r.nextSection = "chorus"
        XCTAssertTrue(statusLine(r).hasSuffix(" | section verse, next chorus"), statusLine(r))
        r.section = "outro"
        r.nextSection = nil
        XCTAssertTrue(statusLine(r).hasSuffix(" | section outro"), statusLine(r))
    }
}
