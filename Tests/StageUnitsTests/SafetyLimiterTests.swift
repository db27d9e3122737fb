import CAllocCounter
import StageCore
import StageTestSupport
import StageUnits
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The output safety stage: nothing over −0.3 dBFS ever, nothing non-finite ever, and
/// bit-exact when there is nothing to fix.
final class SafetyLimiterTests: XCTestCase {
    let ceiling = OutputUnit.ceiling
    let sr = 48000.0

    /// Runs `left`/`right` through a fresh limiter (or `limiter`) in blocks of `block`.
    func run(
        _ left: [Float], _ right: [Float], block: Int = 64, limiter: SafetyLimiter? = nil,
        counters: inout SafetyCounters
    ) -> ([Float], [Float]) {
        let lim = limiter ?? SafetyLimiter(ceiling: ceiling)
        if limiter == nil { lim.prepare(sampleRate: sr) }
        var l = left
        var r = right
        l.withUnsafeMutableBufferPointer { lp in
            r.withUnsafeMutableBufferPointer { rp in
                withUnsafeMutablePointer(to: &counters) { c in
                    var i = 0
                    while i < lp.count {
                        let n = min(block, lp.count - i)
                        lim.process(left: lp.baseAddress! + i, right: rp.baseAddress! + i, frames: n, counters: c)
                        i += n
                    }
                }
            }
        }
        return (l, r)
    }

    func noise(_ frames: Int, amplitude: Float, seed: UInt32 = 1) -> [Float] {
        var s = seed
        return (0..<frames).map { _ in
            s = s &* 1_664_525 &+ 1_013_904_223
            return amplitude * (Float(s >> 8) / 8_388_608 - 1)
        }
    }

    func assertSafe(_ x: [Float], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(x.contains { !$0.isFinite }, "\(what): non-finite output", file: file, line: line)
        XCTAssertLessThanOrEqual(Measure.peak(x), ceiling, "\(what): over the ceiling", file: file, line: line)
    }

    func testCeilingIsMinus0_3dBFS() {
        XCTAssertEqual(20 * log10(Double(ceiling)), -0.3, accuracy: 0.001)
    }

    func testNeverExceedsCeiling() {
        let n = 48000
        var cases: [(String, [Float], [Float])] = []
        for amp: Float in [1, 2, 10, 1e3, 1e30] {
            let s = Measure.sine(frequency: 997, sampleRate: sr, frames: n, amplitude: amp)
            cases.append(("sine ×\(amp)", s, s.map { -$0 }))
        }
        cases.append(("full-scale noise", noise(n, amplitude: 1), noise(n, amplitude: 1, seed: 2)))
        cases.append(("loud noise", noise(n, amplitude: 8), noise(n, amplitude: 0.1, seed: 2)))
        var imp = [Float](repeating: 0, count: n)
        for i in stride(from: 100, to: n, by: 4321) { imp[i] = i % 2 == 0 ? 50 : -3.4e38 }
        cases.append(("impulses", imp, imp.reversed()))
        var specials = noise(n, amplitude: 0.99)
        for i in stride(from: 7, to: n, by: 13) {
            specials[i] = [Float.infinity, -.infinity, .nan, .greatestFiniteMagnitude, -.greatestFiniteMagnitude][i % 5]
        }
        cases.append(("inf/nan/max", specials, specials.reversed()))
        var bursts = Measure.sine(frequency: 50, sampleRate: sr, frames: n, amplitude: 1.5)
        for i in 10000..<10500 { bursts[i] = .nan }
        for i in 30000..<30010 { bursts[i] = .infinity }
        cases.append(("nan bursts", bursts, bursts))
        // Just over the ceiling: the hard clip and the gain arithmetic meet here.
        cases.append(("ceiling+ulp", [Float](repeating: ceiling.nextUp, count: n), [Float](repeating: -ceiling.nextUp, count: n)))
        for (name, l, r) in cases {
            for block in [1, 64, 1000] {
                var counters = SafetyCounters()
                let (ol, or) = run(l, r, block: block, counters: &counters)
                assertSafe(ol, "\(name), block \(block), left")
                assertSafe(or, "\(name), block \(block), right")
            }
        }
    }

    func testUnderCeilingIsBitExact() {
        let l = noise(96000, amplitude: ceiling)
        let r = Measure.sine(frequency: 440, sampleRate: sr, frames: 96000, amplitude: 0.95)
        var counters = SafetyCounters()
        let (ol, or) = run(l, r, counters: &counters)
        XCTAssertNil(Measure.firstDifference(ol, l))
        XCTAssertNil(Measure.firstDifference(or, r))
        XCTAssertEqual(counters, SafetyCounters())
        // Exactly at the ceiling passes too.
        var c2 = SafetyCounters()
        let at = [Float](repeating: ceiling, count: 100)
        XCTAssertNil(Measure.firstDifference(run(at, at.map { -$0 }, counters: &c2).0, at))
        XCTAssertEqual(c2.limitedSamples, 0)
    }

