import StageCore
import StageRemote

/// What an OSC message asks for.
public enum OSCRequest: Sendable, Equatable {
    /// A command for the control thread.
    case command(RemoteCommand)
    /// Send changes to the sender (at `port`, else the port it sent from), starting with
    /// the whole state.
    case subscribe(port: Int?)
    case unsubscribe
    /// Send the whole state back once.
    case state
}

/// The remote's OSC address space (racks/README.md § Remote control: OSC), both ways:
/// incoming messages to requests, and the state and its changes to outgoing messages.
/// Thread: the OSC server's.
public enum OSCAddressSpace {
    public static let prefix = "/stagerack/"

    /// The request `p` makes, resolved against `view`, or the error to reply.
    public static func request(_ p: OSCPacket, view: RemoteView) -> Result<OSCRequest, RemoteError> {
        guard p.path.hasPrefix(prefix) else { return .failure(RemoteError("\(p.path): not a StageRack address (they start with \(prefix))")) }
        let parts = p.path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let args = p.arguments
        func one(_ what: String) -> Result<Float, RemoteError> {
            guard args.count == 1, let n = args[0].number else {
                return .failure(RemoteError("\(p.path) takes one \(what) argument"))
            }
            return .success(n)
        }
        func none(_ r: OSCRequest) -> Result<OSCRequest, RemoteError> {
            args.isEmpty ? .success(r) : .failure(RemoteError("\(p.path) takes no arguments"))
        }
        switch (parts.first ?? "", parts.count) {
        case ("param", 3):
            return one("number (f)").flatMap { v in view.command(unit: parts[1], parameter: parts[2], value: v).map { .command($0) } }
        case ("bypass", 2):
            return one("number (i: 1 bypassed, 0 in use)").flatMap { v in
                view.command(unit: parts[1], parameter: "bypass", value: v >= 0.5 ? 1 : 0).map { .command($0) }
            }
        case ("song", 1):
            return one("song number (i, 1 = the first)").flatMap { v in
                guard v == v.rounded(), abs(v) < 1e6 else { return .failure(RemoteError("\(p.path): the song number must be whole")) }
                return view.songCommand(Int(v) - 1).map { .command($0) }
            }
        case ("next", 1): return none(.command(RemoteCommand(kind: .next)))
        case ("previous", 1): return none(.command(RemoteCommand(kind: .previous)))
        case ("panic", 1): return none(.command(RemoteCommand(kind: .panic)))
        case ("talk", 1):
            return one("number (i: 1 Talk on, 0 off)").flatMap { v in .success(.command(RemoteCommand(kind: .talk, value: v >= 0.5 ? 1 : 0))) }
        case ("transpose", 2) where parts[1] == "up" || parts[1] == "down":
            return none(.command(RemoteCommand(kind: .transpose, value: parts[1] == "up" ? 1 : -1)))
        case ("section", 2) where parts[1] == "next":
            return none(.command(RemoteCommand(kind: .section, value: Float(SectionJump.next.rawValue))))
        case ("section", 2) where parts[1] == "repeat":
            return none(.command(RemoteCommand(kind: .section, value: Float(SectionJump.repeatCurrent.rawValue))))
        case ("perform", 2):
            // /stagerack/perform/N f: performance control N (1 = the first, as the page numbers
            // songs) to a position (a fader's 0…1, a toggle's 0 or 1, a choice's index).
            guard let n = Int(parts[1]), (1...1000).contains(n) else {
                return .failure(RemoteError("\(p.path): the control number must be whole, 1 = the first"))
            }
            return one("position (f)").flatMap { v in view.performCommand(n - 1, position: Double(v)).map { .command($0) } }
        case ("tempo", 1):
            return one("tempo in BPM (f, 20…400)").flatMap { bpm in
                guard (20...400).contains(bpm) else { return .failure(RemoteError("\(p.path): the tempo must be 20…400 BPM")) }
                return .success(.command(RemoteCommand(kind: .tempo, value: bpm)))
            }
        case ("command", 2):
            guard args.count == 1, case .string(let name) = args[0] else {
                return .failure(RemoteError("\(p.path) takes one string (s): the command, e.g. record"))
            }
            return view.unitCommand(unit: parts[1], name: name).map { .command($0) }
        case ("snapshot", 1):
            guard args.count == 1, case .string(let name) = args[0] else { return .failure(RemoteError("\(p.path) takes one string (s): the snapshot's name")) }
            return view.snapshotCommand(name).map { .command($0) }
        case ("subscribe", 1):
            if args.isEmpty { return .success(.subscribe(port: nil)) }
            guard args.count == 1, let n = args[0].number, n == n.rounded(), (1...65535).contains(n) else {
                return .failure(RemoteError("\(p.path) takes nothing, or the port to send to (i, 1…65535)"))
            }
            return .success(.subscribe(port: Int(n)))
        case ("unsubscribe", 1): return none(.unsubscribe)
        case ("state", 1): return none(.state)
        default:
            return .failure(RemoteError("\(p.path): unknown address; see racks/README.md, \"Remote control\""))
        }
    }

