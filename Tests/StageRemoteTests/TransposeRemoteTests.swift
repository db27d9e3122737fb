import StageCore
import StageOSC
import StageRemote
import StageService
import XCTest

/// The page and OSC move the song a semitone up or down (an engine event `SongTranspose`
/// applies at the next section or at once); `--status`, the meters and OSC show the
/// song's transpose.
final class TransposeRemoteTests: XCTestCase {
    func testThePageAndOSCSendTransposesToTheEngine() throws {
        let rig = try ParameterStateTests.Rig()
        let view = rig.hub.view()
        guard case .success(.command(let web)) = WebProtocol.request(#"{"type":"transpose","go":"up"}"#, view: view) else {
            return XCTFail("the page's transpose message")
        }
        XCTAssertEqual(web.kind, .transpose)
        guard case .success(.command(let osc)) = OSCAddressSpace.request(OSCPacket(path: "/stagerack/transpose/down", arguments: []), view: view)
        else { return XCTFail("OSC /stagerack/transpose/down") }
        if case .success = WebProtocol.request(#"{"type":"transpose","go":"sideways"}"#, view: view) { XCTFail("go must be up or down") }
        XCTAssertTrue(rig.hub.fromWeb.push(web))
        XCTAssertTrue(rig.hub.fromOSC.push(osc))
        rig.hub.tick()
        var steps: [Int32] = []
        while let e = rig.player.controlEvents.pop() {
            if e.kind == .transpose { steps.append(e.parameter) }
        }
        XCTAssertEqual(steps.sorted(), [-1, 1], "one of each")
    }

    func testTheStatusTheMetersAndOSCShowTheTranspose() {
        var m = RemoteMeters()
        m.transpose = -2
        XCTAssertTrue(WebProtocol.meters(m).contains(#""transpose":-2,"#), WebProtocol.meters(m))
        XCTAssertFalse(WebProtocol.meters(RemoteMeters()).contains("transpose"), "nothing without a transposable song")
        var r = StatusRecord(rackName: "pad", peakIn: nil, peakOut: 0, load: 0)
        r.section = "verse"
        r.transpose = 3
        XCTAssertTrue(statusLine(r).hasSuffix(" | section verse | transpose +3"), statusLine(r))
        XCTAssertEqual(OSCAddressSpace.transpose(3), OSCPacket(path: "/stagerack/transpose", arguments: [.int(3)]))
    }
}
