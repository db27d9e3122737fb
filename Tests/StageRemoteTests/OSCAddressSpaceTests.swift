import StageCore
import StageOSC
import StageRemote
import XCTest

/// The OSC address space both ways, and liblo's encoding and decoding through `OSCPacket`.
final class OSCAddressSpaceTests: XCTestCase {
    func view() throws -> RemoteView {
        RemoteView(plan: try ParameterStateTests.plan(), songs: ["one", "two"], song: 0, canBypass: { !["input", "output"].contains($0) })
    }

    func testPacketsRoundTripThroughLiblo() {
        let p = OSCPacket(path: "/stagerack/song", arguments: [.int(2), .string("Closer"), .float(0.5), .bool(true)])
        var bytes = p.encoded()
        XCTAssertEqual(bytes.count % 4, 0)
        let back = bytes.withUnsafeMutableBytes { OSCPacket.decode($0) }
        XCTAssertEqual(try back.get(), p)
    }

    func testMalformedPacketsAreErrorsNotCrashes() {
        for junk: [UInt8] in [[], [0], Array("/sta".utf8), Array("#bundle\0\0\0\0\0\0\0\0\0".utf8), [0x2F, 0x61, 0, 0, 0x2C, 0x66, 0, 0], Array(repeating: 0xFF, count: 64)] {
            var b = junk
            let r = b.withUnsafeMutableBytes { OSCPacket.decode($0) }
            if case .success(let p) = r { XCTAssertTrue(p.path.hasPrefix("/"), "\(junk) decoded as \(p)") }
        }
    }

    func testRequests() throws {
        let v = try view()
        let set = OSCAddressSpace.request(OSCPacket(path: "/stagerack/param/verb/dryWetMix", arguments: [.float(65)]), view: v)
        XCTAssertEqual(try set.get(), .command(try v.command(unit: "verb", parameter: "dryWetMix", value: 65).get()))
        let bypass = try OSCAddressSpace.request(OSCPacket(path: "/stagerack/bypass/verb", arguments: [.int(1)]), view: v).get()
        XCTAssertEqual(bypass, .command(try v.command(unit: "verb", parameter: "bypass", value: 1).get()))
        XCTAssertEqual(try OSCAddressSpace.request(OSCPacket(path: "/stagerack/song", arguments: [.int(2)]), view: v).get(), .command(RemoteCommand(kind: .song, index: 1)))
        XCTAssertEqual(try OSCAddressSpace.request(OSCPacket(path: "/stagerack/subscribe", arguments: [.int(9001)]), view: v).get(), .subscribe(port: 9001))
        for bad in [
            OSCPacket(path: "/stagerack/param/verb/dryWetMix"), OSCPacket(path: "/stagerack/param/verb/dryWetMix", arguments: [.string("x")]),
            OSCPacket(path: "/stagerack/song", arguments: [.float(1.5)]), OSCPacket(path: "/stagerack/song", arguments: [.int(3)]),
            OSCPacket(path: "/stagerack/next", arguments: [.int(1)]), OSCPacket(path: "/stagerack/snapshot", arguments: [.int(1)]),
            OSCPacket(path: "/stagerack/bypass/mic", arguments: [.int(1)]), OSCPacket(path: "/other"),
            OSCPacket(path: "/stagerack/subscribe", arguments: [.int(70000)]),
        ] {
            if case .success(let r) = OSCAddressSpace.request(bad, view: v) { XCTFail("\(bad) was taken as \(r)") }
        }
    }

    func testThePerformersMessages() throws {
        let v = try view()
        XCTAssertFalse(v.performance.isEmpty, "the rack's default performance controls")
        let perform = try OSCAddressSpace.request(OSCPacket(path: "/stagerack/perform/1", arguments: [.float(1)]), view: v).get()
        XCTAssertEqual(perform, .command(try v.performCommand(0, position: 1).get()))
        let tempo = try OSCAddressSpace.request(OSCPacket(path: "/stagerack/tempo", arguments: [.float(100)]), view: v).get()
        XCTAssertEqual(tempo, .command(RemoteCommand(kind: .tempo, value: 100)))
        for bad in [
            OSCPacket(path: "/stagerack/perform/0", arguments: [.float(1)]), OSCPacket(path: "/stagerack/perform/x", arguments: [.float(1)]),
            OSCPacket(path: "/stagerack/perform/99", arguments: [.float(1)]), OSCPacket(path: "/stagerack/perform/1"),
            OSCPacket(path: "/stagerack/tempo", arguments: [.float(4000)]), OSCPacket(path: "/stagerack/tempo", arguments: [.string("x")]),
            OSCPacket(path: "/stagerack/command/verb", arguments: [.string("record")]), OSCPacket(path: "/stagerack/command/verb"),
        ] {
            if case .success(let r) = OSCAddressSpace.request(bad, view: v) { XCTFail("\(bad) was taken as \(r)") }
        }
    }

    func testChangesSendOnlyWhatChanged() throws {
        let old = try view()
        var new = old
        let a = try XCTUnwrap(new.state.address(unit: "verb", parameter: "dryWetMix"))
        new.state.set(a, 70)
        XCTAssertEqual(OSCAddressSpace.changes(from: old, to: new), [OSCPacket(path: "/stagerack/param/verb/dryWetMix", arguments: [.float(70)])])
        new.song = 1
        XCTAssertEqual(OSCAddressSpace.changes(from: old, to: new).first, OSCPacket(path: "/stagerack/song", arguments: [.int(2), .string("two")]))
    }
}
