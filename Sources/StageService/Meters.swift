import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// What the live session reports at one moment: the meters' input. Thread: any (a value).
public struct StatusRecord: Sendable, Equatable {
    /// The rack's name (or file name) and file, and the current snapshot (nil: none).
    public var rackName: String
    public var rackFile: String
    public var snapshot: String?
    /// Peak levels since the previous record, linear (1 = 0 dBFS); nil: no capture device.
    public var peakIn: Float?
    public var peakOut: Float
    /// Render time over period time, the highest since the previous record.
    public var load: Float
    public var xruns: Int
    /// Where the last xrun happened and ALSA's code, e.g. ("playback", -32).
    public var lastXrun: (side: String, code: Int)?
    /// MIDI messages received since start; nil: no MIDI input.
    public var midiMessages: Int?
    /// The last MIDI event, as text (nil: none yet, or not known).
    public var lastMIDI: String?
    /// Seconds since the audio started.
    public var seconds: Double
    /// Whether the audio thread runs with SCHED_FIFO.
    public var realtime: Bool
    /// MIDI events lost since start (a full queue, the kernel's input pool overflowing),
    /// and events that came after their frame had been rendered (played at the next block).
    public var midiLost = 0
    public var midiLate = 0
    /// Units' read-only meters: gain reduction in dB by unit id (`comp` 3.2).
    public var gainReduction: [(unit: String, dB: Float)] = []
    /// Units' read-only values (`unit: name value, …`: LV2 control outputs).
    public var readouts: [String] = []
    /// Frames the device lost without an ALSA error (counted apart from xruns), in gaps.
    public var lostFrames = 0
    public var lostGaps = 0
    /// Players and loopers: `track playing 1:23 -2:05` each (`TrackReading.text`).
    public var tracks: [String] = []
    /// Capture on another card (drift compensation): the capture clock's measured offset
    /// from playback's in ppm and the resampling ratio; nil: one clock.
    public var driftPPM: Double?
    public var resamplingRatio: Double?
    /// With `--link`: the Link session as the last block read it; nil: Link off.
    public var link: LinkStatus?
    /// The setlist song's section playing and the next (`SongClock`); nil: none.
    public var section: String?
    public var nextSection: String?
    /// The song's transpose in semitones (`SongTranspose`); nil: the song has none to move.
    public var transpose: Int?

    public init(
        rackName: String, rackFile: String = "", snapshot: String? = nil, peakIn: Float?, peakOut: Float, load: Float,
        xruns: Int = 0, lastXrun: (side: String, code: Int)? = nil, midiMessages: Int? = nil, lastMIDI: String? = nil,
        seconds: Double = 0,
        realtime: Bool = false, midiLost: Int = 0, midiLate: Int = 0, gainReduction: [(unit: String, dB: Float)] = []
    ) {
        self.rackName = rackName
        self.rackFile = rackFile
        self.snapshot = snapshot
        self.peakIn = peakIn
        self.peakOut = peakOut
        self.load = load
        self.xruns = xruns
        self.lastXrun = lastXrun
        self.midiMessages = midiMessages
        self.lastMIDI = lastMIDI
        self.seconds = seconds
        self.realtime = realtime
        self.midiLost = midiLost
        self.midiLate = midiLate
        self.gainReduction = gainReduction
    }

    public static func == (a: StatusRecord, b: StatusRecord) -> Bool {
        a.rackName == b.rackName && a.rackFile == b.rackFile && a.snapshot == b.snapshot && a.peakIn == b.peakIn
            && a.peakOut == b.peakOut && a.load == b.load && a.xruns == b.xruns && a.lastXrun?.side == b.lastXrun?.side
            && a.lastXrun?.code == b.lastXrun?.code && a.midiMessages == b.midiMessages && a.lastMIDI == b.lastMIDI && a.seconds == b.seconds
            && a.realtime == b.realtime && a.midiLost == b.midiLost && a.midiLate == b.midiLate
            && a.lostFrames == b.lostFrames && a.lostGaps == b.lostGaps
            && a.gainReduction.map(\.unit) == b.gainReduction.map(\.unit) && a.gainReduction.map(\.dB) == b.gainReduction.map(\.dB)
            && a.section == b.section && a.nextSection == b.nextSection && a.transpose == b.transpose
            && a.tracks == b.tracks && a.readouts == b.readouts && a.driftPPM == b.driftPPM && a.resamplingRatio == b.resamplingRatio
            && a.link == b.link
    }
}

