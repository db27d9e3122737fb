import StageCore

/// What a page sends over its WebSocket (JSON objects with a `type`; README "Control
/// from a phone"): log in, then commands.
public enum WebRequest: Sendable, Equatable {
    case login(pin: String)
    case resume(token: String)
    case command(RemoteCommand)
    /// Meters on or off for this client (10–20 a second).
    case meters(Bool)
    /// Save the values (and learned mappings) into the rack file, or as snapshot `name`.
    case save(snapshot: String?)
}

/// The page's JSON both ways. Decoding checks everything (a request that is not an object
/// with a known `type` and the right fields is an error reply); encoding writes the state,
/// its changes and the meters. Thread: the web server's.
public enum WebProtocol {
    /// The request in `text`, resolved against `view`, or the error to reply.
    public static func request(_ text: String, view: RemoteView) -> Result<WebRequest, RemoteError> {
        let node: JSONNode
        do {
            node = try JSONParser.parse(text)
        } catch {
            return .failure(RemoteError("malformed JSON: \(error.message)"))
        }
        guard node.members != nil, let type = node["type"]?.value.string else {
            return .failure(RemoteError("a message is an object with a \"type\""))
        }
        func string(_ key: String) -> Result<String, RemoteError> {
            guard let s = node[key]?.value.string else { return .failure(RemoteError("\(type): \"\(key)\" must be a string")) }
            return .success(s)
        }
        func number(_ key: String) -> Result<Double, RemoteError> {
            guard let n = node[key]?.value.number, n.isFinite else { return .failure(RemoteError("\(type): \"\(key)\" must be a number")) }
            return .success(n)
        }
        switch type {
        case "login": return string("pin").map { .login(pin: $0) }
        case "resume": return string("token").map { .resume(token: $0) }
        case "meters":
            guard let on = node["on"]?.value.bool else { return .failure(RemoteError("meters: \"on\" must be true or false")) }
            return .success(.meters(on))
        case "set":
            return string("unit").flatMap { unit in
                string("param").flatMap { param in
                    number("value").flatMap { v in view.command(unit: unit, parameter: param, value: Float(v)).map { .command($0) } }
                }
            }
        case "bypass":
            guard let on = node["on"]?.value.bool else { return .failure(RemoteError("bypass: \"on\" must be true or false")) }
            return string("unit").flatMap { unit in
                view.command(unit: unit, parameter: "bypass", value: on ? 1 : 0).map { .command($0) }
            }
        case "song":
            return number("number").flatMap { n in
                guard n == n.rounded(), abs(n) < 1e6 else { return .failure(RemoteError("song: \"number\" must be whole")) }
                return view.songCommand(Int(n) - 1).map { .command($0) }
            }
        case "next": return .success(.command(RemoteCommand(kind: .next)))
        case "previous": return .success(.command(RemoteCommand(kind: .previous)))
        case "panic": return .success(.command(RemoteCommand(kind: .panic)))
        case "talk":
            guard let on = node["on"]?.value.bool else { return .failure(RemoteError("talk: \"on\" must be true or false")) }
            return .success(.command(RemoteCommand(kind: .talk, value: on ? 1 : 0)))
        case "transpose":
            // {"type":"transpose","go":"up"} or "down": at the next section or at once (SongTranspose).
            switch node["go"]?.value.string {
            case "up": return .success(.command(RemoteCommand(kind: .transpose, value: 1)))
            case "down": return .success(.command(RemoteCommand(kind: .transpose, value: -1)))
            default: return .failure(RemoteError("transpose: \"go\" must be \"up\" or \"down\""))
            }
        case "section":
            // {"type":"section","go":"next"} or "repeat": from the next bar line (SongClock).
            switch node["go"]?.value.string {
            case "next": return .success(.command(RemoteCommand(kind: .section, value: Float(SectionJump.next.rawValue))))
            case "repeat": return .success(.command(RemoteCommand(kind: .section, value: Float(SectionJump.repeatCurrent.rawValue))))
            default: return .failure(RemoteError("section: \"go\" must be \"next\" or \"repeat\""))
            }
        case "soundcheck": return soundcheckRequest(node, view: view)
        case "snapshot": return string("name").flatMap { view.snapshotCommand($0).map { .command($0) } }
        case "learn":
            return string("unit").flatMap { unit in
                string("param").flatMap { param in
                    view.command(unit: unit, parameter: param, value: 0).map { c in
                        var l = c
                        l.kind = .learn
                        return .command(l)
                    }
                }
            }
        case "perform":
            return number("control").flatMap { n in
                guard n == n.rounded(), n >= 0, n < 1e6 else { return .failure(RemoteError("perform: \"control\" must be a whole number ≥ 0")) }
                return number("value").flatMap { v in view.performCommand(Int(n), position: v).map { .command($0) } }
            }
        case "command":
            return string("unit").flatMap { unit in
                string("command").flatMap { name in view.unitCommand(unit: unit, name: name).map { .command($0) } }
            }
        case "tempo":
            return number("bpm").flatMap { bpm in
                guard (20...400).contains(bpm) else { return .failure(RemoteError("tempo: \"bpm\" must be 20…400")) }
                return .success(.command(RemoteCommand(kind: .tempo, value: Float(bpm))))
            }
        case "learnCancel": return .success(.command(RemoteCommand(kind: .learnCancel)))
        case "unlearn":
            return number("index").flatMap { n in
                guard n == n.rounded(), n >= 0, n < 1e6 else { return .failure(RemoteError("unlearn: \"index\" must be a whole number ≥ 0")) }
                return .success(.command(RemoteCommand(kind: .unlearn, generation: view.state.generation, index: Int(n))))
            }
        case "save":
            guard let name = node["snapshot"] else { return .success(.save(snapshot: nil)) }
            guard let text = name.value.string else { return .failure(RemoteError("save: \"snapshot\" must be a string")) }
            return snapshotName(text).map { .save(snapshot: $0) }
        default: return .failure(RemoteError("unknown type \"\(type)\""))
        }
    }

