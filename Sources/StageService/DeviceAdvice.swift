/// A sound device that could not be opened, as plain values (the ALSA layer fills them in).
public struct DeviceProblem: Sendable, Equatable {
    /// The ALSA device name, e.g. `default`, `hw:CARD=USB,DEV=0`.
    public var device: String
    /// `playback` or `capture`.
    public var role: String
    /// The ALSA function that failed, e.g. `snd_pcm_open`.
    public var function: String
    /// The negative errno it returned.
    public var code: Int32
    /// The error as ALSA words it, with the function and code (kept for engineers).
    public var technical: String
    /// The ids of the sound cards the machine has (`USB`, `Loopback`, ...), in number order.
    public var cards: [String]
    /// Their numbers (`hw:N`), in the same order; nil: 0, 1, 2...
    public var cardNumbers: [Int]?
    /// The wait in force (`--device-wait`): seconds, nil for ever.
    public var deviceWait: Double?

    public init(device: String, role: String, function: String, code: Int32, technical: String, cards: [String],
                cardNumbers: [Int]? = nil, deviceWait: Double?) {
        self.device = device
        self.role = role
        self.function = function
        self.code = code
        self.technical = technical
        self.cards = cards
        self.cardNumbers = cardNumbers
        self.deviceWait = deviceWait
    }
}

/// What to tell a performer whose sound device did not open: what is wrong, in words,
/// and what to do (`stagerack devices`, `--device-wait`, trying `play` without hardware).
/// Pure: the caller passes the cards present. Thread: any.
public enum DeviceAdvice {
    /// The error line (what is wrong, ending with ALSA's own words) and the hints.
    public static func explain(_ p: DeviceProblem) -> (error: String, hints: [String]) {
        let what = "cannot open the \(p.role) device \"\(p.device)\""
        let cardList = p.cards.isEmpty ? "" : " (this machine has \(p.cards.map { "\"\($0)\"" }.joined(separator: ", ")))"
        var hints: [String] = []
        let reason: String
        switch absence(p) {
        case .noCardAtAll:
            reason = "this machine has no sound card (ALSA finds none)"
        case .cardMissing(let card):
            reason = "there is no sound card \"\(card)\"\(cardList)"
        case .unknownName:
            reason = "ALSA has no device of that name\(cardList)"
        case .gone:
            reason = "the device is not there (unplugged, or not up yet)\(cardList)"
        case nil:
            return (otherError(p, what), otherHints(p))
        }
        hints.append(
            "`stagerack devices` lists the sound devices there are: name one with --playback and --capture "
                + "(by card name, hw:CARD=NAME,DEV=0: card numbers change between boots)")
        if p.deviceWait == 0 {
            hints.append(
                "for an interface that comes up later (a USB interface found seconds after boot): "
                    + "--device-wait SECONDS, or --device-wait forever")
        }
        hints.append(
            "to try play without a sound card: --playback null --capture null (silence in, the sound thrown away), "
                + "or record what it plays to a file with alsa-lib's file plugin (README.md: \"Play without a sound card\")")
        return ("\(what): \(reason) [\(p.technical)]", hints)
    }

    /// True when the device is not there (no card, no such name, unplugged), rather than
    /// there and refusing (busy, a rate it does not offer).
    public static func isAbsence(_ p: DeviceProblem) -> Bool { absence(p) != nil }

    enum Absence: Equatable {
        case noCardAtAll, cardMissing(String), unknownName, gone
    }

    /// Which kind of "not there" the error is, or nil when the device is there but failed.
    static func absence(_ p: DeviceProblem) -> Absence? {
        let notThere: [Int32] = [-2, -19, -6]  // ENOENT, ENODEV, ENXIO
        guard p.function == "snd_pcm_open" && notThere.contains(p.code) || p.code == -19 else { return nil }
        if let card = cardNamed(in: p.device) {
            let numbers = p.cardNumbers ?? Array(p.cards.indices)
            let present = p.cards.contains(card) || numbers.contains { "\($0)" == card }
            if p.cards.isEmpty { return .noCardAtAll }
            return present ? .gone : .cardMissing(card)
        }
        if p.cards.isEmpty && (p.device == "default" || p.device == "sysdefault") { return .noCardAtAll }
        return p.code == -2 ? .unknownName : .gone
    }

    /// The card a device name refers to: `hw:CARD=USB,DEV=0` → USB, `plughw:1,0` → 1,
    /// `hw:USB` → USB; nil for a named PCM such as `default` or `null`.
    static func cardNamed(in device: String) -> String? {
        guard let colon = device.firstIndex(of: ":") else { return nil }
        let args = device[device.index(after: colon)...].split(separator: ",").map(String.init)
        if let card = args.first(where: { $0.hasPrefix("CARD=") }) { return String(card.dropFirst(5)) }
        guard let first = args.first, !first.contains("=") else { return nil }
        return first
    }

    static func otherError(_ p: DeviceProblem, _ what: String) -> String {
        switch p.code {
        case -16: return "\(what): it is in use by another program (PulseAudio, PipeWire, another stagerack) [\(p.technical)]"
        case -13, -1:
            return "\(what): no permission (the user must be in the \"audio\" group: sudo adduser $USER audio, then log in again) [\(p.technical)]"
        default: return "\(what): \(p.technical)"
        }
    }

    static func otherHints(_ p: DeviceProblem) -> [String] {
        switch p.code {
        case -16: return ["`fuser -v /dev/snd/*` shows which program holds the card; stop it or use another device"]
        case -13, -1: return []
        default:
            return [
                "`stagerack devices` shows what each device accepts (formats, channels, rates); "
                    + "plughw:CARD=NAME converts what the card does not offer"
            ]
        }
    }
}
