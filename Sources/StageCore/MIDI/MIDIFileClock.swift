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