    /// A new snapshot's name: 1…64 characters, no control characters, not only spaces.
    static func snapshotName(_ text: String) -> Result<String, RemoteError> {
        let trimmed = String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        guard !trimmed.isEmpty, trimmed.count <= RemoteHub.maxSnapshotName,
            !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return .failure(RemoteError("save: a snapshot name is 1…\(RemoteHub.maxSnapshotName) characters, no control characters")) }
        return .success(trimmed)
    }

    // MARK: - out

    /// The whole state: rack, songs, snapshots, every unit with its parameters.
    public static func state(_ v: RemoteView) -> String {
        var units: [String] = []
        for u in v.state.units {
            let params = u.parameters.map { p in
                let s = p.spec
                var fields = [
                    "\"id\":\(quote(s.id))", "\"name\":\(quote(s.name))", "\"unit\":\(quote(s.unit.rawValue))",
                    "\"min\":\(number(s.range.lowerBound))", "\"max\":\(number(s.range.upperBound))",
                    "\"value\":\(number(p.value))", "\"text\":\(quote(s.format(p.value)))",
                ]
                if !s.choices.isEmpty { fields.append("\"choices\":[\(s.choices.map(quote).joined(separator: ","))]") }
                return "{\(fields.joined(separator: ","))}"
            }
            units.append(
                "{\"id\":\(quote(u.id)),\"type\":\(quote(u.type)),\"canBypass\":\(u.canBypass),\"bypass\":\(u.bypass >= 0.5),\"params\":[\(params.joined(separator: ","))]}")
        }
        return "{\"type\":\"state\",\"rack\":\(quote(v.rackName)),\"song\":\(v.song + 1),\"songs\":[\(v.songs.map(quote).joined(separator: ","))],"
            + "\"talk\":\(v.talk),\"snapshot\":\(v.snapshot.map(quote) ?? "null"),\"snapshots\":[\(v.snapshots.map(quote).joined(separator: ","))],"
            + "\"units\":[\(units.joined(separator: ","))],\(mappingFields(v)),\(performerFields(v)),\"soundcheck\":\(soundcheckFields(v.soundcheck))}"
    }

    /// The performer view's part of the state: its controls (label, kind, position 0…1 or
    /// index, the first target's value as text, the targets), the tempo and the key.
    static func performerFields(_ v: RemoteView) -> String {
        let controls = v.performance.map { c in
            let r = c.reading(v.state)
            var fields = [
                "\"label\":\(quote(c.label))", "\"kind\":\(quote(c.kind.rawValue))", "\"position\":\(number(r.position))",
                "\"text\":\(quote(r.text))", "\"targets\":[\(c.targets.map { quote(v.state.name($0.address)) }.joined(separator: ","))]",
            ]
            if c.kind == .choice { fields.append("\"choices\":[\(c.targets[0].spec.choices.map(quote).joined(separator: ","))]") }
            return "{\(fields.joined(separator: ","))}"
        }
        let transport = v.transport.map { t in "{\"unit\":\(quote(t.unit)),\"commands\":[\(t.commands.map(quote).joined(separator: ","))]}" }
        return "\"performance\":[\(controls.joined(separator: ","))],\"transport\":[\(transport.joined(separator: ","))],\"tempo\":\(number(Float(v.tempo))),\"key\":\(v.key.map(quote) ?? "null")"
    }

    /// The mappings, the control being learned and the last notice (learn, save).
    static func mappingFields(_ v: RemoteView) -> String {
        let list = v.mappings.map { m in
            "{\"target\":\(quote(m.target)),\"text\":\(quote(m.text)),\"learned\":\(m.learned.map(String.init) ?? "null")}"
        }
        return "\"mappings\":[\(list.joined(separator: ","))],\"learning\":\(v.learning.map(quote) ?? "null"),\"notice\":\(v.notice.map(quote) ?? "null")"
    }

    /// What changed from `old` to `new`: the whole state when the rack or song changed,
    /// else one `change` message per value (and the snapshot).
    public static func changes(from old: RemoteView, to new: RemoteView) -> [String] {
        guard old.state.generation == new.state.generation, old.song == new.song else { return [state(new)] + lyrics(new) }
        var out: [String] = []
        if new.mappings != old.mappings || new.learning != old.learning || new.notice != old.notice {
            out.append("{\"type\":\"mappings\",\(mappingFields(new))}")
        }
        if new.soundcheck != old.soundcheck { out.append("{\"type\":\"soundcheck\",\"soundcheck\":\(soundcheckFields(new.soundcheck))}") }
        if new.talk != old.talk { out.append("{\"type\":\"talk\",\"on\":\(new.talk)}") }
        if new.tempo != old.tempo { out.append("{\"type\":\"tempo\",\"bpm\":\(number(Float(new.tempo)))}") }
        for (i, c) in new.performance.enumerated() where i < old.performance.count {
            let r = c.reading(new.state)
            let before = old.performance[i].reading(old.state)
            if r.position != before.position || r.text != before.text {
                out.append("{\"type\":\"perform\",\"control\":\(i),\"position\":\(number(r.position)),\"text\":\(quote(r.text))}")
            }
        }
        if new.snapshot != old.snapshot { out.append("{\"type\":\"snapshot\",\"name\":\(new.snapshot.map(quote) ?? "null")}") }
        for (u, unit) in new.state.units.enumerated() where u < old.state.units.count {
            let before = old.state.units[u]
            if unit.bypass != before.bypass {
                out.append("{\"type\":\"bypass\",\"unit\":\(quote(unit.id)),\"on\":\(unit.bypass >= 0.5)}")
            }
            for (i, p) in unit.parameters.enumerated() where i < before.parameters.count && p.value != before.parameters[i].value {
                out.append(
                    "{\"type\":\"change\",\"unit\":\(quote(unit.id)),\"param\":\(quote(p.spec.id)),\"value\":\(number(p.value)),\"text\":\(quote(p.spec.format(p.value)))}")
            }
        }
        return out
    }

    public static func meters(_ m: RemoteMeters) -> String {
        let gr = m.gainReduction.map { "{\"unit\":\(quote($0.unit)),\"dB\":\(number($0.dB))}" }.joined(separator: ",")
        let readouts = m.readouts.map { r in
            let values = r.values.map { "\(quote($0.name)):\(number($0.value))" }.joined(separator: ",")
            return "{\"unit\":\(quote(r.unit)),\"text\":\(quote(r.text)),\"values\":{\(values)}}"
        }.joined(separator: ",")
        return "{\"type\":\"meters\",\"in\":\(m.peakIn.map(number) ?? "null"),\"out\":\(number(m.peakOut)),\"load\":\(number(m.load)),"
            + "\"xruns\":\(m.xruns),\(tempoFields(m))\(linkFields(m))\(sectionFields(m))\"gr\":[\(gr)],\"readouts\":[\(readouts)],\"midi\":[\(m.lastMIDI.map(quote).joined(separator: ","))]}"
    }

    /// `"section":"verse","nextSection":"chorus","sectionIndex":1,` when the song has
    /// sections, else nothing; then `"transpose":2,` when the song can be transposed,
    /// `"talk":true,` (the engine's Talk) when known, and `"trackTime":12.34,` while the
    /// song's track plays.
    static func sectionFields(_ m: RemoteMeters) -> String {
        let transpose = (m.transpose.map { "\"transpose\":\($0)," } ?? "") + (m.talk.map { "\"talk\":\($0)," } ?? "")
            + (m.trackSeconds.map { "\"trackTime\":\(number(Float($0)))," } ?? "")
        guard m.section != nil || m.nextSection != nil else { return transpose }
        return "\"section\":\(m.section.map(quote) ?? "null"),\"nextSection\":\(m.nextSection.map(quote) ?? "null"),"
            + "\"sectionIndex\":\(m.sectionIndex.map(String.init) ?? "null")," + transpose
    }

    /// `"tempo":96,"tempoSource":"tap",` when the tempo is known, else nothing.
    static func tempoFields(_ m: RemoteMeters) -> String {
        guard let bpm = m.tempo else { return "" }
        return "\"tempo\":\(number(Float(bpm))),\"tempoSource\":\(m.tempoSource.map(quote) ?? "null"),"
    }

    /// `"link":{"peers":1,"tempo":120,"beat":12.5,"micros":98765},` with `play --link`, else
    /// nothing.
    static func linkFields(_ m: RemoteMeters) -> String {
        guard let l = m.link, l.tempo.isFinite, l.beat.isFinite else { return "" }
        return "\"link\":{\"peers\":\(l.peers),\"tempo\":\(l.tempo),\"beat\":\(l.beat),\"micros\":\(l.micros)},"
    }

    public static func hello(write: Bool, viewers: Bool) -> String {
        "{\"type\":\"hello\",\"write\":\(write),\"viewers\":\(viewers)}"
    }

    public static func session(token: String) -> String { "{\"type\":\"session\",\"token\":\(quote(token)),\"write\":true}" }

    public static func error(_ message: String) -> String { "{\"type\":\"error\",\"error\":\(quote(message))}" }

    /// A JSON number (no NaN or infinity: null).
    static func number(_ x: Float) -> String {
        guard x.isFinite else { return "null" }
        if x == x.rounded(), abs(x) < 1e9 { return String(Int(x)) }
        return "\(x)"
    }

    /// A JSON string.
    public static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20 || u.value == 0x2028 || u.value == 0x2029:
                let h = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
