import CLoadOnUse
import CWebSockets
import Dispatch
import Foundation
import StageCore
import StageRemote
import StageService
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `play --web`: the page's static files over HTTP and its WebSocket, from libwebsockets,
/// serviced by a thread of its own (`stagerack-web`), never the render thread. Other threads
/// wake it with `wake()` (`lws_cancel_service`): the control thread after a change, the main
/// thread after new meters; it then sends each client what changed.
///
/// Bounded and locked (racks/README.md § Remote control, "The web page"): GET only, and only
/// the files found in the static folder at start (no path is ever joined from a request);
/// WebSocket handshakes whose Host is not an address this server serves (DNS rebinding),
/// whose Origin is not that host, or whose Origin or Host is over-long are refused.
/// `maxClients` slots are for PIN holders; viewers without the PIN share `maxViewers` others,
/// and a new connection when those are full evicts the oldest viewer of the source address
/// that has the most (a stranger's flood evicts its own). Viewers without the PIN are closed
/// after `viewerIdleSeconds` without a message; everyone is pinged after `pingSeconds` idle
/// and hung up without a pong by `hangupSeconds`; a frame not complete within `frameSeconds`
/// closes the connection, as does one that declares more than `maxMessage` bytes.
/// `ratePerSecond` messages a second per client (bursts of twice that); writing needs the PIN
/// (constant-time, failures slowed per source address under a global ceiling: WebSecurity)
/// or a session token from it. Refusals are logged as warnings, once a minute per class.
///
/// Thread: `init`, `start`, `stop` on main; `wake` any; the rest on the web thread.
public final class WebServer: @unchecked Sendable {
    public struct Options: Sendable {
        public var address: ListenAddress
        public var pin: String
        /// Whether a page without the PIN may watch (read-only).
        public var viewers: Bool
        public var maxClients: Int
        public var staticFolder: String
        public var maxMessage = 4096
        public var ratePerSecond = 50.0
        /// Session tokens kept (the oldest is forgotten beyond this).
        public var maxSessions = 64
        /// PEM certificate and key for HTTPS/WSS (both or neither); nil: plain HTTP/WS.
        public var tls: (cert: String, key: String)?
        /// Connections without the PIN at most (`WebServer.maxViewers`).
        public var maxViewers = WebServer.maxViewers
        public var viewerIdleSeconds = WebServer.viewerIdleSeconds
        public var pingSeconds = WebServer.pingSeconds
        public var hangupSeconds = WebServer.hangupSeconds
        public var frameSeconds = WebServer.frameSeconds

        public init(address: ListenAddress, pin: String, viewers: Bool, maxClients: Int, staticFolder: String) {
            self.address = address
            self.pin = pin
            self.viewers = viewers
            self.maxClients = maxClients
            self.staticFolder = staticFolder
        }
    }

    /// Connections without the PIN kept at most, besides the `maxClients` PIN holders (a new
    /// one beyond this evicts the oldest of the source with the most).
    public static let maxViewers = 24
    /// Seconds a connection without the PIN may go without sending a message (the page
    /// reconnects by itself).
    public static let viewerIdleSeconds = 300
    /// Seconds idle before a WebSocket PING, and before hanging up without a PONG (everyone).
    public static let pingSeconds = 20
    public static let hangupSeconds = 30
    /// Seconds a message may take from its first byte to its last.
    public static let frameSeconds = 10
    /// Connections from one source (an address, an IPv6 /64) open at once at most, pages and
    /// files and handshakes under way together: a stranger's flood of half-open connections
    /// cannot take every descriptor. A phone holds a few.
    public static let maxConnectionsPerSource = 64
    /// The machine's addresses are read again on a `Host` that is none of them, at most this
    /// often (seconds): addresses come and go (DHCP), a stranger's wrong Hosts cost little.
    public static let addressesRereadSeconds = 5.0

