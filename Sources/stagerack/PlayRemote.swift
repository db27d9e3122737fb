import StageCore
import StageControl
import StageDrivers
import StageOSC
import StageRemote
import StageService
import StageWeb

#if canImport(Glibc)
import Glibc
#endif

/// What `play` adds for the remote (README "Control from a phone"): the hub that owns the
/// parameter state on the control thread, and the OSC and web servers around it.
/// Thread: main (set-up); the hub's work runs on the control thread (`onTick`).
extension LiveSession {
    /// True when OSC or the web page is asked for (the hub runs only then).
    var wantsRemote: Bool { setup.service.settings.text(.osc) != nil || setup.service.settings.text(.web) != nil }

    /// The hub for the rack playing, wired to the switcher (its thread runs `tick`; switches
    /// and recalls rebuild or update the state) and to the MIDI input (notices to the
    /// mapper; the router's parameter changes in). Thread: main, before the switcher starts.
    func makeRemoteHub(plan: RenderPlan, player: RackPlayer, switcher: PresetSwitcher, midi: (any LiveMIDI)?) -> RemoteHub {
        let songs = setlist.entries.indices.map { song($0).name }
        let hub = RemoteHub(
            plan: plan, songs: songs, song: 0, engineEvents: player.controlEvents,
            midiChanges: midi?.router.parameterChanges,
            canBypass: { name in Registry.standard.type(named: name).map { $0.role == .processor || $0.role == .generator } ?? false },
            tellMIDI: { [weak midi] address, value in midi?.noteParameterMoved(address, to: value, byPreset: false) },
            perform: { [weak switcher] r in switcher?.perform(r, at: EngineEvent.now) })
        hub.wakeControl = { [weak switcher] in switcher?.wakeUp() }
        // The songs shown by their rack's name (song(_:) in PlayService.swift: a lone rack).
        hub.songsNamedByTheirRack = Set(setlist.entries.indices.filter { i in
            let e = setlist.entries[i]
            return (e.name.isEmpty || e.name == e.rack) && song(i).name != (e.rack.split(separator: "/").last.map(String.init) ?? e.rack)
        })
        if let midi {  // MIDI learn from the page: a new mapper for the MIDI thread
            hub.attachLearning(router: midi.router, remap: { [weak midi] m in midi?.replaceMapper(m, events: player.events) })
        }
        let ownWrites = self.ownWrites
        hub.saveRack = { request in LiveSession.saveFromPage(request, ownWrites: ownWrites) }  // PlaySave.swift
        attachSoundcheck(to: hub, player: player)  // the page's Soundcheck button (PlaySoundcheck.swift)
        switcher.onTick = { [weak hub] in hub?.tick() }
        return hub
    }

    /// Starts the OSC server (and, later, the web server) when asked for; returns what stops
    /// them. A server that cannot start is logged and the rack plays on. Thread: main.
    func startRemoteServers(_ hub: RemoteHub) -> (stops: [() -> Void], web: WebServer?) {
        var stops: [() -> Void] = []
        var web: WebServer?
        let s = setup.service.settings
        if let text = s.text(.web), case .success(let address) = ListenAddress.parse(text) {
            if let folder = Self.webFolder() {
                let configured = s.text(.webPin)
                let pin = configured ?? WebSecurity.randomPIN()
                var options = WebServer.Options(
                    address: address, pin: pin, viewers: s.flag(.webViewers) ?? true, maxClients: s.integer(.webClients) ?? 8,
                    staticFolder: folder)
                options.ratePerSecond = Double(s.integer(.webRate) ?? 50)
                options.maxSessions = s.integer(.webSessions) ?? 64
                Self.testTimeouts(&options)
                do {
                    options.tls = try Self.tlsFiles(s.text(.webCert), s.text(.webKey))
                    let server = try WebServer(options: options, hub: hub, log: { LogOutput.emit($0, $1) })
                    try server.start()
                    hub.onPublish = { [weak server] in server?.wake() }  // control → web: a change to send
                    stops.append { server.stop() }
                    web = server
                    let pinText = configured == nil ? "PIN \(pin) (random: set webPin in the config to keep one)" : "PIN: the config's webPin (\(s[.webPin]?.origin.description ?? "config"))"
                    for url in Self.urls(address, tls: options.tls != nil) { Log.info("web: open \(url) on a phone or laptop on this network; \(pinText)") }
                    if !(options.viewers) { Log.info("web: viewing needs the PIN too (webViewers false)") }
                } catch {
                    Log.error("\(error); playing without the web page")
                }
            } else {
                Log.error("web: the page's files are not installed (no web/index.html next to the binary); playing without the web page")
            }
        }
        if let text = s.text(.osc), case .success(let address) = ListenAddress.parse(text) {
            let allow = s.text(.oscAllow).flatMap { try? NetworkList.parse($0).get() }
            do {
                let server = try OSCServer(
                    address: address, allow: allow, hub: hub, subscribers: s.integer(.oscSubscribers) ?? OSCServer.maxSubscribers,
                    log: { LogOutput.emit($0, $1) })
                try server.start()
                stops.append { server.stop() }
                Log.info("OSC: listening on udp \(address)\(allow.map { " for \($0)" } ?? ""); addresses under /stagerack/ (racks/README.md, \"Remote control\")")
                if !address.isLoopback && allow == nil {
                    Log.warning("OSC has no authentication and listens on \(address): anyone on that network can control the rack, and only this machine gets /state and /subscribe (set oscAllow to your devices' network)")
                }
            } catch {
                Log.error("\(error); playing without OSC")
            }
        }
        return (stops, web)
    }

