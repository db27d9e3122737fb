import StageCore
import StageTestSupport
import StageUnits
import XCTest

/// The delay's and the reverb's `feed` (what Talk turns down): at 0 nothing new enters the
/// echoes or the hall, what is there rings out, and the dry part of the mix is untouched.
final class FeedTests: XCTestCase {
    let sr = 48000.0

    func burst(_ frames: Int, at start: Int, length: Int = 2400) -> [Float] {
        var x = [Float](repeating: 0, count: frames)
        for i in 0..<length { x[start + i] = 0.5 * sinf(Float(i) * 0.07) }
        return x
    }

    /// At feed 0 from the start, the output is the dry part alone: (1 − mix) × the input.
    func testFeedZeroLeavesTheDryPartOnly() throws {
        let x = Measure.sine(frequency: 220, frames: 9600, amplitude: 0.4)
        let d = try UnitHarness(type: DelayUnitType(), parameters: ["feed": 0, "wetDryMix": 20, "delayTime": 0.05])
        let dOut = d.render(input: [x], frames: x.count, blockSize: 128)[0]
        let r = try UnitHarness(type: ReverbUnitType(), parameters: ["feed": 0, "dryWetMix": 25])
        let rOut = r.render(input: [x], frames: x.count, blockSize: 128)
        for i in 0..<x.count {
            XCTAssertEqual(dOut[i], 0.8 * x[i], accuracy: 1e-6, "delay at \(i)")
            XCTAssertEqual(rOut[0][i], 0.75 * x[i], accuracy: 1e-6, "reverb L at \(i)")
            XCTAssertEqual(rOut[1][i], 0.75 * x[i], accuracy: 1e-6, "reverb R at \(i)")
        }
    }

    /// As sends (100 % wet): a first phrase goes in, feed drops to 0, a second phrase comes.
    /// What the first left rings on as it would have; the second adds nothing.
    func testTailsRingOutAndNothingNewEnters() throws {
        let frames = 96000
        let first = burst(frames, at: 0)
        let both = zip(first, burst(frames, at: 24000)).map { $0 + $1 }
        for (type, params) in [(DelayUnitType() as any UnitType, ["wetDryMix": Float(100), "delayTime": 0.3, "feedback": 50]),
                               (ReverbUnitType(), ["dryWetMix": 100])] {
            func run(_ x: [Float], feedOff: Bool) throws -> [Float] {
                let h = try UnitHarness(type: type, parameters: params)
                if feedOff { h.set("feed", 0, atFrame: 12000) }
                return h.render(input: [x], frames: frames, blockSize: 256)[0]
            }
            let alone = try run(first, feedOff: false)
            let talk = try run(both, feedOff: true)
            let after = Array(talk[24000...]), reference = Array(alone[24000...])
            let difference = zip(after, reference).map { $0 - $1 }
            print("\(type.name) feed 0: tail \(Measure.decibels(Measure.rms(reference))) dBFS, talk minus tail alone \(Measure.decibels(Measure.rms(difference))) dBFS")
            XCTAssertGreaterThan(Measure.decibels(Measure.rms(reference)), -60, "\(type.name): a tail to ring out")
            XCTAssertLessThan(Measure.decibels(Measure.peak(difference)), -100, "\(type.name): the tail rings on unchanged, the second phrase adds nothing")
        }
    }
}
