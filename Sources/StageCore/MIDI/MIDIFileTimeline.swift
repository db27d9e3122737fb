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

/// The file's time division: ticks per quarter note (the tempo map applies) or SMPTE
/// frames (tempo changes do not). Thread: control.
struct TickClock {
    /// SMPTE ticks a second (frames a second × ticks a frame), nil for PPQ.
    let smpteTicksPerSecond: Double?
    let ticksPerQuarter: Double

    init(division: UInt16) throws(StandardMIDIFile.FormatError) {
        if division & 0x8000 != 0 {
            let fps = 256 - Int(division >> 8)
            let ticksPerFrame = Int(division & 0xFF)
            guard [24, 25, 29, 30].contains(fps) else {
                throw StandardMIDIFile.FormatError(
                    offset: 12, message: "SMPTE time division of \(fps) frames a second (the standard has 24, 25, 29.97 and 30)")
            }
            guard ticksPerFrame > 0 else {
                throw StandardMIDIFile.FormatError(offset: 13, message: "SMPTE time division with 0 ticks per frame")
            }
            smpteTicksPerSecond = (fps == 29 ? 29.97 : Double(fps)) * Double(ticksPerFrame)
            ticksPerQuarter = 1
        } else {
            guard division > 0 else {
                throw StandardMIDIFile.FormatError(offset: 12, message: "time division of 0 ticks per quarter note")
            }
            smpteTicksPerSecond = nil
            ticksPerQuarter = Double(division)
        }
    }

    /// Seconds of `ticks` at a tempo of `micros` µs a quarter note (ignored for SMPTE).
    @inline(__always)
    func seconds(_ ticks: Int, micros: Double) -> Double {
        if let smpteTicksPerSecond { return Double(ticks) / smpteTicksPerSecond }
        return Double(ticks) / ticksPerQuarter * micros / 1e6
    }

    /// A cursor for ticks asked in ascending order through `tempos` (sorted by tick).
    func start(tempos: [TempoChange]) -> TempoCursor {
        TempoCursor(clock: self, tempos: smpteTicksPerSecond == nil ? tempos : [])
    }
}

/// Ticks to seconds for ascending ticks: each tempo change is passed once, so converting
/// a whole file is linear. Thread: control.
struct TempoCursor {
    let clock: TickClock
    let tempos: [TempoChange]
    var next = 0
    /// The tick and time where the current tempo began, and that tempo (120 BPM until told).
    var segmentTick = 0
    var segmentSeconds = 0.0
    var micros = 500_000.0

    init(clock: TickClock, tempos: [TempoChange]) {
        self.clock = clock
        self.tempos = tempos
    }

    /// The time of `tick`, which must not be less than the last one asked.
    mutating func seconds(at tick: Int) -> Double {
        while next < tempos.count && tempos[next].tick <= tick {
            let change = tempos[next]
            segmentSeconds += clock.seconds(change.tick - segmentTick, micros: micros)
            segmentTick = change.tick
            micros = Double(change.microsPerQuarter)
            next += 1
        }
        return segmentSeconds + clock.seconds(tick - segmentTick, micros: micros)
    }
}
