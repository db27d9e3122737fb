import StageCore

/// The settings of `stagerack play` that can come from a config file, the environment or
/// the command line. Each has one name per source.
public enum PlaySettingKey: String, CaseIterable, Sendable, Comparable {
    case rack, playback, capture, sampleRate, period, periods, captureChannels, sampleFormat, deviceWait, status
    // The remote (README "Control from a phone"): OSC and the web page, off unless set.
    case osc, oscAllow, web, webPin, webViewers, webClients
    /// The interface's own latency in frames (converters, driver, USB), as `stagerack
    /// latency --write` measured it: `play` adds it to its latency lines.
    case hardwareLatency
    case record, recordFormat
    /// TLS for the web page (both or neither: HTTPS and WSS instead of HTTP and WS), and the
    /// remote's limits (README "Control from a phone").
    case webCert, webKey, webRate, webSessions, oscSubscribers
    /// Capture on another card than playback (two clocks): resample it to the playback
    /// clock, steered by the measured drift. Off unless set.
    case driftCompensation
    /// Join the Ableton Link session on the network: the band's shared tempo and beat.
    /// Off unless set.
    case link
    /// The audio backend: "alsa" (the default: the card directly) or "jack" (a JACK client),
    /// and the JACK ports to connect to (`jack_get_ports` patterns; "none": leave unconnected).
    case driver, jackOutputs, jackInputs
    /// A band's boxes in step (README "A band's boxes in step"): this box's role (leader or
    /// follower; off unless set), the band's shared secret (config or environment only), the
    /// followers' `host:port` list (the leader's) and the sync port (9720 unless set).
    case syncRole, syncKey, syncFollowers, syncPort

    /// The key in a config file (the same names as a rack's `io` section where they overlap).
    public var fileKey: String { rawValue }

    /// The environment variable that sets it.
    public var environmentVariable: String {
        switch self {
        case .rack: return "STAGERACK_RACK"
        case .playback: return "STAGERACK_PLAYBACK"
        case .capture: return "STAGERACK_CAPTURE"
        case .sampleRate: return "STAGERACK_RATE"
        case .period: return "STAGERACK_PERIOD"
        case .periods: return "STAGERACK_PERIODS"
        case .captureChannels: return "STAGERACK_CAPTURE_CHANNELS"
        case .sampleFormat: return "STAGERACK_FORMAT"
        case .deviceWait: return "STAGERACK_DEVICE_WAIT"
        case .status: return "STAGERACK_STATUS"
        case .osc: return "STAGERACK_OSC"
        case .oscAllow: return "STAGERACK_OSC_ALLOW"
        case .web: return "STAGERACK_WEB"
        case .webPin: return "STAGERACK_WEB_PIN"
        case .webViewers: return "STAGERACK_WEB_VIEWERS"
        case .webClients: return "STAGERACK_WEB_CLIENTS"
        case .hardwareLatency: return "STAGERACK_HARDWARE_LATENCY"
        case .record: return "STAGERACK_RECORD"
        case .recordFormat: return "STAGERACK_RECORD_FORMAT"
        case .webCert: return "STAGERACK_WEB_CERT"
        case .webKey: return "STAGERACK_WEB_KEY"
        case .webRate: return "STAGERACK_WEB_RATE"
        case .webSessions: return "STAGERACK_WEB_SESSIONS"
        case .oscSubscribers: return "STAGERACK_OSC_SUBSCRIBERS"
        case .driftCompensation: return "STAGERACK_DRIFT_COMPENSATION"
        case .link: return "STAGERACK_LINK"
        case .driver: return "STAGERACK_DRIVER"
        case .jackOutputs: return "STAGERACK_JACK_OUTPUTS"
        case .jackInputs: return "STAGERACK_JACK_INPUTS"
        case .syncRole: return "STAGERACK_SYNC"
        case .syncKey: return "STAGERACK_SYNC_KEY"
        case .syncFollowers: return "STAGERACK_SYNC_FOLLOWERS"
        case .syncPort: return "STAGERACK_SYNC_PORT"
        }
    }

