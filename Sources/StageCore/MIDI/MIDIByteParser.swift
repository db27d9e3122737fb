/// Reads a raw MIDI byte stream into `MIDIMessage`s: running status, real-time bytes in
/// the middle of a message, SysEx skipped whole (however long), stray data bytes dropped.
/// Used on what ALSA's event decoder produces and on raw MIDI. No allocation.
/// Thread: one at a time (it keeps the running status).
public struct MIDIByteParser: Sendable {
    var status: UInt8 = 0
    var data1: UInt8 = 0
    var haveData1 = false
    var inSysEx = false
    /// Bytes of SysEx skipped so far (for monitors).
    public private(set) var sysExBytesSkipped = 0

    public init() {}

    /// Forgets running status and any partial message.
    public mutating func reset() {
        status = 0
        haveData1 = false
        inSysEx = false
    }

    /// Takes one byte; hands each complete message to `emit`.
    @inlinable
    public mutating func feed<S: Sequence>(_ bytes: S, emit: (MIDIMessage) -> Void) where S.Element == UInt8 {
        for b in bytes { feed(b, emit: emit) }
    }

    public mutating func feed(_ byte: UInt8, emit: (MIDIMessage) -> Void) {
        if byte >= 0xF8 {
            emit(MIDIMessage(status: byte))  // real-time: anywhere, even inside SysEx
            return
        }
        if byte == 0xF0 {
            inSysEx = true
            status = 0
            return
        }
        if byte >= 0x80 {
            // Any other status ends a SysEx (0xF7 normally).
            inSysEx = false
            haveData1 = false
            switch byte {
            case 0xF7, 0xF4, 0xF5: status = 0
            case 0xF6: status = 0; emit(MIDIMessage(status: byte))  // tune request
            case 0xF1, 0xF2, 0xF3: status = byte  // system common with data: taken, not emitted
            default: status = byte
            }
            return
        }
        if inSysEx {
            sysExBytesSkipped &+= 1
            return
        }
        guard status != 0 else { return }  // data with no status: dropped
        let needs = Self.dataBytes(status)
        if needs == 1 {
            if status < 0xF0 { emit(MIDIMessage(status: status, data1: byte)) }
            if status >= 0xF0 { status = 0 }
            return
        }
        if !haveData1 {
            data1 = byte
            haveData1 = true
            return
        }
        haveData1 = false
        if status < 0xF0 { emit(MIDIMessage(status: status, data1: data1, data2: byte)) } else { status = 0 }
    }

    /// Data bytes after `status`.
    static func dataBytes(_ status: UInt8) -> Int {
        switch status & 0xF0 {
        case 0xC0, 0xD0: return 1
        case 0xF0: return status == 0xF2 ? 2 : 1
        default: return 2
        }
    }
}
