import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// The guided soundcheck (`Soundcheck`) on espeak-ng voices at −30, −18 and −6 dBFS peak
/// with room noise: the rack it writes, rendered with the same recording, meets the
/// targets within 2 dB, measured by comparing renders of the written rack with one unit's
/// action turned off (levels of the test's own loud frames and sibilant frames, found on
/// the clean voice, not by the soundcheck): the loud phrases at the trim's target, about
/// 5 dB of compression on them, about 6 dB of de-essing on the sibilants' high band; the
/// gate closed (6 dB or more) on every frame of the noise before the voice and open on the
/// voice. Bad recordings are refused with a message.
final class SoundcheckTests: XCTestCase {
    let sr = SoundcheckMaterial.sampleRate
    let frame = 480
    let path = Fixtures.temporaryPath("soundcheck-strip.json")

    /// A strip with a gain unit for the trim and a neutral EQ (only its high-pass), so the
    /// trim's level can be measured at the output.
    let strip = """
        // A test strip: trim, high-pass, compressor and gate, de-esser.
        {
          "format": 2,
          "units": {
            "mic":   { "type": "input" },
            "trim":  { "type": "gain" },
            "eq":    { "type": "eq", "params": { "frequency1": 90 } },  // the high-pass alone
            "comp":  { "type": "dynamics", "params": { "threshold": -20, "ratio": 3, "knee": 6, "overallGain": 5 } },
            "deess": { "type": "deesser" },
            "out":   { "type": "output" },
          },
          "connections": [ "mic -> trim -> eq -> comp -> deess -> out" ],
        }
        """

    func voice(_ name: String) throws -> [Float] {
        try XCTUnwrap(SoundcheckMaterial.voice(name), "espeak-ng or sox failed (scripts/install-deps.sh --test installs them)")
    }

    func testTheWrittenRackMeetsTheTargetsOnTwoVoicesAtThreeLevels() throws {
        var lowest: [String: Float] = [:]
        for (v, name) in SoundcheckMaterial.voices.enumerated() {
            let clean = try voice(name)
            let masks = Masks(clean: clean, lead: Int(SoundcheckMaterial.silenceSeconds * sr), frame: frame)
            for (l, peak) in [Float(-30), -18, -6].enumerated() {
                let input = SoundcheckMaterial.recording(clean, peakDB: peak, seed: UInt64(10 * v + l + 1))
                let label = "\(name) at \(Int(peak)) dBFS"
                let proposal = try Soundcheck.propose(text: strip, file: path, registry: Fixtures.registry, voice: input, sampleRate: sr)
                let written = try proposal.applied(to: strip)
                XCTAssertTrue(written.contains("// the high-pass alone"), "the rack's comments are kept")
                XCTAssertTrue(proposal.missing.isEmpty, "\(label): \(proposal.missing)")
                try assertTargets(written, input, masks, label)
                lowest[name] = proposal.value("eq", "frequency1")
            }
        }
        // The high-pass follows the voice: above rumble, higher for the higher voice.
        let low = try XCTUnwrap(lowest["en"]), high = try XCTUnwrap(lowest["en+f3"])
        XCTAssertGreaterThanOrEqual(low, 60)
        XCTAssertGreaterThan(high, low + 20, "the female voice's high-pass sits higher (\(high) against \(low) Hz)")
    }

    /// The measurements on one written rack: renders with the gate held open, without
    /// compression (ratio 1), without de-essing (range 0), and as written.
    func assertTargets(_ written: String, _ input: [Float], _ m: Masks, _ label: String) throws {
        func with(_ values: [(String, String, String)], _ text: String) throws -> String {
            try RackTextEditor.settingParameters(values, in: text)
        }
        let open = try with([("comp", "expansionThreshold", "-120")], written)
        let asWritten = try render(written, input)
        let gateOpen = try render(open, input)
        let noDeEsser = try render(try with([("deess", "range", "0")], open), input)
        let neither = try render(try with([("deess", "range", "0"), ("comp", "ratio", "1")], open), input)
        let makeup: Float = 5

        let trimmed = m.level(neither, m.loud) - makeup
        XCTAssertEqual(trimmed, Soundcheck.targetLevel, accuracy: 2, "\(label): loud phrases after the trim")
        let compression = m.level(neither, m.loud) - m.level(noDeEsser, m.loud)
        XCTAssertEqual(compression, Soundcheck.compressionTarget, accuracy: 2, "\(label): compression on loud phrases")
        let high = { (x: [Float]) in SpectrumMeasure.highPassed(x, cutoff: 6000, sampleRate: self.sr).map(Float.init) }
        let deEssing = m.level(high(noDeEsser), m.sibilant) - m.level(high(gateOpen), m.sibilant)
        XCTAssertEqual(deEssing, Soundcheck.deEssingTarget, accuracy: 2, "\(label): de-essing on sibilants")

        // The gate: every noise frame before the voice (after the first 0.3 s, when the
        // gate that starts open has closed) 6 dB or more down; the voice through.
        let noiseFrames = (Int(0.3 * sr) / frame)..<(Int((SoundcheckMaterial.silenceSeconds - 0.1) * sr) / frame)
        let leastClosed = noiseFrames.map { m.frameLevel(gateOpen, $0) - m.frameLevel(asWritten, $0) }.min() ?? 0
        XCTAssertGreaterThanOrEqual(leastClosed, 6, "\(label): the gate stays closed on the noise")
        let onLoud = m.level(gateOpen, m.loud) - m.level(asWritten, m.loud)
        let onVoice = m.level(gateOpen, m.voiced) - m.level(asWritten, m.voiced)
        XCTAssertLessThan(onLoud, 0.5, "\(label): the gate is open on the loud phrases")
        XCTAssertLessThan(onVoice, 1.5, "\(label): the gate is open on the voice")
        print("soundcheck \(label): loud phrases \(f(trimmed)) dBFS, compression \(f(compression)) dB, de-essing \(f(deEssing)) dB, "
            + "gate: noise down \(f(leastClosed)) dB or more, voice down \(f(onVoice)) dB")
    }

