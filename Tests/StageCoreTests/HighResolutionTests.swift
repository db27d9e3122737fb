import StageCore
import XCTest

/// 14-bit controller pairs and NRPN/RPN at full resolution: halves in either order,
/// lone halves, bursts.
final class HighResolutionTests: XCTestCase {
    let pairRack = #"{ "map": [ { "cc": 1, "hires": true, "to": "fx.mix" }, { "cc": 7, "to": "fx.level" } ] }"#

    func mix(_ v: Int) -> Float { 100 * Float(v) / 16383 }

    func testMSBThenLSBGivesOneValueAtFullResolution() throws {
        let p = try MapperProbe(pairRack)
        XCTAssertEqual(p.cc(1, 10000 >> 7), [], "the MSB waits for its LSB")
        XCTAssertEqual(p.mapper.outcome(0).kind, .pendingHalf)
        let out = p.values(p.cc(33, 10000 & 127, after: 0.0003), "fx.mix")
        XCTAssertEqual(out.count, 1)
        XCTAssertEqual(out[0], mix(10000), accuracy: 1e-4)
    }

    func testLSBThenMSBGivesTheSameValue() throws {
        let p = try MapperProbe(pairRack)
        XCTAssertEqual(p.cc(33, 10000 & 127), [])
        let out = p.values(p.cc(1, 10000 >> 7, after: 0.0003), "fx.mix")
        XCTAssertEqual(out.count, 1, "no intermediate value from a stale half")
        XCTAssertEqual(out[0], mix(10000), accuracy: 1e-4)
    }

    func testEveryOneOf16384StepsIsDistinct() throws {
        let p = try MapperProbe(pairRack)
        var last: Float = -1
        for v in stride(from: 0, through: 16383, by: 1) {
            let a = p.cc(1, v >> 7)
            let b = p.cc(33, v & 127, after: 0.0001)
            let got = p.values(a + b, "fx.mix")
            XCTAssertEqual(got.count, 1, "value \(v)")
            XCTAssertGreaterThan(got[0], last)
            last = got[0]
        }
        XCTAssertEqual(last, 100)
    }

    func testALoneMSBCountsAsLSBZeroAfterTheWindow() throws {
        let p = try MapperProbe(pairRack)
        p.cc(1, 100)
        p.cc(33, 50, after: 0.0002)
        XCTAssertEqual(p.cc(1, 60, after: 0.05), [])
        XCTAssertEqual(p.wait(0.002), [], "still inside the 5 ms window")
        let out = p.values(p.wait(0.004), "fx.mix")
        XCTAssertEqual(out.count, 1)
        XCTAssertEqual(out[0], mix(60 << 7), accuracy: 1e-4)
        XCTAssertNil(p.mapper.nextDeadline)
    }

    func testALoneLSBIsAFineStepUnderTheCurrentMSB() throws {
        let p = try MapperProbe(pairRack)
        p.cc(1, 100)
        p.cc(33, 50, after: 0.0002)
        p.cc(33, 51, after: 0.05)
        let out = p.values(p.wait(0.01), "fx.mix")
        XCTAssertEqual(out.count, 1)
        XCTAssertEqual(out.first ?? 0, mix(100 << 7 | 51), accuracy: 1e-4)
    }

    func testAnUnrelatedMessageExpiresAWaitingHalfWhenItsWindowPassed() throws {
        let p = try MapperProbe(pairRack)
        p.cc(1, 64)
        let out = p.cc(7, 0, after: 0.01)
        XCTAssertEqual(p.values(out, "fx.mix"), [mix(64 << 7)])
        XCTAssertEqual(p.values(out, "fx.level"), [-60])
    }

    func testTwoMSBsInARowTheFirstIsAlone() throws {
        let p = try MapperProbe(pairRack)
        p.cc(1, 10)
        let out = p.cc(1, 20, after: 0.001)
        XCTAssertEqual(p.values(out, "fx.mix"), [mix(10 << 7)])
        XCTAssertEqual(p.values(p.cc(33, 5, after: 0.001), "fx.mix"), [mix(20 << 7 | 5)])
    }

    func testBurstOfPairsInMixedOrderLosesNothing() throws {
        let p = try MapperProbe(pairRack)
        var rng = SystemRandomNumberGenerator()
        var expected: [Float] = []
        var got: [Float] = []
        var previous = 8192
        for i in 0..<2000 {
            var v = Int.random(in: 0...16383, using: &rng)
            if v == previous { v = (v + 1) & 16383 }
            previous = v
            expected.append(mix(v))
            let msbFirst = i % 3 != 0
            let first = msbFirst ? p.cc(1, v >> 7, after: 0.0001) : p.cc(33, v & 127, after: 0.0001)
            let second = msbFirst ? p.cc(33, v & 127, after: 0.0001) : p.cc(1, v >> 7, after: 0.0001)
            XCTAssertTrue(first.isEmpty)
            got += p.values(second, "fx.mix")
        }
        XCTAssertEqual(got.count, expected.count)
        for (a, b) in zip(got, expected) { XCTAssertEqual(a, b, accuracy: 1e-4) }
    }

