import CALSA
import StageCore

/// ALSA sequencer events as the engine's `MIDIMessage`s, read straight from the decoded
/// event (no round trip through MIDI bytes and a second parser). The sequencer's combined
/// events come apart into the CCs a controller would have sent: `CONTROL14` into its MSB
/// and LSB, NRPN/RPN into their four CCs. Events that are not MIDI messages (timers,
/// announcements, SysEx: handled elsewhere) give none. Thread: any (pure).
public enum SequencerEvents {
    /// Hands `event`'s messages to `emit` in order; returns how many.
    @discardableResult
    public static func messages(of event: snd_seq_event_t, _ emit: (MIDIMessage) -> Void) -> Int {
        let kind = Int32(event.type)
        switch kind {
        case code(SND_SEQ_EVENT_NOTEON), code(SND_SEQ_EVENT_NOTEOFF), code(SND_SEQ_EVENT_KEYPRESS):
            let n = event.data.note
            let status: UInt8 = kind == code(SND_SEQ_EVENT_NOTEON) ? 0x90 : kind == code(SND_SEQ_EVENT_NOTEOFF) ? 0x80 : 0xA0
            emit(MIDIMessage(status: status | (n.channel & 15), data1: n.note, data2: n.velocity))
            return 1
        case code(SND_SEQ_EVENT_CONTROLLER):
            let c = event.data.control
            emit(.controlChange(channel: Int(c.channel), controller: Int(c.param & 127), value: Int(c.value & 127)))
            return 1
        case code(SND_SEQ_EVENT_PGMCHANGE):
            let c = event.data.control
            emit(.programChange(channel: Int(c.channel), program: Int(c.value & 127)))
            return 1
        case code(SND_SEQ_EVENT_CHANPRESS):
            let c = event.data.control
            emit(.channelPressure(channel: Int(c.channel), value: Int(c.value & 127)))
            return 1
        case code(SND_SEQ_EVENT_PITCHBEND):
            let c = event.data.control
            emit(.pitchBend(channel: Int(c.channel), value: Int(c.value) + 8192))
            return 1
        case code(SND_SEQ_EVENT_CONTROL14):
            let c = event.data.control
            let ch = Int(c.channel)
            let v = Int(min(max(c.value, 0), 16383))
            guard c.param < 32 else {
                emit(.controlChange(channel: ch, controller: Int(c.param & 127), value: v & 127))
                return 1
            }
            emit(.controlChange(channel: ch, controller: Int(c.param), value: v >> 7))
            emit(.controlChange(channel: ch, controller: Int(c.param) + 32, value: v & 127))
            return 2
        case code(SND_SEQ_EVENT_NONREGPARAM), code(SND_SEQ_EVENT_REGPARAM):
            let c = event.data.control
            let ch = Int(c.channel)
            let number = Int(c.param & 0x3FFF)
            let v = Int(min(max(c.value, 0), 16383))
            let nrpn = kind == code(SND_SEQ_EVENT_NONREGPARAM)
            emit(.controlChange(channel: ch, controller: nrpn ? 99 : 101, value: number >> 7))
            emit(.controlChange(channel: ch, controller: nrpn ? 98 : 100, value: number & 127))
            emit(.controlChange(channel: ch, controller: 6, value: v >> 7))
            emit(.controlChange(channel: ch, controller: 38, value: v & 127))
            return 4
        case code(SND_SEQ_EVENT_CLOCK): emit(.clock); return 1
        case code(SND_SEQ_EVENT_START): emit(.start); return 1
        case code(SND_SEQ_EVENT_CONTINUE): emit(.continue); return 1
        case code(SND_SEQ_EVENT_STOP): emit(.stop); return 1
        case code(SND_SEQ_EVENT_SENSING): emit(.activeSensing); return 1
        case code(SND_SEQ_EVENT_RESET): emit(.systemReset); return 1
        default:
            return 0
        }
    }

    @inline(__always)
    static func code(_ t: snd_seq_event_type) -> Int32 { Int32(t.rawValue) }
}