    /// The command-line option (nil for the rack, which is the positional argument).
    public var flag: String? {
        switch self {
        case .rack: return nil
        case .playback: return "--playback"
        case .capture: return "--capture"
        case .sampleRate: return "--rate"
        case .period: return "--period"
        case .periods: return "--periods"
        case .captureChannels: return "--capture-channels"
        case .sampleFormat: return "--format"
        case .deviceWait: return "--device-wait"
        case .status: return "--status"
        case .osc: return "--osc"
        case .web: return "--web"
        case .oscAllow, .webPin, .webViewers, .webClients: return nil  // config file or environment
        case .hardwareLatency: return "--hardware-latency"
        case .record: return "--record"
        case .recordFormat: return "--record-format"
        case .webCert, .webKey, .webRate, .webSessions, .oscSubscribers: return nil  // config file or environment
        case .driftCompensation: return "--drift-compensation"
        case .link: return "--link"
        case .driver: return "--driver"
        case .jackOutputs: return "--jack-outputs"
        case .jackInputs: return "--jack-inputs"
        case .syncRole: return "--sync"
        case .syncKey: return nil  // a secret: config file or environment, never the command line
        case .syncFollowers: return "--sync-followers"
        case .syncPort: return "--sync-port"
        }
    }

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// Integer ranges, as `stagerack play --help` documents them.
    var range: ClosedRange<Int>? {
        switch self {
        case .sampleRate: return 8000...384_000
        case .period: return 16...8192
        case .periods: return 2...16
        case .captureChannels: return 1...64
        case .webClients: return 1...64
        case .webRate: return 1...1000
        case .webSessions: return 1...1024
        case .oscSubscribers: return 1...64
        case .hardwareLatency: return 0...192_000
        case .syncPort: return 1...65535
        default: return nil
        }
    }
}

/// Where a setting came from, for log lines and error messages.
public enum SettingOrigin: Sendable, Equatable, CustomStringConvertible {
    case flag(String)
    case environment(String)
    case file(String, SourceLocation?)
    case rack(String)
    case builtIn

    public var description: String {
        switch self {
        case .flag(let f): return f
        case .environment(let v): return "$\(v)"
        case .file(let path, let loc): return loc.map { "\(path):\($0.line):\($0.column)" } ?? path
        case .rack(let path): return "\(path) (io)"
        case .builtIn: return "built-in default"
        }
    }
}

/// A setting's value.
public enum SettingValue: Sendable, Equatable, CustomStringConvertible {
    case text(String)
    case integer(Int)
    case flag(Bool)
    /// Seconds to wait for devices; nil waits for ever.
    case wait(Double?)

    public var description: String {
        switch self {
        case .text(let s): return s
        case .integer(let i): return String(i)
        case .flag(let b): return b ? "true" : "false"
        case .wait(let s): return s.map { "\(formatNumber($0)) s" } ?? "forever"
        }
    }
}