    /// One WebSocket client. Thread: web.
    final class Client {
        let wsi: OpaquePointer
        /// Its address (an IPv6 one as its /64 network): the PIN lock's and eviction's key.
        var source = ""
        var since = 0.0
        var messageStarted: Double?
        var canWrite = false
        var meters = false
        var rate: RateLimiter
        var incoming: [UInt8] = []
        var outgoing: [String] = []
        var lastView: RemoteView?
        var lastMeters = 0
        var closing: String?

        init(wsi: OpaquePointer, rate: Double) {
            self.wsi = wsi
            self.rate = RateLimiter(rate: rate, burst: rate * 2)
        }
    }

    public let options: Options
    let hub: RemoteHub
    let log: @Sendable (LogLevel, String) -> Void
    /// Set once in `init` (it needs `self` as its user pointer); destroyed only in `deinit`,
    /// once no thread can wake it any more.
    private(set) var context: OpaquePointer?
    private(set) var protocols: UnsafeMutableRawPointer?
    let running = Atomic<Bool>(false)
    var thread: StageThread?
    /// The files that may be served (name → MIME type), read once at start.
    let files: [String: String]

    // Web thread state.
    var security: WebSecurity
    var clients: [Int32: Client] = [:]
    var nextID: Int32 = 1
    var pending = 0
    var refusals = RefusalLog()
    /// The `Host` values this server answers to, and when they were read (refreshed at most
    /// every few seconds on a miss: addresses come and go).
    var served: Set<String> = []
    /// The source of each accepted socket (by descriptor; checked again before it counts).
    var connections: [Int32: String] = [:]
    var servedAt = -1e9

    // Counters (any thread).
    public let handshakesRefused = Atomic<Int>(0)
    public let messagesRefused = Atomic<Int>(0)
    public var clientCount: Int { clientsNow.load(ordering: .relaxed) }
    let clientsNow = Atomic<Int>(0)

    /// Binds the port (an error when it cannot). Thread: main.
    public init(options: Options, hub: RemoteHub, log: @escaping @Sendable (LogLevel, String) -> Void) throws(RemoteError) {
        self.options = options
        self.hub = hub
        self.log = log
        security = WebSecurity(pin: options.pin, maxTokens: options.maxSessions)
        files = Self.staticFiles(in: options.staticFolder)
        guard files["index.html"] != nil else { throw RemoteError("web: no index.html in \(options.staticFolder)") }
        // libwebsockets (and OpenSSL) are opened here, not at start-up (CLoadOnUse).
        if let failure = libraryLoadFailure({ stage_load_websockets($0, $1) }) { throw RemoteError(failure) }
        lwsLog.withLock { $0 = log }
        lws_set_log_level(LLL_ERR | LLL_WARN, emitLWSLine)
        let a = options.address
        var list: UnsafeMutableRawPointer?
        let bindAddress: String? = a.isWildcard ? nil : a.host
        if let tls = options.tls {
            for f in [tls.cert, tls.key] where access(f, R_OK) != 0 {
                throw RemoteError("web: cannot read \(f) (webCert/webKey): \(String(cString: strerror(errno)))")
            }
        }
        let ctx = withOptionalCString(bindAddress) { host in
            withOptionalCString(options.tls?.cert) { cert in
                withOptionalCString(options.tls?.key) { key in
                    stage_lws_create(
                        host, Int32(a.port), a.isIPv6 ? 1 : 0, webCallback, Unmanaged.passUnretained(self).toOpaque(),
                        MemoryLayout<Int32>.size, options.maxMessage, cert, key, UInt32(max(1, options.pingSeconds)),
                        UInt32(max(2, options.hangupSeconds)), &list)
                }
            }
        }
        guard let ctx else {
            throw RemoteError(
                options.tls == nil ? "web: cannot listen on http \(a) (in use, or not an address of this machine)"
                    : "web: cannot listen on https \(a) (in use, not an address of this machine, or webCert/webKey not a matching PEM certificate and key)")
        }
        context = ctx
        protocols = list
    }

