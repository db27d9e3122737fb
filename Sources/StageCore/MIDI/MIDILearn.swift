/// MIDI learn: watches the messages that follow "move a control now" and works out what
/// the control is (a CC, a 14-bit pair, an NRPN/RPN, a key), how it sends (absolute, one
/// of the relative encodings, a button) and the `midi.map` entry for it.
///
/// The first message that can be a control picks the control; its later messages refine
/// the guess until `isSettled`. Pure logic, no I/O. Thread: one at a time.
public struct MIDILearn: Sendable {
    /// Quiet time after the control's last message that ends the learning.
    public static let settleSeconds = 0.6
    /// Longest learning after the first message.
    public static let maximumSeconds = 3.0

    public private(set) var source: MIDIControlSource?
    /// 0-based channel of the control.
    public private(set) var channel = 0
    public private(set) var values: [Int] = []
    public private(set) var sawLSB = false
    var firstSeconds = 0.0
    var lastSeconds = 0.0
    // NRPN/RPN selection seen per channel before data came.
    var nrpn = Array(repeating: -1, count: 16)
    var rpn = Array(repeating: -1, count: 16)
    var selected = Array(repeating: UInt8(0), count: 16)

    public init() {}

    /// True once a control has been picked.
    public var hasControl: Bool { source != nil }

    /// Takes one message at `seconds`. Returns true when it belongs to the learned control.
    @discardableResult
    public mutating func feed(_ m: MIDIMessage, seconds: Double) -> Bool {
        let ch = m.channel
        switch m.kind {
        case .noteOn where m.isNoteOn:
            if source == nil { pick(.note(m.note), ch, seconds) }
            guard source == .note(m.note), ch == channel else { return false }
            values.append(127)
            lastSeconds = seconds
            return true
        case .noteOff, .noteOn:
            guard source == .note(m.note), ch == channel else { return false }
            values.append(0)
            lastSeconds = seconds
            return true
        case .controlChange:
            return controlChange(m, seconds: seconds)
        default:
            return false
        }
    }

    mutating func controlChange(_ m: MIDIMessage, seconds: Double) -> Bool {
        let ch = m.channel
        let cc = m.controller
        let v = m.value
        switch cc {
        case 99, 98:
            let old = max(nrpn[ch], 0)
            nrpn[ch] = cc == 99 ? v << 7 | (old & 127) : (old & ~127) | v
            selected[ch] = 1
            return isParameterControl(ch)
        case 101, 100:
            let old = max(rpn[ch], 0)
            rpn[ch] = cc == 101 ? v << 7 | (old & 127) : (old & ~127) | v
            selected[ch] = rpn[ch] == 16383 ? 0 : 2
            return isParameterControl(ch)
        case 6, 38, 96, 97:
            if selected[ch] != 0 {
                let s: MIDIControlSource = selected[ch] == 1 ? .nrpn(nrpn[ch]) : .rpn(rpn[ch])
                if source == nil { pick(s, ch, seconds) }
                guard source == s, ch == channel else { return false }
                lastSeconds = seconds
                if cc == 38 { sawLSB = true } else if cc == 6 { values.append(v) }
                return true
            }
        default:
            break
        }
        if case .cc(let n) = source, ch == channel, n < 32, cc == n + 32 {
            sawLSB = true
            lastSeconds = seconds
            return true
        }
        if source == nil { pick(.cc(cc), ch, seconds) }
        guard source == .cc(cc), ch == channel else { return false }
        values.append(v)
        lastSeconds = seconds
        return true
    }

    func isParameterControl(_ ch: Int) -> Bool {
        switch source {
        case .nrpn?, .rpn?: return ch == channel
        default: return false
        }
    }

    mutating func pick(_ s: MIDIControlSource, _ ch: Int, _ seconds: Double) {
        source = s
        channel = ch
        firstSeconds = seconds
        lastSeconds = seconds
    }

    /// True when learning is done: the control has been quiet for `settleSeconds`, or
    /// `maximumSeconds` passed since it first moved.
    public func isSettled(at seconds: Double) -> Bool {
        guard source != nil else { return false }
        return seconds - lastSeconds >= Self.settleSeconds || seconds - firstSeconds >= Self.maximumSeconds
    }

    /// What was learned, as a mapping to `target` whose parameter is `spec`; nil before
    /// any control moved. `notes` say what could not be told apart.
    public func mapping(target: String, spec: ParameterSpec) -> (MIDIMappingDescription, notes: [String])? {
        guard let source else { return nil }
        var d = MIDIMappingDescription(source: source, channel: channel + 1, target: target)
        var notes: [String] = []
        switch source {
        case .note, .keys:
            d.button = spec.unit == .boolean ? .toggle : .momentary
        case .nrpn, .rpn:
            d.hires = sawLSB
        case .cc(let n):
            d.hires = sawLSB && n < 32
            if !values.isEmpty && values.allSatisfy({ $0 == 0 || $0 == 127 }) {
                d.button = spec.unit == .boolean ? .toggle : .momentary
            } else if !d.hires, let (mode, note) = Self.relativeEncoding(values) {
                d.mode = mode
                if let note { notes.append(note) }
            }
        }
        return (d, notes)
    }

    /// Encoders send steps, so the same value repeats; absolute knobs send only changes.
    static func relativeEncoding(_ values: [Int]) -> (MIDIControlMode, String?)? {
        var repeats = 0
        for (a, b) in zip(values, values.dropFirst()) where a == b { repeats += 1 }
        guard repeats >= 2 else { return nil }
        let up = values.contains { (1...15).contains($0) }
        let twosDown = values.contains { (113...127).contains($0) }
        let offsetDown = values.contains { (49...63).contains($0) }
        let high = values.contains { (65...79).contains($0) }
        guard values.allSatisfy({ (1...15).contains($0) || (49...79).contains($0) || (113...127).contains($0) }) else {
            return nil
        }
        if twosDown { return (.relativeTwos, nil) }
        if offsetDown { return (.relativeOffset, nil) }
        if high && up { return (.relativeSignbit, nil) }
        let ask = "turn the encoder both ways while learning to tell its encoding for sure"
        if up { return (.relativeTwos, ask) }
        return (.relativeOffset, ask)
    }
}

extension MIDIMappingDescription {
    /// The entry as rack-file text, e.g. `{ "cc": 7, "channel": 1, "to": "mix.gain2" }`.
    public var jsonText: String {
        var parts = ["\"\(source.key)\": \(source.number)"]
        if case .keys(let r) = source { parts = ["\"keys\": \"\(r.lowerBound)..\(r.upperBound)\""] }
        if hires != (source.key == "nrpn" || source.key == "rpn") { parts.append("\"hires\": \(hires)") }
        if let channel { parts.append("\"channel\": \(channel)") }
        if let target { parts.append("\"to\": \"\(target)\"") }
        if let action { parts.append("\"action\": \"\(action.rawValue)\"") }
        if let min { parts.append("\"min\": \(formatNumber(min))") }
        if let max { parts.append("\"max\": \(formatNumber(max))") }
        if mode != .absolute { parts.append("\"mode\": \"\(mode.rawValue)\"") }
        if sensitivity != 1 { parts.append("\"sensitivity\": \(formatNumber(sensitivity))") }
        if let takeover { parts.append("\"takeover\": \"\(takeover.rawValue)\"") }
        if let button { parts.append("\"button\": \"\(button.rawValue)\"") }
        if feedback { parts.append("\"feedback\": true") }
        return "{ " + parts.joined(separator: ", ") + " }"
    }
}
