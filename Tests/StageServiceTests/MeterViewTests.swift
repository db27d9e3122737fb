import StageService
import XCTest

/// The `--meters` view and the plain status line, rendered from recorded status records.
final class MeterViewTests: XCTestCase {
    /// Ten status records as a live session produced them (a phrase sung into the default
    /// rack, one clipping peak, an xrun at 0.6 s), 100 ms apart.
    let recorded: [StatusRecord] = {
        let rows: [(Double, Double, Double, Double)] = [
            (0.00, 0.000, 0.000, 0.04), (0.10, 0.020, 0.010, 0.05), (0.20, 0.250, 0.125, 0.07), (0.30, 0.500, 0.250, 0.06),
            (0.40, 1.000, 1.020, 0.09), (0.50, 0.300, 0.150, 0.05), (0.60, 0.100, 0.050, 1.30), (0.70, 0.050, 0.025, 0.06),
            (0.80, 0.001, 0.0005, 0.05), (0.90, 0.000, 0.000, 0.04),
        ]
        return rows.map { (row: (Double, Double, Double, Double)) -> StatusRecord in
            let (t, pin, pout, load) = row
            let xrun: (side: String, code: Int)? = t >= 0.6 ? ("playback", -32) : nil
            return StatusRecord(
                rackName: "Default", rackFile: "racks/default.json", peakIn: Float(pin), peakOut: Float(pout), load: Float(load),
                xruns: t >= 0.6 ? 1 : 0, lastXrun: xrun, seconds: 3723 + t, realtime: true)
        }
    }()

    func filled(_ bar: String) -> Double {
        var n = 0.0
        for c in bar {
            if c == "█" { n += 1 } else if let i = ["▏", "▎", "▍", "▌", "▋", "▊", "▉"].firstIndex(of: c) { n += Double(i + 1) / 8 }
        }
        return n
    }

    func testBarsAreProportionalInEighths() {
        XCTAssertEqual(MeterView.bar(0, width: 10), String(repeating: "·", count: 10))
        XCTAssertEqual(MeterView.bar(1, width: 10), String(repeating: "█", count: 10))
        XCTAssertEqual(MeterView.bar(0.5, width: 10), "█████·····")
        XCTAssertEqual(MeterView.bar(0.3125, width: 4), "█▎··", "1.25 cells: one full and a quarter")
        XCTAssertEqual(MeterView.bar(2, width: 4).count, 4, "clamped")
        XCTAssertEqual(MeterView.bar(0.25, width: 8, hold: 0.75), "██····│·", "the hold mark sits past the bar")
        for f in stride(from: 0.0, through: 1.0, by: 0.01) {
            let b = MeterView.bar(f, width: 37, hold: 0.9)
            XCTAssertEqual(b.count, 37)
            XCTAssertEqual(filled(b), f * 37, accuracy: 1.0 / 16 + 1e-9)
        }
    }

    func testLevelScale() {
        let v = MeterView(width: 80)
        XCTAssertEqual(v.fraction(1), 1)
        XCTAssertEqual(v.fraction(2), 1)
        XCTAssertEqual(v.fraction(0.001), 0, accuracy: 1e-6, "−60 dBFS is the floor")
        XCTAssertEqual(v.fraction(0.0316228), 0.5, accuracy: 1e-4, "−30 dBFS is half way")
        XCTAssertEqual(v.fraction(0), 0)
        XCTAssertEqual(dbfsText(0.5), "-6.0")
        XCTAssertEqual(dbfsText(1), "0.0")
        XCTAssertEqual(dbfsText(0), "-inf")
    }