    deinit {
        if let context { lws_context_destroy(context) }
        free(protocols)
    }

    /// Starts the web thread. Thread: main, once.
    public func start() throws(StageThread.StartError) {
        running.store(true, ordering: .releasing)
        thread = try StageThread(.init(name: "stagerack-web")) { [self] in
            while running.load(ordering: .acquiring) { _ = lws_service(context, 0) }
        }
    }

    /// Stops the web thread (the connections close when the server is released: other
    /// threads may still call `wake` until they stop). Thread: main.
    public func stop() {
        guard thread != nil, running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake()
        thread?.join()  // joined, not left to leak
        thread = nil
    }

    /// Makes the web thread look for changes and meters now. Thread: any.
    public func wake() {
        if let context { lws_cancel_service(context) }
    }

    // MARK: - callbacks (web thread)

    func callback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let wsi else { return 0 }
        switch reason {
        case LWS_CALLBACK_HTTP:
            return serveHTTP(wsi, path: input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/")
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            return acceptConnection(Int32(truncatingIfNeeded: Int(bitPattern: input))) ? 0 : 1
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            return admit(wsi) ? 0 : 1
        case LWS_CALLBACK_ESTABLISHED:
            let id = nextID
            nextID &+= 1
            user?.storeBytes(of: id, as: Int32.self)
            let c = Client(wsi: wsi, rate: options.ratePerSecond)
            c.source = Self.source(of: wsi)
            c.since = monotonicSeconds()
            clients[id] = c
            clientsNow.store(clients.count, ordering: .relaxed)
            stage_lws_timeout(wsi, Int32(options.viewerIdleSeconds))
            queue(c, WebProtocol.hello(write: false, viewers: options.viewers))
            if options.viewers { sendState(c) } else { queue(c, WebProtocol.error("log in with the PIN to see the rack")) }
        case LWS_CALLBACK_RECEIVE:
            guard let id = user?.load(as: Int32.self), let c = clients[id] else { return -1 }
            return receive(c, input, length)
        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let id = user?.load(as: Int32.self), let c = clients[id] else { return -1 }
            return write(c)
        case LWS_CALLBACK_CLOSED:
            if let id = user?.load(as: Int32.self) { clients[id] = nil }
            clientsNow.store(clients.count, ordering: .relaxed)
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            publish()
            for line in refusals.flush(now: monotonicSeconds()) { log(.warning, "web: " + line) }
            flushLWSLines()
        default:
            break
        }
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }

    /// Static files by exact name; anything else 404, any method but GET 405.
    func serveHTTP(_ wsi: OpaquePointer, path: String) -> Int32 {
        guard stage_lws_is_get(wsi) != 0 else {
            refused("method", "an HTTP request other than GET refused (405)", monotonicSeconds())
            _ = lws_return_http_status(wsi, 405, nil)
            return -1
        }
        let name = path == "/" || path.isEmpty ? "index.html" : String(path.drop { $0 == "/" })
        guard let mime = files[name] else {
            refused("notFound", "a request for \(Self.shown(path)) refused (404: not one of the page's files)", monotonicSeconds())
            _ = lws_return_http_status(wsi, 404, nil)
            return stage_lws_http_done(wsi)
        }
        let headers = "X-Frame-Options: DENY\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n"
            + "Content-Security-Policy: default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:\r\n"
        let r = headers.withCString { h in lws_serve_http_file(wsi, options.staticFolder + "/" + name, mime, h, Int32(strlen(h))) }
        return r < 0 ? -1 : 0
    }