/// The Link session as the render thread last read it (`play --link`): peers, the
/// session's tempo, and the beat the rack's grid took at a time on Link's clock
/// (CLOCK_MONOTONIC_RAW, µs): two boxes' beats compared at one time show their phase.
/// Thread: any (a value).
public struct LinkStatus: Sendable, Equatable {
    public var peers: Int
    public var tempo: Double
    public var beat: Double
    public var micros: Int64
    /// The tempo the playing rack follows and its source's name (`TempoSource.name`).
    public var rackTempo: Double
    public var rackSource: String

    public init(peers: Int, tempo: Double, beat: Double, micros: Int64, rackTempo: Double, rackSource: String) {
        self.peers = peers
        self.tempo = tempo
        self.beat = beat
        self.micros = micros
        self.rackTempo = rackTempo
        self.rackSource = rackSource
    }

    /// `link 1 peer, 120.00 BPM, beat 1234.567890 at 9876543210 us, rack 120.00 BPM (Link)`.
    public var text: String {
        "link \(counted(peers, "peer")), \(fixed(tempo, 2)) BPM, beat \(fixed(beat, 6)) at \(micros) us, rack \(fixed(rackTempo, 2)) BPM (\(rackSource))"
    }
}

/// dBFS text with one decimal, `-inf` for silence.
public func dbfsText(_ x: Float) -> String {
    guard x > 0 else { return "-inf" }
    let db = (Double(20 * log10f(x)) * 10).rounded() / 10
    return db == db.rounded() ? "\(Int(db)).0" : "\(db)"
}

/// The plain status line (`--status`, and `--meters` when stderr is not a terminal):
/// `load 12% | xruns 0 | in -12.3 dBFS | out -3.0 dBFS | midi 42` (messages received;
/// `midi off` without MIDI input). Thread: any.
public func statusLine(_ r: StatusRecord) -> String {
    var s = "load \(Int((r.load * 100).rounded()))% | xruns \(r.xruns)"
    if let x = r.lastXrun { s += " (last: \(x.side) \(x.code))" }
    s += lostText(r)
    s += driftText(r)
    if let link = r.link { s += " | " + link.text }
    if let pin = r.peakIn { s += " | in \(dbfsText(pin)) dBFS" }
    s += " | out \(dbfsText(r.peakOut)) dBFS"
    s += " | midi \(r.midiMessages.map(String.init) ?? "off")"
    if let m = r.lastMIDI { s += " (last: \(m))" }
    s += midiTroubleText(r)
    if !r.gainReduction.isEmpty { s += " | " + gainReductionText(r) }
    if !r.tracks.isEmpty { s += " | " + r.tracks.joined(separator: ", ") }
    s += sectionText(r)
    if !r.readouts.isEmpty { s += " | " + r.readouts.joined(separator: " | ") }
    return s
}

/// ` | section verse, next chorus` when the song has sections, else nothing; then
/// ` | transpose +2` when the song can be transposed. Thread: any.
public func sectionText(_ r: StatusRecord) -> String {
    let transpose = r.transpose.map { " | transpose \($0 > 0 ? "+" : "")\($0)" } ?? ""
    guard r.section != nil || r.nextSection != nil else { return transpose }
    return " | section \(r.section ?? "-")" + (r.nextSection.map { ", next \($0)" } ?? "") + transpose
}

/// ` | lost 480 frames in 2 gaps` when the device lost samples without an ALSA error, else
/// nothing. Thread: any.
func lostText(_ r: StatusRecord) -> String {
    r.lostFrames > 0 ? " | lost \(counted(r.lostFrames, "frame")) in \(counted(r.lostGaps, "gap"))" : ""
}

/// ` | drift +98.7 ppm, ratio 0.99990131` with capture on another card, else nothing.
/// Thread: any.
public func driftText(_ r: StatusRecord) -> String {
    guard let ppm = r.driftPPM, let ratio = r.resamplingRatio else { return "" }
    let rounded = (ppm * 10).rounded() / 10
    return " | drift \(rounded >= 0 ? "+" : "")\(formatNumber(rounded)) ppm, ratio \(format8(ratio))"
}

/// `0.99990131`: eight decimals.
func format8(_ x: Double) -> String { fixed(x, 8) }