    func testTheViewOfARecordedRun() {
        let view = MeterView(width: 80)
        var hold = PeakHold(seconds: 2)
        var frames: [[String]] = []
        for r in recorded { frames.append(view.lines(r, held: hold.add(r))) }
        for lines in frames {
            XCTAssertEqual(lines.count, 5)
            for l in lines {
                XCTAssertLessThanOrEqual(l.count, 80, l)
                XCTAssertFalse(l.contains("\u{1B}"), "lines carry no escapes; draw() adds them")
            }
        }
        let first = frames[0]
        XCTAssertEqual(first[0], "StageRack  Default  1:02:03  RT  snapshot -  (racks/default.json)")
        XCTAssertTrue(first[1].hasPrefix("in     -inf dBFS  max   -inf  "), first[1])
        XCTAssertEqual(filled(String(first[1].dropFirst(30))), 0)
        XCTAssertTrue(first[3].hasPrefix("load      4 %     max      4  "), first[3])
        XCTAssertEqual(first[4], "xruns 0   MIDI: off")

        // −6 dBFS in: 90% of the bar (the floor is −60).
        let half = frames[3]
        XCTAssertTrue(half[1].hasPrefix("in     -6.0 dBFS  max   -6.0  "), half[1])
        let barWidth = 80 - 30 - 5
        XCTAssertEqual(filled(String(half[1].dropFirst(30).prefix(barWidth))), 0.9 * Double(barWidth), accuracy: 1.0 / 8)

        // The clipping block says so; the output's max holds it for two seconds.
        XCTAssertTrue(frames[4][2].hasSuffix(" CLIP"), frames[4][2])
        XCTAssertFalse(frames[5][2].contains("CLIP"))
        XCTAssertTrue(frames[9][2].contains("max    0.2"), "held from 0.4 s: \(frames[9][2])")
        XCTAssertTrue(frames[9][2].contains("│"), "the hold mark stays on the bar")

        // The overloaded block and the xrun.
        XCTAssertTrue(frames[6][3].hasPrefix("load    130 %"), frames[6][3])
        XCTAssertTrue(frames[6][3].hasSuffix(" OVER"))
        XCTAssertEqual(frames[6][4], "xruns 1 (last: playback -32)   MIDI: off")
        XCTAssertTrue(frames[9][3].contains("max    130"), frames[9][3])
    }

    func testNarrowTerminalsAndNoCapture() {
        var r = recorded[3]
        r.peakIn = nil
        r.midiMessages = 12
        let lines = MeterView(width: 40).lines(r)
        for l in lines { XCTAssertLessThanOrEqual(l.count, 40, l) }
        XCTAssertEqual(lines[1], "in    (no capture device)")
        XCTAssertTrue(lines[0].hasSuffix("…"))
        XCTAssertEqual(lines[4], "xruns 0   MIDI: 12 messages, last: -")
    }

    func testPlainStatusLine() {
        XCTAssertEqual(statusLine(recorded[3]), "load 6% | xruns 0 | in -6.0 dBFS | out -12.0 dBFS | midi off")
        XCTAssertEqual(statusLine(recorded[6]), "load 130% | xruns 1 (last: playback -32) | in -20.0 dBFS | out -26.0 dBFS | midi off")
        var r = recorded[0]
        r.peakIn = nil
        r.midiMessages = 3
        r.lastMIDI = "cc 7 = 100"
        XCTAssertEqual(statusLine(r), "load 4% | xruns 0 | out -inf dBFS | midi 3 (last: cc 7 = 100)", "no capture: no input level")
    }

    /// With `play --link`: the session's peers and tempo, the beat at a time on Link's clock
    /// and the rack's tempo, in the status line and as a line of the meters.
    func testLinkShowsWhenOn() {
        var r = recorded[3]
        r.link = LinkStatus(peers: 1, tempo: 100, beat: -0.25, micros: 12_345_678, rackTempo: 100, rackSource: "Link")
        let text = "link 1 peer, 100.00 BPM, beat -0.250000 at 12345678 us, rack 100.00 BPM (Link)"
        XCTAssertEqual(statusLine(r), "load 6% | xruns 0 | \(text) | in -6.0 dBFS | out -12.0 dBFS | midi off")
        XCTAssertTrue(MeterView(width: 100).lines(r).contains(text))
    }

    /// Lost and late MIDI and the dynamics units' gain reduction show when there is some.
    func testMIDITroubleAndGainReductionShow() {
        var r = recorded[3]
        r.midiLost = 3
        r.midiLate = 1
        r.gainReduction = [("comp", 3.24), ("ess", 0)]
        XCTAssertEqual(
            statusLine(r), "load 6% | xruns 0 | in -6.0 dBFS | out -12.0 dBFS | midi off | MIDI lost 3, late 1 | GR comp 3.2 dB, ess 0 dB")
        let lines = MeterView(width: 100).lines(r)
        XCTAssertEqual(lines.last, "GR comp 3.2 dB, ess 0 dB")
        XCTAssertTrue(lines[4].hasSuffix("| MIDI lost 3, late 1"), lines[4])
    }

    func testRedrawSequences() {
        XCTAssertEqual(MeterView.draw(["a", "b"], replacing: 0), "\r\u{1B}[2Ka\n\u{1B}[2Kb\n\u{1B}[J")
        XCTAssertEqual(MeterView.draw(["a"], replacing: 2), "\u{1B}[2F\u{1B}[2Ka\n\u{1B}[J", "back to the first old line, rewrite, clear the rest")
        XCTAssertEqual(MeterView.erase(5), "\u{1B}[5F\u{1B}[J")
        XCTAssertEqual(MeterView.erase(0), "")
    }
}