/// One layer of settings: what one source says, key by key. Layers are stacked with
/// `overridden(by:)`: built-in defaults < the rack's `io` section < /etc/stagerack <
/// the user's config < the environment < flags. Thread: any (a value).
public struct PlaySettings: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var value: SettingValue
        public var origin: SettingOrigin
        public init(_ value: SettingValue, _ origin: SettingOrigin) {
            self.value = value
            self.origin = origin
        }
    }

    public var entries: [PlaySettingKey: Entry] = [:]

    public init() {}

    public subscript(key: PlaySettingKey) -> Entry? {
        get { entries[key] }
        set { entries[key] = newValue }
    }

    public func text(_ key: PlaySettingKey) -> String? {
        if case .text(let s)? = entries[key]?.value { return s }
        return nil
    }

    public func integer(_ key: PlaySettingKey) -> Int? {
        if case .integer(let i)? = entries[key]?.value { return i }
        return nil
    }

    public func flag(_ key: PlaySettingKey) -> Bool? {
        if case .flag(let b)? = entries[key]?.value { return b }
        return nil
    }

    /// nil: not set; `.some(nil)`: forever.
    public func wait(_ key: PlaySettingKey) -> Double?? {
        if case .wait(let s)? = entries[key]?.value { return .some(s) }
        return nil
    }

    /// This layer with every key that `top` sets replaced by `top`'s value.
    public func overridden(by top: PlaySettings) -> PlaySettings {
        var out = self
        for (k, v) in top.entries { out.entries[k] = v }
        return out
    }

    /// Stacks layers, lowest precedence first.
    public static func stacked(_ layers: [PlaySettings]) -> PlaySettings {
        layers.reduce(PlaySettings()) { $0.overridden(by: $1) }
    }

    /// The built-in defaults: default devices, 48 kHz, 128×2, 2 capture channels, no status
    /// lines; absent devices are waited for for ever under systemd (a USB interface found
    /// after the service started), and not at all otherwise (a misspelt device name on the
    /// command line fails at once).
    public static func builtIn(underSystemd: Bool) -> PlaySettings {
        var s = PlaySettings()
        s[.playback] = Entry(.text("default"), .builtIn)
        s[.capture] = Entry(.text("default"), .builtIn)
        s[.sampleRate] = Entry(.integer(48000), .builtIn)
        s[.period] = Entry(.integer(128), .builtIn)
        s[.periods] = Entry(.integer(2), .builtIn)
        s[.captureChannels] = Entry(.integer(2), .builtIn)
        s[.deviceWait] = Entry(.wait(underSystemd ? nil : 0), .builtIn)
        s[.status] = Entry(.flag(false), .builtIn)
        s[.webViewers] = Entry(.flag(true), .builtIn)
        s[.webClients] = Entry(.integer(8), .builtIn)
        s[.webRate] = Entry(.integer(50), .builtIn)
        s[.webSessions] = Entry(.integer(64), .builtIn)
        s[.oscSubscribers] = Entry(.integer(8), .builtIn)
        return s
    }

    /// True when systemd started this process (it sets `$INVOCATION_ID` for every unit).
    public static func isUnderSystemd(_ environment: [String: String]) -> Bool {
        !(environment["INVOCATION_ID"] ?? "").isEmpty
    }

    /// What a rack's `io` section asks for.
    public static func fromRack(_ io: IODescription, file: String) -> PlaySettings {
        var s = PlaySettings()
        let origin = SettingOrigin.rack(file)
        if let p = io.playback { s[.playback] = Entry(.text(p), origin) }
        if let c = io.capture { s[.capture] = Entry(.text(c), origin) }
        if let r = io.sampleRate { s[.sampleRate] = Entry(.integer(Int(r)), origin) }
        if let p = io.period { s[.period] = Entry(.integer(p), origin) }
        if let p = io.periods { s[.periods] = Entry(.integer(p), origin) }
        return s
    }

    /// `key value (origin)` for each key not at its built-in default, for the start-up log.
    public var originSummary: String {
        entries.keys.sorted().compactMap { k -> String? in
            guard let e = entries[k], e.origin != .builtIn else { return nil }
            if k == .webPin || k == .syncKey { return "\(k.fileKey) set (\(e.origin))" }  // never the PIN or key itself in the log
            return "\(k.fileKey) \(e.value) (\(e.origin))"
        }.joined(separator: ", ")
    }
}

/// Problems with settings, each a full line: `FILE:LINE:COL: key: message`,
/// `$VARIABLE: message` or `--flag: message`.
public struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [String]
    /// True when every problem is on the command line (a usage error, exit status 2).
    public var onCommandLine: Bool
    public init(_ problems: [String], onCommandLine: Bool = false) {
        self.problems = problems
        self.onCommandLine = onCommandLine
    }
    public var description: String { problems.joined(separator: "\n") }
}