    /// A WebSocket handshake: the Host must be an address this server serves and the Origin
    /// that host (neither over-long); when the viewers' slots are full, the oldest viewer of
    /// the source with the most goes.
    func admit(_ wsi: OpaquePointer) -> Bool {
        let host = header(wsi, WSI_TOKEN_HOST)
        let origin = header(wsi, WSI_TOKEN_ORIGIN)
        let now = monotonicSeconds()
        if case .tooLong = origin { return refuse("origin", "refused a WebSocket with an Origin over \(WebSecurity.maxHeaderBytes) bytes", now) }
        if case .tooLong = host { return refuse("host", "refused a WebSocket with a Host over \(WebSecurity.maxHeaderBytes) bytes", now) }
        if !WebSecurity.hostServed(host.text, served: served), now - servedAt > Self.addressesRereadSeconds {
            served = servedHosts()
            servedAt = now
        }
        guard WebSecurity.hostServed(host.text, served: served) else {
            return refuse("host", "refused a WebSocket for host \(Self.shown(host.text)) (not an address of this server: DNS rebinding?)", now)
        }
        guard WebSecurity.originMatches(origin: origin.text, host: host.text) else {
            return refuse("origin", "refused a WebSocket from origin \(Self.shown(origin.text)) (this server is \(Self.shown(host.text)))", now)
        }
        let viewers = clients.filter { !$0.value.canWrite }
        if viewers.count >= options.maxViewers {
            var bySource: [String: Int] = [:]
            for c in viewers.values { bySource[c.source, default: 0] += 1 }
            let most = bySource.values.max() ?? 0
            if let (id, c) = viewers.filter({ bySource[$0.value.source] == most }).min(by: { $0.value.since < $1.value.since }) {
                clients[id] = nil
                clientsNow.store(clients.count, ordering: .relaxed)
                stage_lws_kill(c.wsi)
                refused("evict", "closed a viewer without the PIN from \(c.source): \(options.maxViewers) viewers connected already", now)
            }
        }
        return true
    }

    /// A fragment of a message; the whole message is handled at its last fragment.
    func receive(_ c: Client, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        if let input, length > 0 { c.incoming += UnsafeRawBufferPointer(start: input, count: length) }
        let now = monotonicSeconds()
        // What the frame still declares counts at once: a frame of 2^62 bytes is refused at
        // its first bytes, not when they (never) come.
        let remaining = lws_remaining_packet_payload(c.wsi)
        if c.incoming.count > options.maxMessage || remaining > options.maxMessage - c.incoming.count {
            messagesRefused.add(1, ordering: .relaxed)
            if let line = refusals.note("size", "closed a WebSocket from \(c.source): a message over \(options.maxMessage) bytes", now: now) {
                log(.warning, "web: " + line)
            }
            stage_lws_close_policy(c.wsi, "message over \(options.maxMessage) bytes")
            return -1
        }
        guard lws_is_final_fragment(c.wsi) != 0, remaining == 0 else {
            if c.messageStarted == nil {  // a message under way must end within frameSeconds
                c.messageStarted = now
                stage_lws_timeout(c.wsi, Int32(options.frameSeconds))
            }
            return 0
        }
        c.messageStarted = nil
        stage_lws_timeout(c.wsi, c.canWrite ? 0 : Int32(options.viewerIdleSeconds))
        let bytes = c.incoming
        c.incoming.removeAll(keepingCapacity: true)
        guard c.rate.allow(now: now) else {
            messagesRefused.add(1, ordering: .relaxed)
            refused("rate", "messages from \(c.source) over \(Int(options.ratePerSecond)) a second dropped", now)
            queue(c, WebProtocol.error("too many messages: at most \(Int(options.ratePerSecond)) a second"))
            return 0
        }
        guard lws_frame_is_binary(c.wsi) == 0, let text = String(validating: bytes, as: UTF8.self) else {
            queue(c, WebProtocol.error("messages are JSON text"))
            return 0
        }
        handle(c, text)
        return 0
    }

