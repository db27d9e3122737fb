/// The events of a Standard MIDI File with tick times, before the tempo map turns ticks
/// into seconds: channel messages and tempo changes of all tracks, in one compact list
/// each. Thread: control.
struct EventList {
    var channel: [ChannelEvent] = []
    var tempos: [TempoChange] = []
    /// The last tick of any track (end-of-track included).
    var lastTick = 0

    /// Orders both lists by tick; events at the same tick keep file order.
    mutating func sort() {
        channel.sort { $0.tick != $1.tick ? $0.tick < $1.tick : $0.order < $1.order }
        // Tempo changes arrive in file order: a stable sort keeps the last of a tick last.
        var indexed = tempos.enumerated().map { ($0.offset, $0.element) }
        indexed.sort { $0.1.tick != $1.1.tick ? $0.1.tick < $1.1.tick : $0.0 < $1.0 }
        tempos = indexed.map(\.1)
    }
}

/// One channel message at its tick; `order` is its place in the file (for ties).
struct ChannelEvent {
    var tick: Int
    var order: Int
    var track: Int32
    var message: MIDIMessage
}

/// A Set Tempo meta event.
struct TempoChange {
    var tick: Int
    var microsPerQuarter: Int
}