    func testOtherChannelsKeepTheirOwnHalves() throws {
        let p = try MapperProbe(#"{ "map": [ { "cc": 1, "hires": true, "channel": 1, "to": "fx.mix" } ] }"#)
        p.cc(1, 100, channel: 0)
        // CC 33 on channel 2 is not a half of the pair: it goes to the synth.
        let other = p.cc(33, 7, channel: 1)
        XCTAssertEqual(other.map(\.kind), [.midi])
        XCTAssertEqual(p.values(p.cc(33, 7, channel: 0), "fx.mix"), [mix(100 << 7 | 7)])
    }

    // MARK: NRPN / RPN

    let nrpnRack = #"{ "map": [ { "nrpn": 1234, "to": "fx.mix" }, { "rpn": 2, "channel": 3, "to": "fx.level" }, { "nrpn": 5, "hires": false, "to": "fx.cutoff" } ] }"#

    func select(_ p: MapperProbe, nrpn: Int, channel: Int = 0) {
        p.cc(99, nrpn >> 7, channel: channel)
        p.cc(98, nrpn & 127, channel: channel)
    }

    func testNRPNDataEntryAtFullResolutionInEitherOrder() throws {
        let p = try MapperProbe(nrpnRack)
        select(p, nrpn: 1234)
        XCTAssertEqual(p.cc(6, 12345 >> 7), [])
        XCTAssertEqual(p.values(p.cc(38, 12345 & 127), "fx.mix"), [mix(12345)])
        XCTAssertEqual(p.cc(38, 3000 & 127, after: 0.01), [])
        XCTAssertEqual(p.values(p.cc(6, 3000 >> 7), "fx.mix"), [mix(3000)])
    }

    func testNRPNIncrementAndDecrementStep() throws {
        let p = try MapperProbe(nrpnRack)
        select(p, nrpn: 1234)
        XCTAssertEqual(try XCTUnwrap(p.values(p.cc(96, 0), "fx.mix").first), 50 + 100 / 127, accuracy: 1e-3)
        XCTAssertEqual(try XCTUnwrap(p.values(p.cc(97, 0), "fx.mix").first), 50, accuracy: 1e-3)
    }

    func testUnmappedParameterNumbersGoToTheSynth() throws {
        let p = try MapperProbe(nrpnRack)
        select(p, nrpn: 77)
        XCTAssertEqual(p.cc(6, 10).map(\.kind), [.midi])
        XCTAssertEqual(p.cc(38, 10).map(\.kind), [.midi])
        // The selection itself is passed on too (the synth may use RPNs such as bend range).
        XCTAssertEqual(p.cc(101, 0).map(\.kind), [.midi])
    }

    func testRPNOnItsChannelAndTheNullRPN() throws {
        let p = try MapperProbe(nrpnRack)
        p.cc(101, 0, channel: 2)
        p.cc(100, 2, channel: 2)
        p.cc(6, 127, channel: 2)
        XCTAssertEqual(p.values(p.cc(38, 127, channel: 2), "fx.level"), [6])
        // RPN null (127/127) deselects: data entry goes to the synth again.
        p.cc(101, 127, channel: 2)
        p.cc(100, 127, channel: 2)
        XCTAssertEqual(p.cc(6, 0, channel: 2).map(\.kind), [.midi])
        // The same RPN on another channel is not mapped.
        p.cc(101, 0, channel: 0)
        p.cc(100, 2, channel: 0)
        XCTAssertEqual(p.cc(6, 0, channel: 0).map(\.kind), [.midi])
    }

    func testSevenBitNRPNAppliesDataEntryAtOnce() throws {
        let p = try MapperProbe(nrpnRack)
        select(p, nrpn: 5)
        XCTAssertEqual(p.values(p.cc(6, 127), "fx.cutoff"), [20000])
        XCTAssertEqual(p.cc(38, 5), [], "the LSB of a 7-bit parameter is dropped")
    }

    func testBurstOfNRPNsToTwoParameters() throws {
        let p = try MapperProbe(#"{ "map": [ { "nrpn": 1, "to": "fx.mix" }, { "nrpn": 2, "to": "fx.level" } ] }"#)
        var lastMix = 0
        var lastLevel = 0
        for i in 0..<500 {
            let n = i % 2 + 1
            let v = (i * 37) % 16384
            select(p, nrpn: n)
            p.cc(6, v >> 7, after: 0.0001)
            p.cc(38, v & 127, after: 0.0001)
            if n == 1 { lastMix = v } else { lastLevel = v }
        }
        XCTAssertEqual(try XCTUnwrap(p.value("fx.mix")), mix(lastMix), accuracy: 1e-4)
        XCTAssertEqual(try XCTUnwrap(p.value("fx.level")), -60 + 66 * Float(lastLevel) / 16383, accuracy: 1e-3)
        XCTAssertEqual(p.values(p.events, "fx.mix").count + p.values(p.events, "fx.level").count, 500)
    }
}