    func testNaNBurstBecomesSilenceAndIsCounted() {
        let n = 48000
        let clean = Measure.sine(frequency: 440, sampleRate: sr, frames: n, amplitude: 0.8)
        var l = clean
        var r = clean
        for i in 1000..<1256 { l[i] = .nan }
        for i in 1100..<1110 { r[i] = -.infinity }
        r[5000] = .infinity
        var counters = SafetyCounters()
        let (ol, or) = run(l, r, counters: &counters)
        XCTAssertEqual(counters.nonFiniteSamples, 256 + 10 + 1)
        XCTAssertEqual(counters.limitedSamples, 0)
        XCTAssertEqual(Measure.peak(ol[1000..<1256]), 0)
        XCTAssertEqual(Measure.peak(or[1100..<1110]), 0)
        XCTAssertEqual(or[5000], 0)
        // Everything else is untouched: the NaNs did not reach the limiter's state.
        XCTAssertNil(Measure.firstDifference(ol[1256...], clean[1256...]))
        XCTAssertNil(Measure.firstDifference(or[1110..<5000], clean[1110..<5000]))
        XCTAssertNil(Measure.firstDifference(or[5001...], clean[5001...]))
    }

    func testRecoversAfterOverload() {
        let lim = SafetyLimiter(ceiling: ceiling)
        lim.prepare(sampleRate: sr)
        let quiet = Measure.sine(frequency: 440, sampleRate: sr, frames: 48000, amplitude: 0.5)
        var loud = Measure.sine(frequency: 440, sampleRate: sr, frames: 4800, amplitude: 20)
        loud[100] = .nan
        var counters = SafetyCounters()
        let (ll, _) = run(loud, loud, limiter: lim, counters: &counters)
        assertSafe(ll, "loud")
        XCTAssertGreaterThan(counters.limitedSamples, 4000)
        XCTAssertEqual(counters.nonFiniteSamples, 2)
        let (ql, _) = run(quiet, quiet, limiter: lim, counters: &counters)
        // Release (50 ms): gain back within 0.1 dB by 0.4 s, then exactly 1.
        let settled = ql[19200..<24000]
        XCTAssertEqual(Measure.peak(settled) / 0.5, 1, accuracy: 0.012)
        XCTAssertNil(Measure.firstDifference(ql[40000...], quiet[40000...]))
        XCTAssertEqual(lim.gain, 1)
    }

    func testLimitedSamplesAreCounted() {
        var l = [Float](repeating: 0, count: 4800)
        l[10] = 2
        l[2000] = -1.5
        var counters = SafetyCounters()
        let (ol, _) = run(l, [Float](repeating: 0, count: 4800), counters: &counters)
        // Silence around the peaks is not reduced, so only the two peaks count.
        XCTAssertEqual(counters.limitedSamples, 2)
        XCTAssertEqual(ol[10], ceiling)
        XCTAssertEqual(ol[2000], -ceiling, accuracy: 1e-6)
    }

    func testStereoLinkedGainKeepsTheImage() {
        let s = Measure.sine(frequency: 200, sampleRate: sr, frames: 9600, amplitude: 4)
        var counters = SafetyCounters()
        let (ol, or) = run(s, s.map { $0 * 0.25 }, counters: &counters)
        for i in stride(from: 4800, to: 9600, by: 37) where abs(ol[i]) > 0.01 {
            XCTAssertEqual(or[i] / ol[i], 0.25, accuracy: 1e-5)
        }
    }

    func testLoudSineIsLimitedCleanly() {
        // 6 dB over: the level settles just under the ceiling with little distortion.
        let f = 1000.0
        let s = Measure.sine(frequency: f, sampleRate: sr, frames: 48000, amplitude: 2)
        var counters = SafetyCounters()
        let (ol, _) = run(s, s, counters: &counters)
        let steady = ol[24000..<48000]
        XCTAssertGreaterThan(Measure.peak(steady), ceiling * 0.97)
        let fundamental = Measure.magnitude(at: f, in: steady)
        let worstHarmonic = (2...7).map { Measure.magnitude(at: f * Double($0), in: steady) }.max()!
        XCTAssertLessThan(20 * log10(worstHarmonic / fundamental), -40, "harmonics of a limited sine")
    }

    func testMonoAndBlockSizeInvariance() {
        let x = noise(48000, amplitude: 3) + Measure.sine(frequency: 100, sampleRate: sr, frames: 48000, amplitude: 0.5)
        var reference: [Float] = []
        for block in [1, 17, 64, 512] {
            let lim = SafetyLimiter(ceiling: ceiling)
            lim.prepare(sampleRate: sr)
            var y = x
            var counters = SafetyCounters()
            y.withUnsafeMutableBufferPointer { p in
                withUnsafeMutablePointer(to: &counters) { c in
                    var i = 0
                    while i < p.count {
                        let n = min(block, p.count - i)
                        lim.process(mono: p.baseAddress! + i, frames: n, counters: c)
                        i += n
                    }
                }
            }
            assertSafe(y, "mono, block \(block)")
            if reference.isEmpty { reference = y } else { XCTAssertNil(Measure.firstDifference(y, reference), "block \(block)") }
        }
    }

    func testProcessDoesNotAllocate() {
        let lim = SafetyLimiter(ceiling: ceiling)
        lim.prepare(sampleRate: sr)
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        let r = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        defer {
            l.deallocate()
            r.deallocate()
        }
        var counters = SafetyCounters()
        var allocations: Int64 = 0
        withUnsafeMutablePointer(to: &counters) { c in
            for block in 0..<200 {
                for i in 0..<64 {
                    l[i] = block % 3 == 0 ? 5 : 0.1
                    r[i] = i == 7 ? .nan : -0.2
                }
                alloc_counter_start()
                lim.process(left: l, right: r, frames: 64, counters: c)
                lim.process(mono: l, frames: 64, counters: c)
                allocations += alloc_counter_stop()
            }
        }
        XCTAssertEqual(allocations, 0)
    }
}
