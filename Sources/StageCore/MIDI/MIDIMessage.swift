/// A MIDI channel or system message of up to three bytes, as the engine carries it.
/// SysEx is not carried (the MIDI layer passes over it). Thread: any (a value).
@frozen
public struct MIDIMessage: Sendable, Equatable, Hashable, BitwiseCopyable, CustomStringConvertible {
    public var status: UInt8
    public var data1: UInt8
    public var data2: UInt8

    @inlinable
    public init(status: UInt8, data1: UInt8 = 0, data2: UInt8 = 0) {
        self.status = status
        self.data1 = data1 & 0x7F
        self.data2 = data2 & 0x7F
    }

    /// What kind of message it is.
    public enum Kind: UInt8, Sendable {
        case noteOff = 0x80, noteOn = 0x90, polyPressure = 0xA0, controlChange = 0xB0
        case programChange = 0xC0, channelPressure = 0xD0, pitchBend = 0xE0, system = 0xF0
    }

    @inlinable public var kind: Kind { Kind(rawValue: status & 0xF0) ?? .system }
    /// 0-based channel (0…15) of a channel message.
    @inlinable public var channel: Int { Int(status & 0x0F) }
    @inlinable public var note: Int { Int(data1) }
    @inlinable public var velocity: Int { Int(data2) }
    @inlinable public var controller: Int { Int(data1) }
    @inlinable public var value: Int { Int(data2) }
    /// A note-on with velocity 0 counts as a note-off, as MIDI says.
    @inlinable public var isNoteOn: Bool { kind == .noteOn && data2 > 0 }
    @inlinable public var isNoteOff: Bool { kind == .noteOff || (kind == .noteOn && data2 == 0) }
    /// Pitch bend as 0…16383, centre 8192.
    @inlinable public var bendValue: Int { Int(data1) | (Int(data2) << 7) }

    // Constructors take 0-based channels.
    @inlinable public static func noteOn(channel: Int, note: Int, velocity: Int) -> MIDIMessage {
        MIDIMessage(status: 0x90 | UInt8(channel & 15), data1: UInt8(note & 127), data2: UInt8(velocity & 127))
    }
    @inlinable public static func noteOff(channel: Int, note: Int, velocity: Int = 0) -> MIDIMessage {
        MIDIMessage(status: 0x80 | UInt8(channel & 15), data1: UInt8(note & 127), data2: UInt8(velocity & 127))
    }
    @inlinable public static func controlChange(channel: Int, controller: Int, value: Int) -> MIDIMessage {
        MIDIMessage(status: 0xB0 | UInt8(channel & 15), data1: UInt8(controller & 127), data2: UInt8(value & 127))
    }
    @inlinable public static func programChange(channel: Int, program: Int) -> MIDIMessage {
        MIDIMessage(status: 0xC0 | UInt8(channel & 15), data1: UInt8(program & 127))
    }
    @inlinable public static func pitchBend(channel: Int, value: Int) -> MIDIMessage {
        let v = min(max(value, 0), 16383)
        return MIDIMessage(status: 0xE0 | UInt8(channel & 15), data1: UInt8(v & 127), data2: UInt8(v >> 7))
    }
    @inlinable public static func channelPressure(channel: Int, value: Int) -> MIDIMessage {
        MIDIMessage(status: 0xD0 | UInt8(channel & 15), data1: UInt8(value & 127))
    }
    @inlinable public static func polyPressure(channel: Int, note: Int, value: Int) -> MIDIMessage {
        MIDIMessage(status: 0xA0 | UInt8(channel & 15), data1: UInt8(note & 127), data2: UInt8(value & 127))
    }

    // System real-time messages (one byte).
    /// Timing clock: 24 per quarter note.
    public static let clock = MIDIMessage(status: 0xF8)
    public static let start = MIDIMessage(status: 0xFA)
    public static let `continue` = MIDIMessage(status: 0xFB)
    public static let stop = MIDIMessage(status: 0xFC)
    public static let activeSensing = MIDIMessage(status: 0xFE)
    public static let systemReset = MIDIMessage(status: 0xFF)

    /// True for the one-byte real-time messages (clock, start, continue, stop, sensing, reset).
    @inlinable public var isRealTime: Bool { status >= 0xF8 }

    public var description: String {
        let ch = "ch\(channel + 1)"
        switch kind {
        case .noteOn: return data2 == 0 ? "NoteOff \(data1) \(ch)" : "NoteOn \(data1) vel \(data2) \(ch)"
        case .noteOff: return "NoteOff \(data1) \(ch)"
        case .polyPressure: return "PolyPressure \(data1) = \(data2) \(ch)"
        case .controlChange: return "CC\(data1) \(ch) = \(data2)"
        case .programChange: return "Program \(data1) \(ch)"
        case .channelPressure: return "Pressure \(data1) \(ch)"
        case .pitchBend: return "PitchBend \(bendValue - 8192) \(ch)"
        case .system:
            switch status {
            case 0xF8: return "Clock"
            case 0xFA: return "Start"
            case 0xFB: return "Continue"
            case 0xFC: return "Stop"
            case 0xFE: return "ActiveSensing"
            case 0xFF: return "Reset"
            default: return "System 0x\(String(status, radix: 16, uppercase: true))"
            }
        }
    }
}