/// `x` with `digits` decimals (1…9), no Foundation. Thread: any.
func fixed(_ x: Double, _ digits: Int) -> String {
    var unit: Int64 = 1
    for _ in 0..<digits { unit *= 10 }
    let scaled = Int64((abs(x) * Double(unit)).rounded())
    let fraction = String(scaled % unit)
    return (x < 0 ? "-" : "") + "\(scaled / unit)." + String(repeating: "0", count: digits - fraction.count) + fraction
}

/// ` | MIDI lost 3, late 1` when some MIDI was lost or late, else nothing. Thread: any.
func midiTroubleText(_ r: StatusRecord) -> String {
    var parts: [String] = []
    if r.midiLost > 0 { parts.append("lost \(r.midiLost)") }
    if r.midiLate > 0 { parts.append("late \(r.midiLate)") }
    return parts.isEmpty ? "" : " | MIDI " + parts.joined(separator: ", ")
}

/// `GR comp 3.2 dB, ess 0.0 dB`: each dynamics unit's gain reduction. Thread: any.
public func gainReductionText(_ r: StatusRecord) -> String {
    "GR " + r.gainReduction.map { "\($0.unit) \(formatNumber((Double($0.dB) * 10).rounded() / 10)) dB" }.joined(separator: ", ")
}

/// The `--meters` view: a few lines with bars, redrawn in place on a terminal.
/// `lines` is a pure function of the record, the held maxima and the width; the escape
/// sequences that redraw it are separate (`draw`, `erase`). Thread: control.
public struct MeterView: Sendable {
    /// Columns available (the terminal's width).
    public var width: Int
    /// The level scale's floor.
    public static let floorDB: Double = -60
    /// Bar glyphs: eighths of a cell.
    static let partials: [Character] = ["▏", "▎", "▍", "▌", "▋", "▊", "▉"]
    static let fullCell: Character = "█"
    static let emptyCell: Character = "·"
    static let holdMark: Character = "│"

    public init(width: Int) {
        self.width = max(width, 40)
    }

    /// Maxima held over the last few seconds (the "max" column and the bar's hold mark).
    public struct Held: Sendable, Equatable {
        public var peakIn: Float?
        public var peakOut: Float
        public var load: Float
        public init(peakIn: Float?, peakOut: Float, load: Float) {
            self.peakIn = peakIn
            self.peakOut = peakOut
            self.load = load
        }
    }

    /// The view's lines (no escape sequences, each at most `width` characters).
    public func lines(_ r: StatusRecord, held: Held? = nil) -> [String] {
        let h = held ?? Held(peakIn: r.peakIn, peakOut: r.peakOut, load: r.load)
        var out: [String] = []
        // Most important first: a long file name is what gets cut.
        var title = "StageRack  \(r.rackName)  \(clock(r.seconds))  \(r.realtime ? "RT" : "not RT")  snapshot \(r.snapshot ?? "-")"
        if !r.rackFile.isEmpty && r.rackFile != r.rackName { title += "  (\(r.rackFile))" }
        out.append(fit(title))
        if let pin = r.peakIn {
            out.append(levelRow("in", pin, hold: max(h.peakIn ?? pin, pin)))
        } else {
            out.append(fit("in    (no capture device)"))
        }
        out.append(levelRow("out", r.peakOut, hold: max(h.peakOut, r.peakOut)))
        let loadHold = max(h.load, r.load)
        out.append(
            row("load", value: "\(Int((r.load * 100).rounded()))", unit: "%", hold: "\(Int((loadHold * 100).rounded()))",
                fraction: Double(r.load), holdFraction: Double(loadHold), flag: r.load >= 1 ? "OVER" : ""))
        var last = "xruns \(r.xruns)"
        if let x = r.lastXrun { last += " (last: \(x.side) \(x.code))" }
        last += lostText(r)
        last += driftText(r)
        last += "   MIDI: \(r.midiMessages.map { "\(counted($0, "message")), last: \(r.lastMIDI ?? "-")" } ?? "off")"
        last += midiTroubleText(r)
        out.append(fit(last))
        if let link = r.link { out.append(fit(link.text)) }
        if !r.gainReduction.isEmpty { out.append(fit(gainReductionText(r))) }
        if !r.tracks.isEmpty { out.append(fit(r.tracks.joined(separator: "   "))) }
        let section = sectionText(r)
        if !section.isEmpty { out.append(fit(String(section.dropFirst(3)))) }
        for line in r.readouts { out.append(fit(line)) }
        return out
    }

