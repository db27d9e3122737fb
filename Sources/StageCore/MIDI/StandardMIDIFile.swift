/// A Standard MIDI File (type 0 or 1) read into one time-ordered list of messages with
/// times in seconds, tempo map applied. SysEx and meta events other than tempo are
/// skipped; running status is honoured. The time division must be one the standard
/// defines (PPQ ≥ 1, or SMPTE 24/25/29.97/30 fps with ≥ 1 tick a frame); a file claiming
/// more than `maximumSeconds` is cut there (`isTruncated` says so). Thread: control.
public struct StandardMIDIFile: Sendable {
    public struct TimedMessage: Sendable, Equatable {
        public var seconds: Double
        public var message: MIDIMessage
        /// Which track it came from (file order), for stable ordering.
        public var track: Int

        public init(seconds: Double, message: MIDIMessage, track: Int = 0) {
            self.seconds = seconds
            self.message = message
            self.track = track
        }
    }

    public struct FormatError: Error, Sendable, CustomStringConvertible {
        public var offset: Int
        public var message: String
        public var description: String { "byte \(offset): \(message)" }
    }

    /// The longest a MIDI file may run: events later than this are dropped and `duration`
    /// stops here (a broken or hostile division or delta time can claim years). One hour.
    public static let maximumSeconds: Double = 3600

    public var format: Int
    public var trackCount: Int
    /// All channel messages of all tracks, ordered by time (then track, then file order),
    /// none later than `maximumSeconds`.
    public var messages: [TimedMessage]
    /// Time of the last event of any kind (end-of-track included), in seconds, at most
    /// `maximumSeconds`.
    public var duration: Double
    /// Time of the last event as the file's division and delta times claim it, uncapped.
    public var claimedDuration: Double
    /// Whether the file claims more than `maximumSeconds` (its later events are dropped).
    public var isTruncated: Bool { claimedDuration > Self.maximumSeconds }
    /// Each message's place in quarter notes from the start (ticks over the division),
    /// whatever the tempo map says: what a song's MIDI-file backing plays in the song's own
    /// tempo (`SongMIDIBacking`). Empty for an SMPTE division (no beats) and for a sequence
    /// made in code.
    public var quarterNotes: [Double] = []
    /// The file's tempo at its start in BPM (quarter notes), if a Set Tempo says so at tick 0.
    public var initialTempo: Double?

    /// A sequence made in code (demos, tests): messages must be in time order.
    public init(messages: [TimedMessage], duration: Double) {
        format = 0
        trackCount = 1
        self.messages = messages
        self.duration = duration
        claimedDuration = duration
    }

    /// Parses the bytes of a .mid file, in time linear in its size (plus one sort).
    public init(bytes: [UInt8]) throws(FormatError) {
        var r = Reader(bytes: bytes)
        guard try r.fourCC() == "MThd" else { throw FormatError(offset: 0, message: "not a Standard MIDI File (no MThd header)") }
        let headerLength = Int(try r.u32())
        guard headerLength >= 6 else { throw FormatError(offset: 4, message: "MThd header too short") }
        format = Int(try r.u16())
        trackCount = Int(try r.u16())
        let clock = try TickClock(division: try r.u16())
        try r.skip(headerLength - 6)
        guard format <= 1 else {
            throw FormatError(offset: 8, message: "type \(format) MIDI files are not supported (types 0 and 1 are)")
        }
        var events = EventList()
        for track in 0..<trackCount { try Self.readTrack(&r, track: track, into: &events) }
        events.sort()

        // Ticks to seconds: one pass over the sorted events, advancing through the tempo map.
        var cursor = clock.start(tempos: events.tempos)
        messages = []
        messages.reserveCapacity(events.channel.count)
        let beats = clock.smpteTicksPerSecond == nil
        for e in events.channel {
            let seconds = cursor.seconds(at: e.tick)
            if seconds > Self.maximumSeconds { break }
            messages.append(TimedMessage(seconds: seconds, message: e.message, track: Int(e.track)))
            if beats { quarterNotes.append(Double(e.tick) / clock.ticksPerQuarter) }
        }
        if beats, let first = events.tempos.first, first.tick == 0 {
            // The last Set Tempo at tick 0 wins (a stable sort keeps file order).
            let atStart = events.tempos.last { $0.tick == 0 } ?? first
            initialTempo = 60_000_000 / Double(atStart.microsPerQuarter)
        }
        claimedDuration = cursor.seconds(at: max(events.lastTick, events.channel.last?.tick ?? 0))
        duration = min(claimedDuration, Self.maximumSeconds)
    }