    /// The whole state as messages: the song, the snapshot, every parameter and bypass.
    public static func state(_ view: RemoteView) -> [OSCPacket] {
        var out = [song(view)]
        if let s = view.snapshot { out.append(OSCPacket(path: prefix + "snapshot", arguments: [.string(s)])) }
        for u in view.state.units {
            if u.canBypass { out.append(bypass(u)) }
            for p in u.parameters { out.append(parameter(u, p)) }
        }
        return out
    }

    /// What changed from `old` to `new` (everything when the rack changed).
    public static func changes(from old: RemoteView, to new: RemoteView) -> [OSCPacket] {
        guard old.state.generation == new.state.generation, old.song == new.song else { return state(new) }
        var out: [OSCPacket] = []
        if let s = new.snapshot, s != old.snapshot { out.append(OSCPacket(path: prefix + "snapshot", arguments: [.string(s)])) }
        for (u, unit) in new.state.units.enumerated() where u < old.state.units.count {
            let before = old.state.units[u]
            if unit.canBypass, unit.bypass != before.bypass { out.append(bypass(unit)) }
            for (i, p) in unit.parameters.enumerated() where i < before.parameters.count && p.value != before.parameters[i].value {
                out.append(parameter(unit, p))
            }
        }
        return out
    }

    static func song(_ view: RemoteView) -> OSCPacket {
        let name = view.songs.indices.contains(view.song) ? view.songs[view.song] : view.rackName
        return OSCPacket(path: prefix + "song", arguments: [.int(Int32(view.song + 1)), .string(name)])
    }

    static func bypass(_ u: ParameterState.Unit) -> OSCPacket {
        OSCPacket(path: prefix + "bypass/\(u.id)", arguments: [.int(u.bypass >= 0.5 ? 1 : 0)])
    }

    static func parameter(_ u: ParameterState.Unit, _ p: ParameterState.Parameter) -> OSCPacket {
        OSCPacket(path: prefix + "param/\(u.id)/\(p.spec.id)", arguments: [.float(p.value)])
    }

    /// A unit's readout as `play --status` shows it (`tuner: A4 +0.3 cents (440.08 Hz)`).
    public static func readout(_ text: String) -> OSCPacket {
        OSCPacket(path: prefix + "readout", arguments: [.string(text)])
    }

    /// `/stagerack/transpose i`: the song's transpose in semitones, sent when it changes.
    public static func transpose(_ semitones: Int) -> OSCPacket {
        OSCPacket(path: prefix + "transpose", arguments: [.int(Int32(semitones))])
    }

    public static func error(_ e: RemoteError) -> OSCPacket {
        OSCPacket(path: prefix + "error", arguments: [.string(e.message)])
    }
}
