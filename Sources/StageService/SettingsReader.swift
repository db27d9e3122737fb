import StageCore

/// Reads `PlaySettings` layers from a config file, the environment and the command line,
/// checking every value and reporting every problem at once with its place.
/// Thread: control.
public struct SettingsReader: Sendable {
    /// Sample format names accepted by `sampleFormat` (the drivers' list).
    public var sampleFormats: [String]
    /// For `~/` in paths.
    public var home: String?

    public init(sampleFormats: [String], home: String? = nil) {
        self.sampleFormats = sampleFormats
        self.home = home
    }

    /// Keys a config file may hold besides the settings.
    static let extraFileKeys = ["comment"]

    // MARK: config file

    /// Reads a config file's text (JSON with comments and trailing commas). A relative
    /// `rack` path is taken from the file's folder.
    public func fromFile(text: String, path: String) throws(SettingsError) -> PlaySettings {
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw SettingsError(["\(path):\(error.location.line):\(error.location.column): \(error.message)"])
        }
        guard let members = root.members else {
            throw SettingsError(["\(path):\(root.location.line):\(root.location.column): a config file must be an object { ... }, found \(root.value.kindName)"])
        }
        var problems: [String] = []
        var settings = PlaySettings()
        let known = PlaySettingKey.allCases.map(\.fileKey) + ["setlist"] + Self.extraFileKeys
        for m in members {
            let place = "\(path):\(m.keyLocation.line):\(m.keyLocation.column): \(m.key)"
            if Self.extraFileKeys.contains(m.key) { continue }
            let key: PlaySettingKey
            if m.key == "setlist" {
                // A setlist is named like a rack: `play` reads either.
                if root["rack"] != nil {
                    problems.append("\(place): give \"rack\" or \"setlist\", not both")
                    continue
                }
                key = .rack
            } else if let k = PlaySettingKey(rawValue: m.key) {
                key = k
            } else {
                problems.append("\(place): unknown key\(Suggest.hint(for: m.key, in: known))")
                continue
            }
            switch value(key, m.value) {
            case .success(var v):
                if key == .rack, case .text(let p) = v { v = .text(resolve(p, relativeTo: directory(of: path))) }
                settings[key] = PlaySettings.Entry(v, .file(path, m.value.location))
            case .failure(let message):
                let at = m.value.location
                problems.append("\(path):\(at.line):\(at.column): \(m.key): \(message.text)")
            }
        }
        if !problems.isEmpty { throw SettingsError(problems) }
        return settings
    }

    struct Message: Error { var text: String }

    func value(_ key: PlaySettingKey, _ node: JSONNode) -> Result<SettingValue, Message> {
        switch key {
        case .rack, .playback, .capture:
            guard let s = node.string, !s.isEmpty else { return .failure(Message(text: "must be a non-empty string, found \(describe(node))")) }
            return .success(.text(s))
        case .sampleFormat:
            guard let s = node.string else { return .failure(Message(text: "must be a string, one of \(sampleFormats.joined(separator: ", "))")) }
            return format(s)
        case .sampleRate, .period, .periods, .captureChannels, .hardwareLatency:
            guard let n = node.number else { return .failure(Message(text: "must be a whole number \(rangeText(key)), found \(describe(node))")) }
            return integer(key, n, written: formatNumber(n))
        case .deviceWait:
            if let s = node.string { return wait(s) }
            guard let n = node.number else { return .failure(Message(text: "must be a number of seconds or \"forever\", found \(describe(node))")) }
            return n >= 0 ? .success(.wait(n)) : .failure(Message(text: "must be 0 or more seconds, or \"forever\""))
        case .status, .webViewers, .driftCompensation, .link:
            guard let b = node.bool else { return .failure(Message(text: "must be true or false, found \(describe(node))")) }
            return .success(.flag(b))
        case .record, .recordFormat, .webCert, .webKey, .driver, .jackOutputs, .jackInputs, .syncRole, .syncKey, .syncFollowers:
            guard let s = node.string, !s.isEmpty else { return .failure(Message(text: "must be a non-empty string, found \(describe(node))")) }
            return value(key, text: s)
        case .webClients, .webRate, .webSessions, .oscSubscribers, .syncPort:
            guard let n = node.number else { return .failure(Message(text: "must be a whole number \(rangeText(key)), found \(describe(node))")) }
            return integer(key, n, written: formatNumber(n))
        case .osc, .web, .oscAllow, .webPin:
            guard let s = node.string ?? node.number.map({ formatNumber($0) }), !s.isEmpty else {
                return .failure(Message(text: "must be a string, found \(describe(node))"))
            }
            return remote(key, s)
        }
    }

    // MARK: environment

    /// Reads the `STAGERACK_*` variables (empty ones are ignored, as if unset).
    public func fromEnvironment(_ environment: [String: String]) throws(SettingsError) -> PlaySettings {
        var settings = PlaySettings()
        var problems: [String] = []
        for key in PlaySettingKey.allCases {
            guard let text = environment[key.environmentVariable], !text.isEmpty else { continue }
            switch value(key, text: text) {
            case .success(let v): settings[key] = PlaySettings.Entry(v, .environment(key.environmentVariable))
            case .failure(let m): problems.append("$\(key.environmentVariable): \(m.text)")
            }
        }
        if !problems.isEmpty { throw SettingsError(problems) }
        return settings
    }

    // MARK: command line

    /// Reads the options `stagerack play` was given (`options` by flag name with their
    /// values, `flags` the options without a value) and the rack argument.
    public func fromCommandLine(
        options: [String: String], flags: Set<String>, rack: String?
    ) throws(SettingsError) -> PlaySettings {
        var settings = PlaySettings()
        var problems: [String] = []
        if let rack { settings[.rack] = PlaySettings.Entry(.text(rack), .flag("RACK argument")) }
        for key in PlaySettingKey.allCases {
            guard let flag = key.flag else { continue }
            if key == .status || key == .driftCompensation || key == .link {
                if flags.contains(flag) { settings[key] = PlaySettings.Entry(.flag(true), .flag(flag)) }
                continue
            }
            guard let text = options[flag] else { continue }
            switch value(key, text: text) {
            case .success(let v): settings[key] = PlaySettings.Entry(v, .flag(flag))
            case .failure(let m): problems.append("\(flag): \(m.text)")
            }
        }
        if !problems.isEmpty { throw SettingsError(problems, onCommandLine: true) }
        return settings
    }

    /// A value written as text (environment, command line).
    func value(_ key: PlaySettingKey, text: String) -> Result<SettingValue, Message> {
        switch key {
        case .rack, .playback, .capture:
            return .success(.text(key == .rack ? expandHome(text) : text))
        case .sampleFormat:
            return format(text)
        case .sampleRate, .period, .periods, .captureChannels, .hardwareLatency:
            guard let n = Double(text.trimmingSpaces) else {
                return .failure(Message(text: "must be a whole number \(rangeText(key)), not \"\(text)\""))
            }
            return integer(key, n, written: text)
        case .deviceWait:
            return wait(text)
        case .webClients, .webRate, .webSessions, .oscSubscribers, .syncPort:
            guard let n = Double(text.trimmingSpaces) else {
                return .failure(Message(text: "must be a whole number \(rangeText(key)), not \"\(text)\""))
            }
            return integer(key, n, written: text)
        case .osc, .web, .oscAllow, .webPin:
            return remote(key, text)
        case .status, .webViewers, .driftCompensation, .link:
            switch text.trimmingSpaces.lowercased() {
            case "1", "true", "yes", "on": return .success(.flag(true))
            case "0", "false", "no", "off": return .success(.flag(false))
            default: return .failure(Message(text: "must be 1/0, true/false, yes/no or on/off, not \"\(text)\""))
            }
        case .record, .webCert, .webKey:
            return .success(.text(expandHome(text)))
        case .recordFormat:
            let t = text.trimmingSpaces.lowercased()
            return t == "wav" || t == "flac" ? .success(.text(t)) : .failure(Message(text: "must be wav or flac, not \"\(text)\""))
        case .driver:
            let t = text.trimmingSpaces.lowercased()
            return t == "alsa" || t == "jack" ? .success(.text(t)) : .failure(Message(text: "must be alsa or jack, not \"\(text)\""))
        case .syncRole:
            let t = text.trimmingSpaces.lowercased()
            return t == "leader" || t == "follower" ? .success(.text(t)) : .failure(Message(text: "must be leader or follower, not \"\(text)\""))
        case .syncKey:
            return text.isEmpty ? .failure(Message(text: "must be the band's shared secret (at least 16 characters)")) : .success(.text(text))
        case .syncFollowers:
            let t = text.trimmingSpaces
            return t.isEmpty ? .failure(Message(text: "must be HOST:PORT, comma-separated")) : .success(.text(t))
        case .jackOutputs, .jackInputs:
            let t = text.trimmingSpaces
            return t.isEmpty ? .failure(Message(text: "must be a JACK port pattern (e.g. system:playback_) or none")) : .success(.text(t))
        }
    }

    // MARK: shared checks

    /// `osc`/`web` (`[ADDR:]PORT`), `oscAllow` (networks), `webPin` (4…32 characters).
    func remote(_ key: PlaySettingKey, _ text: String) -> Result<SettingValue, Message> {
        switch key {
        case .osc, .web:
            switch ListenAddress.parse(text) {
            case .success(let a): return .success(.text(a.description))
            case .failure(let e): return .failure(Message(text: e.message))
            }
        case .oscAllow:
            switch NetworkList.parse(text) {
            case .success: return .success(.text(text.trimmingSpaces))
            case .failure(let e): return .failure(Message(text: e.message))
            }
        default:
            let pin = text.trimmingSpaces
            guard (4...32).contains(pin.count), pin.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                return .failure(Message(text: "must be 4…32 characters without spaces"))
            }
            return .success(.text(pin))
        }
    }

    func integer(_ key: PlaySettingKey, _ n: Double, written: String) -> Result<SettingValue, Message> {
        guard let range = key.range else { return .failure(Message(text: "is not a number setting")) }
        guard let i = Int(exactly: n) else { return .failure(Message(text: "must be a whole number \(rangeText(key)), not \(written)")) }
        guard range.contains(i) else { return .failure(Message(text: "\(written) is outside \(rangeText(key))")) }
        return .success(.integer(i))
    }

    func format(_ s: String) -> Result<SettingValue, Message> {
        let upper = s.trimmingSpaces.uppercased()
        if sampleFormats.contains(upper) { return .success(.text(upper)) }
        return .failure(Message(text: "\"\(s)\" is not a sample format; use one of \(sampleFormats.joined(separator: ", "))\(Suggest.hint(for: upper, in: sampleFormats))"))
    }

    func wait(_ s: String) -> Result<SettingValue, Message> {
        let t = s.trimmingSpaces.lowercased()
        if t == "forever" || t == "infinity" { return .success(.wait(nil)) }
        var number = Substring(t)
        if number.hasSuffix("s") { number = number.dropLast() }
        if let n = Double(number.trimmingSpaces), n >= 0, n.isFinite { return .success(.wait(n)) }
        return .failure(Message(text: "must be a number of seconds (0: do not wait) or \"forever\", not \"\(s)\""))
    }

    func rangeText(_ key: PlaySettingKey) -> String {
        guard let r = key.range else { return "" }
        return "\(r.lowerBound)…\(r.upperBound)"
    }

    func describe(_ node: JSONNode) -> String {
        switch node.value {
        case .string(let s): return "\"\(s)\""
        case .number(let n): return formatNumber(n)
        default: return node.value.kindName
        }
    }

    func expandHome(_ p: String) -> String {
        if p.hasPrefix("~/"), let home, !home.isEmpty { return home + p.dropFirst(1) }
        return p
    }

    func resolve(_ p: String, relativeTo directory: String) -> String {
        let e = expandHome(p)
        if e.hasPrefix("/") || directory.isEmpty || directory == "." { return e }
        return directory + "/" + e
    }

    func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s.removeLast() }
        return String(s)
    }
}
