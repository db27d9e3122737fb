/// A Standard MIDI File (type 0 or 1) read into one time-ordered list of messages with
/// times in seconds, tempo map applied. SysEx and meta events other than tempo are
/// skipped; running status is honoured. Thread: control.
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

    public var format: Int
    public var trackCount: Int
    /// All channel messages of all tracks, ordered by time (then track, then file order).
    public var messages: [TimedMessage]
    /// Time of the last event of any kind (end-of-track included), in seconds.
    public var duration: Double

    /// A sequence made in code (demos, tests): messages must be in time order.
    public init(messages: [TimedMessage], duration: Double) {
        format = 0
        trackCount = 1
        self.messages = messages
        self.duration = duration
    }

    /// Parses the bytes of a .mid file.
    public init(bytes: [UInt8]) throws(FormatError) {
        var r = Reader(bytes: bytes)
        guard try r.fourCC() == "MThd" else { throw FormatError(offset: 0, message: "not a Standard MIDI File (no MThd header)") }
        let headerLength = Int(try r.u32())
        guard headerLength >= 6 else { throw FormatError(offset: 4, message: "MThd header too short") }
        format = Int(try r.u16())
        trackCount = Int(try r.u16())
        let division = try r.u16()
        try r.skip(headerLength - 6)
        guard format <= 1 else {
            throw FormatError(offset: 8, message: "type \(format) MIDI files are not supported (types 0 and 1 are)")
        }

        // Raw events with tick times.
        var raw: [(tick: Int, order: Int, track: Int, message: MIDIMessage)] = []
        var tempos: [(tick: Int, microsPerQuarter: Int)] = []
        var lastTick = 0
        var order = 0
        for track in 0..<trackCount {
            let chunkStart = r.position
            // Skip unknown chunks between tracks.
            var id = try r.fourCC()
            while id != "MTrk" {
                try r.skip(Int(try r.u32()))
                id = try r.fourCC()
            }
            let length = Int(try r.u32())
            let end = r.position + length
            guard end <= bytes.count else {
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
                        tempos.append((tick, max(t, 1)))
                    } else {
                        try r.skip(len)
                    }
                    if type == 0x2F { r.position = end }
                case 0xF0, 0xF7:
                    try r.skip(try r.variableLength())
                    runningStatus = 0
                default:
                    runningStatus = status
                    let d1 = try r.u8()
                    let kind = status & 0xF0
                    let d2: UInt8 = (kind == 0xC0 || kind == 0xD0) ? 0 : try r.u8()
                    raw.append((tick, order, track, MIDIMessage(status: status, data1: d1, data2: d2)))
                    order += 1
                }
            }
            r.position = end
            lastTick = max(lastTick, tick)
        }

        // Ticks to seconds through the tempo map (shared by all tracks).
        let secondsAt: (Int) -> Double
        if division & 0x8000 != 0 {
            let fps = Double(256 - Int(division >> 8))
            let ticksPerFrame = Double(division & 0xFF)
            let fpsExact = fps == 29 ? 29.97 : fps
            secondsAt = { Double($0) / (fpsExact * ticksPerFrame) }
        } else {
            let ppq = Double(max(division, 1))
            let map = tempos.sorted { $0.tick < $1.tick }
            secondsAt = { tick in
                var seconds = 0.0
                var lastTick = 0
                var micros = 500_000.0
                for t in map {
                    if t.tick >= tick { break }
                    seconds += Double(t.tick - lastTick) / ppq * micros / 1e6
                    lastTick = t.tick
                    micros = Double(t.microsPerQuarter)
                }
                return seconds + Double(tick - lastTick) / ppq * micros / 1e6
            }
        }
        raw.sort { ($0.tick, $0.order) < ($1.tick, $1.order) }
        messages = raw.map { TimedMessage(seconds: secondsAt($0.tick), message: $0.message, track: $0.track) }
        duration = secondsAt(lastTick)
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