    /// Reads one `MTrk` chunk (skipping unknown chunks before it) into `events`.
    static func readTrack(_ r: inout Reader, track: Int, into events: inout EventList) throws(FormatError) {
        let chunkStart = r.position
        var id = try r.fourCC()
        while id != "MTrk" {
            try r.skip(Int(try r.u32()))
            id = try r.fourCC()
        }
        let length = Int(try r.u32())
        let end = r.position + length
        guard end <= r.bytes.count else {
            throw FormatError(offset: chunkStart, message: "track \(track + 1) claims \(length) bytes but the file ends first")
        }
        var tick = 0
        var runningStatus: UInt8 = 0
        while r.position < end {
            tick += try r.variableLength()
            var status = try r.u8()
            if status < 0x80 {
                guard runningStatus != 0 else {
                    throw FormatError(offset: r.position - 1, message: "data byte with no running status")
                }
                r.position -= 1
                status = runningStatus
            }
            switch status {
            case 0xFF:
                let type = try r.u8()
                let len = try r.variableLength()
                if type == 0x51 && len == 3 {
                    let t = Int(try r.u8()) << 16 | Int(try r.u8()) << 8 | Int(try r.u8())
                    events.tempos.append(TempoChange(tick: tick, microsPerQuarter: max(t, 1)))
                } else {
                    try r.skip(len)
                }
                if type == 0x2F { r.position = end }
            case 0xF0, 0xF7:
                try r.skip(try r.variableLength())
                runningStatus = 0
            case 0xF1...0xFE:
                throw FormatError(
                    offset: r.position - 1,
                    message: "status byte 0x\(String(status, radix: 16, uppercase: true)) has no place in a MIDI file track")
            default:
                runningStatus = status
                let d1 = try r.u8()
                let kind = status & 0xF0
                let d2: UInt8 = (kind == 0xC0 || kind == 0xD0) ? 0 : try r.u8()
                events.channel.append(
                    ChannelEvent(tick: tick, order: events.channel.count, track: Int32(track),
                                 message: MIDIMessage(status: status, data1: d1, data2: d2)))
            }
        }
        r.position = end
        events.lastTick = max(events.lastTick, tick)
    }

    struct Reader {
        let bytes: [UInt8]
        var position = 0

        mutating func u8() throws(FormatError) -> UInt8 {
            guard position < bytes.count else { throw FormatError(offset: position, message: "unexpected end of file") }
            position += 1
            return bytes[position - 1]
        }
        mutating func u16() throws(FormatError) -> UInt16 { UInt16(try u8()) << 8 | UInt16(try u8()) }
        mutating func u32() throws(FormatError) -> UInt32 { UInt32(try u16()) << 16 | UInt32(try u16()) }
        mutating func fourCC() throws(FormatError) -> String {
            String(decoding: [try u8(), try u8(), try u8(), try u8()], as: UTF8.self)
        }
        mutating func skip(_ n: Int) throws(FormatError) {
            guard n >= 0, position + n <= bytes.count else {
                throw FormatError(offset: position, message: "unexpected end of file")
            }
            position += n
        }
        mutating func variableLength() throws(FormatError) -> Int {
            var v = 0
            for _ in 0..<4 {
                let b = try u8()
                v = (v << 7) | Int(b & 0x7F)
                if b & 0x80 == 0 { return v }
            }
            throw FormatError(offset: position, message: "variable-length number longer than 4 bytes")
        }
    }
}
