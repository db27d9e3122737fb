import StageDrivers
import XCTest

/// Which sequencer ports the MIDI client connects to.
final class MIDIPortRulesTests: XCTestCase {
    let readable: UInt32 = 1 | 32  // READ | SUBS_READ
    let writable: UInt32 = 2 | 64

    func port(_ client: Int, _ clientName: String, _ portName: String, kernel: Bool = true, caps: UInt32? = nil) -> SequencerPort {
        SequencerPort(
            client: client, port: 0, clientName: clientName, portName: portName, capability: caps ?? (readable | writable),
            type: 0, isKernelClient: kernel)
    }

    func testDefaultIsEveryHardwarePort() {
        let rules = MIDIPortRules(patterns: [], ownClient: 128)
        XCTAssertTrue(rules.acceptsSource(port(24, "nanoKONTROL2", "nanoKONTROL2 _ CTRL")))
        XCTAssertTrue(rules.acceptsSource(port(20, "Virtual Raw MIDI 1-0", "VirMIDI 1-0")))
        XCTAssertFalse(rules.acceptsSource(port(14, "Midi Through", "Midi Through Port-0")), "never Midi Through")
        XCTAssertFalse(rules.acceptsSource(port(0, "System", "Announce")), "never System")
        XCTAssertFalse(rules.acceptsSource(port(128, "StageRack", "out", kernel: false)), "never itself")
        XCTAssertFalse(rules.acceptsSource(port(129, "VMPK Output", "out", kernel: false)), "programs only by pattern")
        XCTAssertFalse(rules.acceptsSource(port(24, "nanoKONTROL2", "in", caps: writable)), "not readable")
        XCTAssertTrue(rules.acceptsDestination(port(24, "nanoKONTROL2", "in", caps: writable)))
        XCTAssertFalse(rules.acceptsSource(port(24, "x", "y", caps: readable | 128)), "NO_EXPORT ports are private")
    }

    func testPatternsMatchClientPortOrBoth() {
        let rules = MIDIPortRules(patterns: ["nanoKONTROL2*", "launchkey*:*MIDI 1", "VMPK?Output"], ownClient: 128)
        XCTAssertTrue(rules.acceptsSource(port(24, "nanoKONTROL2", "nanoKONTROL2 _ CTRL")))
        XCTAssertTrue(rules.acceptsSource(port(28, "Launchkey MK3 49", "Launchkey MK3 49 LKMK3 MIDI 1")), "case-insensitive, client:port")
        XCTAssertFalse(rules.acceptsSource(port(28, "Launchkey MK3 49", "Launchkey MK3 49 LKMK3 DAW")))
        XCTAssertTrue(rules.acceptsSource(port(129, "VMPK Output", "out", kernel: false)), "programs by pattern")
        XCTAssertFalse(rules.acceptsSource(port(20, "Virtual Raw MIDI 1-0", "VirMIDI 1-0")), "patterns replace the default")
        XCTAssertFalse(
            MIDIPortRules(patterns: ["*"], ownClient: 128).acceptsSource(port(128, "StageRack", "out", kernel: false)),
            "never itself, even for *")
    }

    func testGlob() {
        XCTAssertTrue(MIDIPortRules.glob("a*c", "abbbc"))
        XCTAssertTrue(MIDIPortRules.glob("*", ""))
        XCTAssertTrue(MIDIPortRules.glob("a?c", "abc"))
        XCTAssertFalse(MIDIPortRules.glob("a?c", "ac"))
        XCTAssertTrue(MIDIPortRules.glob("*b*b*", "abcbd"))
        XCTAssertFalse(MIDIPortRules.glob("abc", "abcd"))
        XCTAssertTrue(MIDIPortRules.glob("VirMIDI ?-0", "virmidi 1-0"))
    }
}