    func handle(_ c: Client, _ text: String) {
        let view = hub.view()
        switch WebProtocol.request(text, view: view) {
        case .failure(let e):
            messagesRefused.add(1, ordering: .relaxed)
            refused("request", "a request from \(c.source) refused: \(e.message.prefix(120))", monotonicSeconds())
            queue(c, WebProtocol.error(e.message))
        case .success(.login(let pin)):
            guard c.canWrite || holders() < options.maxClients else { return queue(c, WebProtocol.error(full())) }
            let now = monotonicSeconds()
            switch security.login(pin, from: c.source, now: now) {
            case .token(let t):
                promote(c)
                queue(c, WebProtocol.session(token: t))
                if !options.viewers { sendState(c) }
            case .wrongPIN(let wait):
                refused("pin", "a wrong PIN from \(c.source)\(wait > 0 ? "; its next try waits \(Int(wait)) s" : "")", now)
                queue(c, WebProtocol.error("wrong PIN" + (wait > 0 ? "; try again in \(Int(wait)) s" : "")))
            case .tooSoon(let wait):
                refused("pinLocked", "a PIN from \(c.source) refused unchecked: locked for \(Int(wait.rounded(.up))) s", now)
                queue(c, WebProtocol.error("too many wrong PINs: try again in \(Int(wait.rounded(.up))) s"))
            case .tooManyGuesses(let wait):
                refused("pinCeiling", "a PIN from \(c.source) refused unchecked: too many wrong PINs from all addresses together", now)
                queue(c, WebProtocol.error("too many wrong PINs on this server: try again in \(Int(wait.rounded(.up))) s"))
            }
        case .success(.resume(let token)):
            guard c.canWrite || holders() < options.maxClients else { return queue(c, WebProtocol.error(full())) }
            if security.isValid(token: token) {
                promote(c)
                queue(c, WebProtocol.session(token: token))
                if !options.viewers { sendState(c) }
            } else {
                refused("token", "a session token from \(c.source) that this server never gave", monotonicSeconds())
                queue(c, WebProtocol.error("the session has ended: log in with the PIN"))
            }
        case .success(.meters(let on)):
            guard c.canWrite || options.viewers else { return queue(c, WebProtocol.error("log in with the PIN first")) }
            c.meters = on
        case .success(.save(let snapshot)):
            guard c.canWrite else { return queue(c, WebProtocol.error("read-only: log in with the PIN to save")) }
            guard hub.requestSave(snapshot: snapshot) else { return queue(c, WebProtocol.error("busy: a save is under way; try again")) }
        case .success(.command(let command)):
            guard c.canWrite else {
                refused("readOnly", "a change from \(c.source) without the PIN refused", monotonicSeconds())
                return queue(c, WebProtocol.error("read-only: log in with the PIN to change anything"))
            }
            guard hub.fromWeb.push(command) else { return queue(c, WebProtocol.error("busy: too many commands waiting; this one is dropped")) }
            hub.wakeControl()
        }
    }

    /// PIN holders connected.
    func holders() -> Int { clients.values.reduce(0) { $0 + ($1.canWrite ? 1 : 0) } }

    func full() -> String {
        refused("full", "a login refused: \(options.maxClients) PIN holders connected already (webClients)", monotonicSeconds())
        return "\(options.maxClients) pages with the PIN are connected already (webClients): close one"
    }

    /// The client holds the PIN now: a PIN holder's slot, no idle timeout (pings remain).
    func promote(_ c: Client) {
        c.canWrite = true
        if c.messageStarted == nil { stage_lws_timeout(c.wsi, 0) }
    }

    /// Logs a refusal as a warning, at most once a minute per class (with a count).
    func refused(_ kind: String, _ text: String, _ now: Double) {
        if let line = refusals.note(kind, text, now: now) { log(.warning, "web: " + line) }
    }