    func testBadRecordingsAreRefusedWithAMessage() throws {
        let clean = try voice("en")
        func refusal(_ x: [Float]) -> String? {
            do {
                _ = try Soundcheck.propose(text: strip, file: path, registry: Fixtures.registry, voice: x, sampleRate: sr)
                return nil
            } catch let e as SoundcheckError {
                return e.message
            } catch {
                return "\(error)"
            }
        }
        let silence = [Float](repeating: 0, count: Int(15 * sr))
        XCTAssertTrue(refusal(silence)?.hasPrefix("the input is silent") == true, "\(String(describing: refusal(silence)))")
        let clipping = SoundcheckMaterial.recording(clean, peakDB: 12, seed: 3).map { min(max($0, -1), 1) }
        XCTAssertTrue(refusal(clipping)?.hasPrefix("the input clips") == true, "\(String(describing: refusal(clipping)))")
        let noise = SoundcheckMaterial.roomNoise(count: Int(15 * sr), seed: 4).map { $0 * 0.01 }
        XCTAssertTrue(refusal(noise)?.hasPrefix("no voice found") == true, "\(String(describing: refusal(noise)))")
        // Hiss in bursts at a voice's level: over the floor, but not pitched.
        var g = SeededGenerator(seed: 5)
        let bursts = (0..<Int(15 * sr)).map { i -> Float in
            let t = Double(i) / sr
            let on = t > 2.5 && Int(t * 2) % 2 == 0
            return Float.random(in: -1...1, using: &g) * (on ? 0.1 : 0.0003)
        }
        XCTAssertTrue(refusal(bursts)?.contains("not pitched like a voice") == true, "\(String(describing: refusal(bursts)))")
        let quiet = SoundcheckMaterial.recording(clean, peakDB: -50, seed: 6)
        XCTAssertTrue(refusal(quiet)?.hasPrefix("the input is too quiet") == true, "\(String(describing: refusal(quiet)))")
    }

    func testWhatTheRackLacksIsNamed() throws {
        let bare = """
            { "format": 2, "units": { "mic": { "type": "input" }, "out": { "type": "output" } }, "connections": [ "mic -> out" ] }
            """
        let input = SoundcheckMaterial.recording(try voice("en"), peakDB: -18, seed: 7)
        let p = try Soundcheck.propose(text: bare, file: path, registry: Fixtures.registry, voice: input, sampleRate: sr)
        XCTAssertTrue(p.settings.isEmpty)
        XCTAssertEqual(p.missing.count, 4, "\(p.missing)")
        XCTAssertTrue(p.missing.contains { $0.hasPrefix("no compressor") })
        XCTAssertTrue(p.missing.contains { $0.hasPrefix("no de-esser") })
    }

    func render(_ text: String, _ input: [Float]) throws -> [Float] {
        let rack = try RackReader(registry: Fixtures.registry).read(text: text, file: path)
        let options = GraphCompiler.Options(sampleRate: sr, maxFrames: 256, hostInputChannels: 1, realTime: false)
        let plan = try GraphCompiler(registry: Fixtures.registry).compile(rack, options: options)
        var out: [Float] = []
        OfflineRenderer(plan: plan).render(
            input: AudioData(channels: [input], sampleRate: sr), midi: nil, frames: input.count, blockSize: 256
        ) { bus, n in out += UnsafeBufferPointer(start: bus[0], count: n) }
        return out
    }

    func f(_ v: Float) -> String { String(format: "%.1f", Double(v)) }
}

/// The test's own frames (10 ms) of a recording, found on the clean voice placed at
/// `lead`: voiced (within 30 dB of the voice's loudest frame), loud (the loudest 30 % of
/// the voice's frames within 40 dB of its loudest), sibilant (a third of the power or
/// more above 6 kHz).
struct Masks {
    let frame: Int
    var voiced: [Int] = [], loud: [Int] = [], sibilant: [Int] = []

    init(clean: [Float], lead: Int, frame: Int) {
        self.frame = frame
        let high = SpectrumMeasure.highPassed(clean, cutoff: 6000).map(Float.init)
        let count = clean.count / frame
        let levels = (0..<count).map { Self.level(clean, $0 * frame, frame) }
        let highLevels = (0..<count).map { Self.level(high, $0 * frame, frame) }
        let top = levels.max() ?? 0
        let heard = levels.filter { $0 > top - 40 }.sorted()
        let loudFrom = heard[Int(Double(heard.count - 1) * 0.7)]
        let offset = lead / frame
        for i in 0..<count {
            if levels[i] > top - 30 { voiced.append(offset + i) }
            if levels[i] >= loudFrom { loud.append(offset + i) }
            if levels[i] > top - 40 && highLevels[i] >= levels[i] - 5 { sibilant.append(offset + i) }
        }
    }

    static func level(_ x: [Float], _ start: Int, _ n: Int) -> Float {
        var s: Float = 0
        for i in start..<min(start + n, x.count) { s += x[i] * x[i] }
        return 10 * log10(max(s / Float(n), 1e-14))
    }

    func frameLevel(_ x: [Float], _ i: Int) -> Float { Self.level(x, i * frame, frame) }

    /// The power mean of `frames` of `x` (dBFS).
    func level(_ x: [Float], _ frames: [Int]) -> Float {
        var s: Float = 0
        for i in frames { s += pow(10, frameLevel(x, i) / 10) }
        return 10 * log10(max(s / Float(max(frames.count, 1)), 1e-14))
    }
}
