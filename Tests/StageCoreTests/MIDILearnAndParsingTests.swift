import StageCore
import XCTest

/// MIDI learn's guesses, the raw MIDI byte parser, and adding a learned entry to rack text.
final class MIDILearnAndParsingTests: XCTestCase {
    let level = ParameterSpec(id: "gain", name: "Gain", unit: .decibels, range: -96...24, defaultValue: 0)
    let bypass = ParameterSpec.bypass

    func learn(_ messages: [MIDIMessage], spec: ParameterSpec? = nil) -> String? {
        var l = MIDILearn()
        var t = 0.0
        for m in messages {
            l.feed(m, seconds: t)
            t += 0.02
        }
        XCTAssertFalse(l.isSettled(at: t - 0.02 + 0.1))
        XCTAssertTrue(l.isSettled(at: t + MIDILearn.settleSeconds))
        return l.mapping(target: "mix.gain2", spec: spec ?? level)?.0.jsonText
    }

    func cc(_ c: Int, _ v: Int, ch: Int = 0) -> MIDIMessage { .controlChange(channel: ch, controller: c, value: v) }

    func testPlainKnob() {
        XCTAssertEqual(learn([cc(7, 60, ch: 2), cc(7, 61, ch: 2), cc(7, 63, ch: 2), cc(9, 1)]), #"{ "cc": 7, "channel": 3, "to": "mix.gain2" }"#)
    }

    func testFourteenBitPair() {
        XCTAssertEqual(learn([cc(1, 60), cc(33, 5), cc(1, 61), cc(33, 90)]), #"{ "cc": 1, "hires": true, "channel": 1, "to": "mix.gain2" }"#)
    }

    func testNRPNAndRPN() {
        XCTAssertEqual(
            learn([cc(99, 1), cc(98, 2), cc(6, 10), cc(38, 3), cc(6, 11), cc(38, 0)]),
            #"{ "nrpn": 130, "channel": 1, "to": "mix.gain2" }"#)
        XCTAssertEqual(learn([cc(101, 0), cc(100, 5), cc(6, 10)]), #"{ "rpn": 5, "hires": false, "channel": 1, "to": "mix.gain2" }"#)
    }

    func testRelativeEncodings() {
        XCTAssertEqual(learn([cc(16, 1), cc(16, 1), cc(16, 1), cc(16, 127), cc(16, 127)]), #"{ "cc": 16, "channel": 1, "to": "mix.gain2", "mode": "relative-twos" }"#)
        XCTAssertEqual(learn([cc(16, 65), cc(16, 65), cc(16, 65), cc(16, 63)]), #"{ "cc": 16, "channel": 1, "to": "mix.gain2", "mode": "relative-offset" }"#)
        XCTAssertEqual(learn([cc(16, 1), cc(16, 1), cc(16, 1), cc(16, 65), cc(16, 65)]), #"{ "cc": 16, "channel": 1, "to": "mix.gain2", "mode": "relative-signbit" }"#)
        // A knob turned slowly near 0 never repeats a value: absolute.
        XCTAssertEqual(learn([cc(16, 1), cc(16, 2), cc(16, 3), cc(16, 4)]), #"{ "cc": 16, "channel": 1, "to": "mix.gain2" }"#)
    }

    func testButtonsAndPads() {
        XCTAssertEqual(learn([cc(80, 127), cc(80, 0)], spec: bypass), #"{ "cc": 80, "channel": 1, "to": "mix.gain2", "button": "toggle" }"#)
        XCTAssertEqual(learn([cc(80, 127), cc(80, 0)]), #"{ "cc": 80, "channel": 1, "to": "mix.gain2", "button": "momentary" }"#)
        XCTAssertEqual(
            learn([.noteOn(channel: 9, note: 36, velocity: 100), .noteOff(channel: 9, note: 36)], spec: bypass),
            #"{ "note": 36, "channel": 10, "to": "mix.gain2", "button": "toggle" }"#)
    }

    func testIgnoresWhatIsNotAControl() {
        var l = MIDILearn()
        XCTAssertFalse(l.feed(.clock, seconds: 0))
        XCTAssertFalse(l.feed(.pitchBend(channel: 0, value: 100), seconds: 0))
        XCTAssertFalse(l.feed(.programChange(channel: 0, program: 3), seconds: 0))
        XCTAssertFalse(l.hasControl)
        XCTAssertFalse(l.isSettled(at: 100))
        XCTAssertTrue(l.feed(cc(7, 3), seconds: 1))
        XCTAssertFalse(l.feed(cc(8, 3), seconds: 1.1), "another control after the first is not it")
    }

    func testLearnedEntriesReadBack() throws {
        // Every kind of entry learn writes is accepted by the rack reader.
        let entries = [
            learn([cc(1, 60), cc(33, 5)]), learn([cc(99, 1), cc(98, 2), cc(6, 10), cc(38, 3)]),
            learn([cc(16, 1), cc(16, 1), cc(16, 1)]), learn([cc(80, 127), cc(80, 0)]),
            learn([.noteOn(channel: 0, note: 36, velocity: 1)]),
        ].compactMap { $0?.replacingOccurrences(of: "mix.gain2", with: "fx.level") }
        XCTAssertEqual(entries.count, 5)
        XCTAssertEqual(MIDITestRack.errors(midi: "{ \"map\": [ \(entries.joined(separator: ", ")) ] }"), [])
    }

    // MARK: Byte parser

    func parse(_ bytes: [UInt8]) -> [MIDIMessage] {
        var p = MIDIByteParser()
        var out: [MIDIMessage] = []
        p.feed(bytes) { out.append($0) }
        return out
    }

    func testRunningStatusAndRealTimeInside() {
        XCTAssertEqual(
            parse([0x90, 60, 100, 62, 0, 0xB0, 7, 0xF8, 64, 0xC1, 5, 6]),
            [.noteOn(channel: 0, note: 60, velocity: 100), .noteOn(channel: 0, note: 62, velocity: 0), .clock,
             .controlChange(channel: 0, controller: 7, value: 64), .programChange(channel: 1, program: 5),
             .programChange(channel: 1, program: 6)])
    }

    func testSysExIsSkippedWhateverItsLength() {
        var p = MIDIByteParser()
        var out: [MIDIMessage] = []
        p.feed([0xF0] + Array(repeating: 0x11, count: 5000) + [0xF8, 0xF7, 0xB0, 1, 2]) { out.append($0) }
        XCTAssertEqual(out, [.clock, .controlChange(channel: 0, controller: 1, value: 2)])
        XCTAssertEqual(p.sysExBytesSkipped, 5000)
        // A SysEx cut short by a status byte ends there.
        XCTAssertEqual(parse([0xF0, 1, 2, 0x90, 60, 1]), [.noteOn(channel: 0, note: 60, velocity: 1)])
    }

    func testSystemCommonAndStrayBytes() {
        XCTAssertEqual(parse([5, 6, 0xF2, 1, 2, 0xF3, 4, 0xFA, 0xE0, 0, 64]), [.start, .pitchBend(channel: 0, value: 8192)])
    }

    // MARK: Writing a mapping into rack text

    func testAddsToAnExistingMultilineMapKeepingStyle() throws {
        let text = """
            // my rack
            {
              "format": 1,
              "midi": {
                "map": [
                  { "cc": 7, "to": "mix.gain1" }, // main
                ],
              },
            }
            """
        let out = try RackTextEditor.addingMIDIMapping(#"{ "cc": 8, "to": "mix.gain2" }"#, to: text)
        XCTAssertEqual(out, """
            // my rack
            {
              "format": 1,
              "midi": {
                "map": [
                  { "cc": 7, "to": "mix.gain1" }, // main
                  { "cc": 8, "to": "mix.gain2" },
                ],
              },
            }
            """)
    }

    func testAddsWithoutTrailingCommaAndOnOneLine() throws {
        let multi = "{\n  \"midi\": { \"map\": [\n    { \"cc\": 7, \"to\": \"a.b\" }\n  ] }\n}"
        XCTAssertEqual(
            try RackTextEditor.addingMIDIMapping("{ \"cc\": 9 }", to: multi),
            "{\n  \"midi\": { \"map\": [\n    { \"cc\": 7, \"to\": \"a.b\" },\n    { \"cc\": 9 }\n  ] }\n}")
        let single = #"{ "midi": { "map": [ { "cc": 7, "to": "a]b" } ] } }"#
        XCTAssertEqual(
            try RackTextEditor.addingMIDIMapping("{ \"cc\": 9 }", to: single),
            #"{ "midi": { "map": [ { "cc": 7, "to": "a]b" }, { "cc": 9 } ] } }"#)
        XCTAssertEqual(try RackTextEditor.addingMIDIMapping("{}", to: #"{ "midi": { "map": [] } }"#), #"{ "midi": { "map": [ {} ] } }"#)
    }

    func testCreatesMapOrMidiSection() throws {
        XCTAssertEqual(
            try RackTextEditor.addingMIDIMapping("{}", to: "{\n  \"midi\": {\n    \"connect\": [ \"x\" ] /* c } */\n  }\n}"),
            "{\n  \"midi\": {\n    \"connect\": [ \"x\" ],\n    \"map\": [ {} ] /* c } */\n  }\n}")
        XCTAssertEqual(
            try RackTextEditor.addingMIDIMapping("{}", to: "{\n  \"format\": 1,\n}\n"),
            "{\n  \"format\": 1,\n  \"midi\": { \"map\": [ {} ] },\n}\n")
        XCTAssertThrowsError(try RackTextEditor.addingMIDIMapping("{}", to: "{ \"format\": "))
    }

    func testEditedRackStillReads() throws {
        let text = """
            { "format": 1, "units": { "mic": { "type": "in" }, "fx": { "type": "knobs" }, "out": { "type": "out" } },
              "connections": [ "mic -> fx -> out" ] }
            """
        let out = try RackTextEditor.addingMIDIMapping(#"{ "cc": 7, "to": "fx.level" }"#, to: text)
        let rack = try RackReader(registry: MIDITestRack.registry).read(text: out)
        XCTAssertEqual(rack.midi.map.map(\.target), ["fx.level"])
        XCTAssertTrue(out.hasPrefix(text.dropLast(2)))
    }
}
