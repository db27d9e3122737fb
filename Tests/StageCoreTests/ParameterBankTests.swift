import StageCore
import XCTest

final class ParameterBankTests: XCTestCase {
    let spec = ParameterSpec(id: "g", name: "G", unit: .decibels, range: -96...24, defaultValue: 0, smoothingSeconds: 0.01)

    /// Renders `frames` values of parameter 0 in blocks of `block`, with a step to `value` at `at`.
    func values(block: Int, frames: Int, stepTo value: Float, at: Int) -> [Float] {
        let bank = ParameterBank(specs: [spec], sampleRate: 48000, maxFrames: 512)
        var out: [Float] = []
        var t = 0
        while t < frames {
            let n = min(block, frames - t)
            bank.beginBlock()
            if at >= t && at < t + n {
                bank.fill(upTo: at - t)
                bank.setTarget(0, value)
            }
            bank.fill(upTo: n)
            let v = bank.renderValues
            for i in 0..<n { out.append(v[0][i]) }
            t += n
        }
        return out
    }

    func testStepBecomesALinearRampOverTheSmoothingTime() {
        let v = values(block: 64, frames: 2000, stepTo: -48, at: 100)
        XCTAssertEqual(v[99], 0)
        let rampFrames = 480
        XCTAssertEqual(v[100 + rampFrames - 1], -48)
        XCTAssertLessThan(v[100 + rampFrames - 2], 0)
        // No jump bigger than one ramp step.
        let step: Float = 48 / Float(rampFrames)
        for i in 1..<v.count { XCTAssertLessThanOrEqual(abs(v[i] - v[i - 1]), step * 1.01) }
    }

    func testBlockSizeDoesNotChangeTheValues() {
        let reference = values(block: 1, frames: 3000, stepTo: 12, at: 777)
        for block in [17, 64, 512] {
            XCTAssertEqual(values(block: block, frames: 3000, stepTo: 12, at: 777), reference, "block \(block)")
        }
    }

    func testSteadyFlagAndClamping() {
        let bank = ParameterBank(specs: [spec], sampleRate: 48000, maxFrames: 64)
        bank.beginBlock()
        bank.fill(upTo: 64)
        XCTAssertTrue(bank.renderValues.isSteady(0))
        bank.beginBlock()
        bank.setTarget(0, 1000)  // clamped to the range
        bank.fill(upTo: 64)
        XCTAssertFalse(bank.renderValues.isSteady(0))
        XCTAssertEqual(bank.targetValue(0), 24)
    }

    func testChoicesStepWithoutSmoothing() {
        let choice = ParameterSpec.choice(id: "m", name: "M", choices: ["a", "b", "c"], defaultIndex: 0)
        let bank = ParameterBank(specs: [choice], sampleRate: 48000, maxFrames: 16)
        bank.beginBlock()
        bank.fill(upTo: 5)
        bank.setTarget(0, 1.7)
        bank.fill(upTo: 16)
        XCTAssertEqual(bank.renderValues[0][4], 0)
        XCTAssertEqual(bank.renderValues[0][5], 2)
    }
}