    /// Sends the state and meters that changed since each client last heard. Thread: web.
    func publish() {
        let view = hub.view()
        let meters = hub.meters()
        var meterText: String?
        for c in clients.values where c.canWrite || options.viewers {
            if let last = c.lastView {
                if last.serial != view.serial {
                    for m in WebProtocol.changes(from: last, to: view) { queue(c, m) }
                    c.lastView = view
                }
            } else {
                sendState(c, view)
            }
            if c.meters, meters.serial != c.lastMeters {
                c.lastMeters = meters.serial
                if meterText == nil { meterText = WebProtocol.meters(meters) }
                // A slow client gets the latest meters, never a backlog.
                if c.outgoing.count < 8 { queue(c, meterText!) }
            }
        }
    }

    func sendState(_ c: Client, _ view: RemoteView? = nil) {
        let v = view ?? hub.view()
        c.lastView = v
        queue(c, WebProtocol.state(v))
        for m in WebProtocol.lyrics(v) { queue(c, m) }
    }

    func queue(_ c: Client, _ text: String) {
        guard c.outgoing.count < 256 else { return }  // a client that reads nothing is not waited for
        c.outgoing.append(text)
        lws_callback_on_writable(c.wsi)
    }

    /// One message per writable callback (libwebsockets' rule), then asks for the next.
    func write(_ c: Client) -> Int32 {
        guard !c.outgoing.isEmpty else { return 0 }
        let text = c.outgoing.removeFirst()
        let pre = stage_lws_pre()
        var buffer = [UInt8](repeating: 0, count: pre + text.utf8.count)
        buffer.replaceSubrange(pre..., with: text.utf8)
        let n = buffer.withUnsafeMutableBufferPointer { stage_lws_write_text(c.wsi, $0.baseAddress, text.utf8.count) }
        if Int(n) < text.utf8.count { return -1 }
        if !c.outgoing.isEmpty { lws_callback_on_writable(c.wsi) }
        return 0
    }

    // MARK: - static files

    static let mimeTypes = ["html": "text/html; charset=utf-8", "css": "text/css", "js": "text/javascript", "png": "image/png", "svg": "image/svg+xml", "ico": "image/x-icon"]

    /// The plain files directly in `folder` with a known type and a simple name
    /// (letters, digits, `-`, `_`, one `.`): the only paths ever served.
    static func staticFiles(in folder: String) -> [String: String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [:] }
        var out: [String: String] = [:]
        for name in names {
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }),
                  let mime = mimeTypes[String(parts[1])] else { continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            out[name] = mime
        }
        return out
    }
}

func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}

/// Where libwebsockets' own log lines go (the server's log, with a level): set by `init`.
let lwsLog = Mutex<(@Sendable (LogLevel, String) -> Void)?>(nil)
/// libwebsockets' lines are refusals too ("User code denied connection" for each refused
/// handshake): each kind (its text without digits) at most once a minute, with a count.
let lwsRefusals = Mutex(RefusalLog())

/// libwebsockets' log lines, each with a level prefix through the app's log.
private func emitLWSLine(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
    guard !text.isEmpty, let sink = lwsLog.withLock({ $0 }) else { return }
    let kind = String(text.filter { !$0.isNumber }.prefix(60))
    guard let shown = lwsRefusals.withLock({ $0.note(kind, text, now: monotonicSeconds()) }) else { return }
    sink(level == LLL_ERR ? .error : .warning, "web (libwebsockets): " + shown)
}

/// The counts of libwebsockets' lines held back, once their minute is over.
func flushLWSLines() {
    let lines = lwsRefusals.withLock { $0.flush(now: monotonicSeconds()) }
    guard !lines.isEmpty, let sink = lwsLog.withLock({ $0 }) else { return }
    for line in lines { sink(.warning, "web (libwebsockets): " + line) }
}

/// libwebsockets' one callback: finds the server through the context's user pointer.
private func webCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else { return 0 }
    let server = Unmanaged<WebServer>.fromOpaque(raw).takeUnretainedValue()
    return server.callback(wsi, reason, user, input, length)
}
