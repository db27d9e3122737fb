import StageCore
import Synchronization

/// Moves the notes an `lv2` unit's MIDI input gets by its `transpose` (racks/README.md, "One
/// song key": the song's transpose, and `transpose-up`/`-down` live, through
/// `SongTranspose`), as the synth does: a note-on's key is moved (channel 10, General MIDI's
/// drums, only when the unit listens to channel 10 alone) and the key it sounds on is
/// remembered per incoming channel and key, so its note-off and polyphonic pressure reach
/// that key even if `transpose` changed meanwhile. A note moved out of 0…127 is left out,
/// with its note-off. Thread: `transpose` any; `route` and `clear` render (or control while
/// the unit does not render).
final class LV2NoteTransposer: @unchecked Sendable {
    static let drumChannel = 9
    /// The transposes a unit may have, as the synth's.
    static let range = -48...48

    private let value: Atomic<Int>
    /// Whether channel 10's notes move: only in a unit that listens to channel 10 alone.
    let transposesDrums: Bool
    /// Per incoming channel and key: the key sounding for it, or −1.
    private let sounding: UnsafeMutablePointer<Int16>

    /// Thread: control.
    init(transpose: Int, channel: Int?) {
        value = Atomic(min(max(transpose, Self.range.lowerBound), Self.range.upperBound))
        transposesDrums = channel == Self.drumChannel
        sounding = .allocate(capacity: 16 * 128)
        sounding.initialize(repeating: -1, count: 16 * 128)
    }

    deinit { sounding.deallocate() }

    /// Semitones added to the notes that start from now on (sounding notes keep theirs).
    /// Thread: any.
    var transpose: Int {
        get { value.load(ordering: .relaxed) }
        set { value.store(min(max(newValue, Self.range.lowerBound), Self.range.upperBound), ordering: .relaxed) }
    }

    /// Calls `send` with what the plugin gets for `m` (nothing, one message, or a note-off
    /// and then the note-on of a key struck again while it sounds on another key). Thread: render.
    @inline(__always)
    func route(_ m: MIDIMessage, _ send: (MIDIMessage) -> Void) {
        let ch = m.channel
        switch m.kind {
        case .noteOn where m.data2 > 0:
            let key = m.note
            let target = ch == Self.drumChannel && !transposesDrums ? key : key + value.load(ordering: .relaxed)
            guard target >= 0 && target <= 127 else { return }
            let slot = ch * 128 + key
            let old = Int(sounding[slot])
            if old >= 0 && old != target { send(.noteOff(channel: ch, note: old)) }
            sounding[slot] = Int16(target)
            send(MIDIMessage(status: m.status, data1: UInt8(target), data2: m.data2))
        case .noteOn, .noteOff:
            let slot = ch * 128 + m.note
            let s = Int(sounding[slot])
            guard s >= 0 else { return }
            sounding[slot] = -1
            send(MIDIMessage(status: m.status, data1: UInt8(s), data2: m.data2))
        case .polyPressure:
            let s = Int(sounding[ch * 128 + m.note])
            if s >= 0 { send(MIDIMessage(status: m.status, data1: UInt8(s), data2: m.data2)) }
        case .controlChange:
            // All sound off, all notes off and the mode messages end every note of the channel.
            if m.controller == 120 || m.controller >= 123 { (sounding + ch * 128).update(repeating: -1, count: 128) }
            send(m)
        default:
            send(m)
        }
    }

    /// No note sounding (the plugin was reset). Thread: render, or control while idle.
    func clear() { sounding.update(repeating: -1, count: 16 * 128) }
}
