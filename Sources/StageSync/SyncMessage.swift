import StageCore
import StageOSC

/// One message between a band's boxes: what the leader says (a song change at a beat, its
/// whole state, a snapshot recall) or a follower's answer. On the wire it is one OSC message,
/// `/stagerack/sync` with two strings: the payload below (lines of `key value`) and the
/// HMAC-SHA256 of the payload's bytes under the band's key, in hex (`SyncKey`). The payload:
///
///     stagerack-sync 1
///     session 9f3a0c1d2e4b5a69      the sender's run (random at each start)
///     seq 17                        counts up by one for every message of the run
///     kind song                     song | state | snapshot | transpose | ack
///     song 2                        the setlist entry (0-based)
///     beat 132                      the leader's Link beat the change happens at (absent:
///                                   on receipt; state: its beat when sent)
///     ahead 3.46                    beats from sending to the change (a follower's own beats
///                                   differ from the leader's in magnitude, not in phase)
///     bar 4                         the beats of the bar the change is on (Link's quantum)
///     section Chorus                the leader's section (state), optional
///     snapshot Solo                 a snapshot's name (snapshot, state), optional
///     transpose -2                  the song's transpose in all, semitones (transpose,
///                                   state), optional
///     jump next                     a section jump: next | repeat (section)
///     at 32                         the song beat of the bar line it lands on (section,
///                                   snapshot: absent, at once)
///
/// Thread: any (a value).
public struct SyncMessage: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Switch to `song` at `beat` (the next bar line on the shared Link timeline).
        case song
        /// The leader's whole state, sent every second: a follower that missed a message or
        /// restarted catches up from it.
        case state
        /// Recall snapshot `snapshot` of the current song: on the bar line at song beat `at`
        /// (a leader's recall held for its next bar line), or at once without `at`.
        case snapshot
        /// The song's transpose is now `transpose` semitones in all (its own counted): a
        /// follower playing the same song takes it at once.
        case transpose
        /// A section jump (`jump`) armed for the bar line at song beat `at`: a follower
        /// playing the same song arms the same jump for the same bar line.
        case section
        /// A follower's answer to the leader (its own session and sequence; `song` playing).
        case ack
    }

    /// The OSC address every sync message goes to.
    public static let path = "/stagerack/sync"
    /// The first line: the format and its version.
    public static let header = "stagerack-sync 1"
    /// The longest payload taken (names are short; anything longer is refused unread).
    public static let maxPayload = 1024

    public var session: String
    public var sequence: UInt64
    public var kind: Kind
    public var song: Int
    public var beat: Double?
    public var ahead: Double?
    public var bar: Double?
    public var section: String?
    public var snapshot: String?
    public var transpose: Int?
    /// A section jump's way, and the song beat of its bar line (`SongClock`).
    public var jump: SectionJump?
    public var at: Int?

    public init(
        session: String, sequence: UInt64, kind: Kind, song: Int, beat: Double? = nil, section: String? = nil, snapshot: String? = nil,
        transpose: Int? = nil
    ) {
        self.session = session
        self.sequence = sequence
        self.kind = kind
        self.song = song
        self.beat = beat
        self.section = section
        self.snapshot = snapshot
        self.transpose = transpose
    }

    /// The payload text (what is signed).
    public var payload: String {
        var lines = [Self.header, "session \(session)", "seq \(sequence)", "kind \(kind.rawValue)", "song \(song)"]
        if let beat { lines.append("beat \(beat)") }
        if let ahead { lines.append("ahead \(ahead)") }
        if let bar { lines.append("bar \(bar)") }
        if let section { lines.append("section \(Self.oneLine(section))") }
        if let snapshot { lines.append("snapshot \(Self.oneLine(snapshot))") }
        if let transpose { lines.append("transpose \(transpose)") }
        if let jump { lines.append("jump \(jump == .next ? "next" : "repeat")") }
        if let at { lines.append("at \(at)") }
        return lines.joined(separator: "\n")
    }

    static func oneLine(_ s: String) -> String { String(s.map { $0.isNewline ? " " : $0 }) }

    /// The OSC datagram: the payload and its signature under `key`.
    public func datagram(key: SyncKey) -> [UInt8] {
        let text = payload
        return OSCPacket(path: Self.path, arguments: [.string(text), .string(SyncKey.hex(key.signature(Array(text.utf8))))]).encoded()
    }

    /// Reads a payload; the error says what is wrong with it.
    public static func parse(_ text: String) -> Result<SyncMessage, SyncError> {
        guard text.utf8.count <= maxPayload else { return .failure(SyncError("payload too long (\(text.utf8.count) bytes)")) }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.first == header else { return .failure(SyncError("not a sync message of version 1")) }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            // "\r\n" is one Character in Swift: a split on "\n" keeps it (and \r, U+2028) inside.
            guard !line.contains(where: \.isNewline) else { return .failure(SyncError("a line break inside a line")) }
            guard let space = line.firstIndex(of: " ") else { return .failure(SyncError("a line without a value: \"\(line.prefix(40))\"")) }
            let key = String(line[..<space])
            guard fields[key] == nil else { return .failure(SyncError("\(key) given twice")) }
            fields[key] = String(line[line.index(after: space)...])
        }
        guard let session = fields["session"], !session.isEmpty, session.count <= 64 else { return .failure(SyncError("no session")) }
        guard let seq = fields["seq"].flatMap({ UInt64($0) }) else { return .failure(SyncError("no sequence number")) }
        guard let kind = fields["kind"].flatMap({ Kind(rawValue: $0) }) else { return .failure(SyncError("unknown kind \"\(fields["kind"] ?? "")\"")) }
        guard let song = fields["song"].flatMap({ Int($0) }), (0...9999).contains(song) else { return .failure(SyncError("no song")) }
        var m = SyncMessage(session: session, sequence: seq, kind: kind, song: song)
        let numbers: [(String, WritableKeyPath<SyncMessage, Double?>)] = [("beat", \.beat), ("ahead", \.ahead), ("bar", \.bar)]
        for (name, path) in numbers {
            guard let text = fields[name] else { continue }
            guard let x = Double(text), x.isFinite else { return .failure(SyncError("\(name) is not a number")) }
            m[keyPath: path] = x
        }
        if let bar = m.bar, !(1...64).contains(bar) { return .failure(SyncError("bar is not 1…64 beats")) }
        if let ahead = m.ahead, !(0...256).contains(ahead) { return .failure(SyncError("ahead is not 0…256 beats")) }
        m.section = fields["section"]
        m.snapshot = fields["snapshot"]
        if let t = fields["transpose"] {
            guard let semitones = Int(t), (-48...48).contains(semitones) else { return .failure(SyncError("transpose is not -48…48 semitones")) }
            m.transpose = semitones
        }
        if let j = fields["jump"] {
            switch j {
            case "next": m.jump = .next
            case "repeat": m.jump = .repeatCurrent
            default: return .failure(SyncError("jump is not next or repeat"))
            }
        }
        if let a = fields["at"] {
            guard let beat = Int(a), (-1000...1_000_000).contains(beat) else { return .failure(SyncError("at is not a song beat")) }
            m.at = beat
        }
        if m.kind == .section && (m.jump == nil || m.at == nil) { return .failure(SyncError("a section message without jump and at")) }
        let known: Set<String> = ["session", "seq", "kind", "song", "beat", "ahead", "bar", "section", "snapshot", "transpose", "jump", "at"]
        if let unknown = fields.keys.first(where: { !known.contains($0) }) { return .failure(SyncError("unknown field \(unknown)")) }
        return .success(m)
    }

    /// A datagram checked in order: OSC, the address, the two strings, the signature under
    /// `key`, the payload. The error says which check refused it (the `class` names the
    /// class for the refusal log).
    public static func open(_ bytes: UnsafeMutableRawBufferPointer, key: SyncKey) -> Result<SyncMessage, SyncRefusal> {
        let packet: OSCPacket
        switch OSCPacket.decode(bytes) {
        case .success(let p): packet = p
        case .failure(let e): return .failure(SyncRefusal(class: "garbage", text: "not a sync message: \(e)"))
        }
        guard packet.path == path else { return .failure(SyncRefusal(class: "address", text: "OSC to \(packet.path.prefix(60)): only \(path) is taken here")) }
        guard packet.arguments.count == 2, case .string(let payload) = packet.arguments[0] else {
            return .failure(SyncRefusal(class: "unsigned", text: "unsigned message (a payload and its signature expected)"))
        }
        guard case .string(let hex) = packet.arguments[1], let signature = SyncKey.unhex(hex) else {
            return .failure(SyncRefusal(class: "unsigned", text: "unsigned message (no signature)"))
        }
        guard key.verifies(Array(payload.utf8), signature: signature) else {
            return .failure(SyncRefusal(class: "signature", text: "wrong signature (another key, or the message was changed on the way)"))
        }
        switch parse(payload) {
        case .success(let m): return .success(m)
        case .failure(let e): return .failure(SyncRefusal(class: "malformed", text: "signed but malformed: \(e)"))
        }
    }
}

/// Why a datagram on the sync port was refused: its class (for the rate-limited log) and
/// what was wrong. Thread: any (a value).
public struct SyncRefusal: Error, Sendable, Equatable {
    public var `class`: String
    public var text: String
    public init(class: String, text: String) {
        self.class = `class`
        self.text = text
    }
}