    /// A test hook: `STAGERACK_TEST_WEB_TIMEOUTS=ping,hangup,viewerIdle,frame` (seconds) so
    /// that the remote tests see the timeouts in seconds, not minutes. Thread: main.
    static func testTimeouts(_ o: inout WebServer.Options) {
        guard let text = getenv("STAGERACK_TEST_WEB_TIMEOUTS").map({ String(cString: $0) }) else { return }
        let n = text.split(separator: ",").compactMap { Int($0) }
        guard n.count == 4, n.allSatisfy({ $0 > 0 }) else { return Log.warning("STAGERACK_TEST_WEB_TIMEOUTS: four whole seconds, ignored") }
        (o.pingSeconds, o.hangupSeconds, o.viewerIdleSeconds, o.frameSeconds) = (n[0], n[1], n[2], n[3])
    }

    /// Where the page's files are: installed (`PREFIX/share/stagerack/web`), `web/` next to
    /// the executable, or the source checkout's `web/` found by walking up from the executable
    /// (`.build/<triple>/release/stagerack`, wherever `play` is started: the link
    /// `.build/release` resolves to the triple's folder), then `./web`.
    static func webFolder() -> String? {
        var path = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &path, path.count - 1)
        let exe = n > 0 ? String(decoding: path[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        var parts = exe.split(separator: "/", omittingEmptySubsequences: false).dropLast().map(String.init)
        var candidates = [parts.joined(separator: "/") + "/../share/stagerack/web", parts.joined(separator: "/") + "/web"]
        for _ in 0..<6 where parts.count > 1 {  // the checkout holding the build tree
            parts.removeLast()
            let dir = parts.joined(separator: "/")
            if access(dir + "/Package.swift", R_OK) == 0 { candidates.append(dir + "/web") }
        }
        candidates.append("web")
        for candidate in candidates where access(candidate + "/index.html", R_OK) == 0 { return candidate }
        return nil
    }

    /// The addresses to open: the one listened on, or for every interface the machine's
    /// IPv4 addresses, and `HOSTNAME.local` when avahi runs (as on Raspberry Pi OS).
    static func urls(_ a: ListenAddress, tls: Bool = false) -> [String] {
        urls(a).map { tls ? "https" + $0.dropFirst(4) : $0 }
    }

    /// `webCert` and `webKey`: both (TLS) or neither (plain HTTP). Thread: main.
    static func tlsFiles(_ cert: String?, _ key: String?) throws(RemoteError) -> (cert: String, key: String)? {
        switch (cert, key) {
        case (nil, nil): return nil
        case (let c?, let k?): return (c, k)
        default: throw RemoteError("web: webCert and webKey go together (a PEM certificate and its key)")
        }
    }

    static func urls(_ a: ListenAddress) -> [String] {
        guard a.isWildcard else { return ["http://\(a.isIPv6 ? "[\(a.host)]" : a.host):\(a.port)/"] }
        var out: [String] = []
        var host = [CChar](repeating: 0, count: 256)
        if gethostname(&host, host.count - 1) == 0, access("/run/avahi-daemon/pid", F_OK) == 0 {
            out.append("http://\(String(cBuffer: host)).local:\(a.port)/")
        }
        var list: UnsafeMutablePointer<ifaddrs>?
        if getifaddrs(&list) == 0 {
            var p = list
            while let e = p {
                if let sa = e.pointee.ifa_addr, sa.pointee.sa_family == sa_family_t(AF_INET) {
                    var text = [CChar](repeating: 0, count: 64)
                    var sin = UnsafeRawPointer(sa).load(as: sockaddr_in.self)
                    inet_ntop(AF_INET, &sin.sin_addr, &text, socklen_t(text.count))
                    out.append("http://\(String(cBuffer: text)):\(a.port)/")
                }
                p = e.pointee.ifa_next
            }
            freeifaddrs(list)
        }
        return out.isEmpty ? ["http://127.0.0.1:\(a.port)/"] : out
    }
}

/// The last MIDI messages and the meters for the remote, gathered by the main thread at
/// each turn of its loop. Thread: main.
struct RemoteMeterFeed {
    var lastMIDI: [String] = []

    mutating func noteMIDI(_ line: String) {
        lastMIDI.append(line)
        if lastMIDI.count > RemoteMeters.midiHistory { lastMIDI.removeFirst(lastMIDI.count - RemoteMeters.midiHistory) }
    }

    func publish(
        _ s: LiveAudio.Status, hasCapture: Bool, link: LinkStatus?, gainReduction: [UnitMeterReading], readouts: [UnitReadoutReading],
        section: (current: String?, next: String?)?, sectionIndex: Int?, transpose: Int? = nil, talk: Bool? = nil,
        trackSeconds: Double? = nil, to hub: RemoteHub
    ) {
        var m = RemoteMeters()
        m.peakIn = hasCapture ? s.peakIn : nil
        m.peakOut = s.peakOut
        m.load = s.load
        m.xruns = s.xruns
        m.tempo = s.tempo
        m.tempoSource = s.tempoSource?.name
        m.link = link.map { RemoteMeters.Link(peers: $0.peers, tempo: $0.tempo, beat: $0.beat, micros: $0.micros) }
        m.gainReduction = gainReduction.map { RemoteMeters.GainReduction(unit: $0.unitID, dB: $0.value) }
        m.readouts = readouts.map { r in
            RemoteMeters.Readout(unit: r.unitID, text: r.text, values: r.unit.readouts.map { .init(name: $0.name, value: $0.value) })
        }
        m.lastMIDI = lastMIDI
        m.section = section?.current
        m.nextSection = section?.next
        m.sectionIndex = sectionIndex
        m.transpose = transpose
        m.talk = talk
        m.trackSeconds = trackSeconds
        hub.publishMeters(m)
    }
}