    func levelRow(_ label: String, _ peak: Float, hold: Float) -> String {
        row(label, value: dbfsText(peak), unit: "dBFS", hold: dbfsText(hold), fraction: fraction(peak),
            holdFraction: fraction(hold), flag: peak >= 1 ? "CLIP" : "")
    }

    /// Where a level sits on the bar: 0 at the floor (−60 dBFS) or below, 1 at 0 dBFS and above.
    public func fraction(_ peak: Float) -> Double {
        guard peak > 0 else { return 0 }
        let db = 20 * log10(Double(peak))
        return min(max((db - Self.floorDB) / -Self.floorDB, 0), 1)
    }

    /// `label value unit  max hold  [bar] flag`: the bar takes the columns left.
    func row(_ label: String, value: String, unit: String, hold: String, fraction: Double, holdFraction: Double, flag: String) -> String {
        let head = pad(label, 5) + padLeft(value, 6) + " " + pad(unit, 4) + "  max " + padLeft(hold, 6) + "  "
        let barWidth = max(width - head.count - 5, 4)
        var line = head + Self.bar(fraction, width: barWidth, hold: holdFraction)
        if !flag.isEmpty { line += " " + flag }
        return fit(line)
    }

    /// A bar `width` cells wide, filled to `fraction` in eighths of a cell, with a hold mark.
    public static func bar(_ fraction: Double, width: Int, hold: Double? = nil) -> String {
        let f = min(max(fraction, 0), 1)
        let eighths = Int((f * Double(width) * 8).rounded())
        let full = eighths / 8
        let rest = eighths % 8
        var cells = [Character](repeating: fullCell, count: full)
        if rest > 0 { cells.append(partials[rest - 1]) }
        let filled = cells.count
        cells += [Character](repeating: emptyCell, count: width - filled)
        if let hold, hold > 0 {
            let at = min(Int(min(max(hold, 0), 1) * Double(width)), width - 1)
            if at >= filled { cells[at] = holdMark }
        }
        return String(cells)
    }

    func clock(_ seconds: Double) -> String {
        let s = max(Int(seconds), 0)
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))"
    }

    func fit(_ s: String) -> String {
        s.count <= width ? s : String(s.prefix(width - 1)) + "…"
    }

    func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
    func padLeft(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }

    // MARK: terminal

    /// Draws `lines`, replacing the `previous` lines drawn just above the cursor (0: none):
    /// back up to the first of them, rewrite each line, clear whatever is left below.
    public static func draw(_ lines: [String], replacing previous: Int) -> String {
        var s = previous > 0 ? "\u{1B}[\(previous)F" : "\r"
        for l in lines { s += "\u{1B}[2K" + l + "\n" }
        return s + "\u{1B}[J"
    }

    /// Removes the `previous` lines drawn above the cursor (before a log line is written).
    public static func erase(_ previous: Int) -> String {
        previous > 0 ? "\u{1B}[\(previous)F\u{1B}[J" : ""
    }
}

/// Keeps the maxima of the last `seconds` of records (the meters' "max" column).
/// Thread: control.
public struct PeakHold: Sendable {
    public var seconds: Double
    var history: [(t: Double, peakIn: Float?, peakOut: Float, load: Float)] = []

    public init(seconds: Double = 2) {
        self.seconds = seconds
    }

    /// Adds a record and returns the maxima over the window that ends with it.
    public mutating func add(_ r: StatusRecord) -> MeterView.Held {
        history.append((r.seconds, r.peakIn, r.peakOut, r.load))
        history.removeAll { r.seconds - $0.t > seconds }
        var held = MeterView.Held(peakIn: r.peakIn, peakOut: r.peakOut, load: r.load)
        for e in history {
            if let p = e.peakIn { held.peakIn = max(held.peakIn ?? 0, p) }
            held.peakOut = max(held.peakOut, e.peakOut)
            held.load = max(held.load, e.load)
        }
        return held
    }
}

extension StatusRecord {
    /// This record with the lost-sample counts set.
    public func withLost(frames: Int, gaps: Int) -> StatusRecord {
        var r = self
        r.lostFrames = frames
        r.lostGaps = gaps
        return r
    }
}
