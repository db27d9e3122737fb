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
/// WebSocket handshakes whose Origin is not the server's own host are refused, as are
/// clients beyond `maxClients`; messages over `maxMessage` bytes close the connection;
/// `ratePerSecond` messages a second per client (bursts of twice that); writing needs the PIN
/// (constant-time, failures slowed) or a session token from it.
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

        public init(address: ListenAddress, pin: String, viewers: Bool, maxClients: Int, staticFolder: String) {
            self.address = address
            self.pin = pin
            self.viewers = viewers
            self.maxClients = maxClients
            self.staticFolder = staticFolder
        }
    }

    /// One WebSocket client. Thread: web.
    final class Client {
        let wsi: OpaquePointer
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
    let log: @Sendable (String) -> Void
    /// Set once in `init` (it needs `self` as its user pointer); destroyed only in `deinit`,
    /// once no thread can wake it any more.
    private(set) var context: OpaquePointer?
    private(set) var protocols: UnsafeMutableRawPointer?
    let running = Atomic<Bool>(false)
    let exited = DispatchSemaphore(value: 0)
    var thread: Thread?
    /// The files that may be served (name → MIME type), read once at start.
    let files: [String: String]

    // Web thread state.
    var security: WebSecurity
    var clients: [Int32: Client] = [:]
    var nextID: Int32 = 1
    var pending = 0

    // Counters (any thread).
    public let handshakesRefused = Atomic<Int>(0)
    public let messagesRefused = Atomic<Int>(0)
    public var clientCount: Int { clientsNow.load(ordering: .relaxed) }
    let clientsNow = Atomic<Int>(0)

    /// Binds the port (an error when it cannot). Thread: main.
    public init(options: Options, hub: RemoteHub, log: @escaping @Sendable (String) -> Void) throws(RemoteError) {
        self.options = options
        self.hub = hub
        self.log = log
        security = WebSecurity(pin: options.pin, maxTokens: options.maxSessions)
        files = Self.staticFiles(in: options.staticFolder)
        guard files["index.html"] != nil else { throw RemoteError("web: no index.html in \(options.staticFolder)") }
        lws_set_log_level(LLL_ERR, nil)
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
                        MemoryLayout<Int32>.size, options.maxMessage, cert, key, &list)
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
    public func start() {
        running.store(true, ordering: .releasing)
        let t = Thread { [self] in
            nameThisThread("stagerack-web")
            while running.load(ordering: .acquiring) { _ = lws_service(context, 0) }
            exited.signal()
        }
        t.name = "stagerack-web"
        thread = t
        t.start()
    }

    /// Stops the web thread (the connections close when the server is released: other
    /// threads may still call `wake` until they stop). Thread: main.
    public func stop() {
        guard thread != nil, running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake()
        exited.wait()
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
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            return admit(wsi) ? 0 : 1
        case LWS_CALLBACK_ESTABLISHED:
            let id = nextID
            nextID &+= 1
            user?.storeBytes(of: id, as: Int32.self)
            let c = Client(wsi: wsi, rate: options.ratePerSecond)
            clients[id] = c
            clientsNow.store(clients.count, ordering: .relaxed)
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
        default:
            break
        }
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }

    /// Static files by exact name; anything else 404, any method but GET 405.
    func serveHTTP(_ wsi: OpaquePointer, path: String) -> Int32 {
        guard stage_lws_is_get(wsi) != 0 else {
            _ = lws_return_http_status(wsi, 405, nil)
            return -1
        }
        let name = path == "/" || path.isEmpty ? "index.html" : String(path.drop { $0 == "/" })
        guard let mime = files[name] else {
            _ = lws_return_http_status(wsi, 404, nil)
            return stage_lws_http_done(wsi)
        }
        let headers = "X-Frame-Options: DENY\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n"
            + "Content-Security-Policy: default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:\r\n"
        let r = headers.withCString { h in lws_serve_http_file(wsi, options.staticFolder + "/" + name, mime, h, Int32(strlen(h))) }
        return r < 0 ? -1 : 0
    }

    /// A WebSocket handshake: the Origin must be this server's host, and there must be room.
    func admit(_ wsi: OpaquePointer) -> Bool {
        let origin = header(wsi, WSI_TOKEN_ORIGIN)
        let host = header(wsi, WSI_TOKEN_HOST)
        guard WebSecurity.originMatches(origin: origin, host: host) else {
            handshakesRefused.add(1, ordering: .relaxed)
            log("web: refused a WebSocket from origin \(origin ?? "?") (this server is \(host ?? "?"))")
            return false
        }
        guard clients.count < options.maxClients else {
            handshakesRefused.add(1, ordering: .relaxed)
            log("web: refused a client: \(options.maxClients) connected already (webClients)")
            return false
        }
        return true
    }

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        var buffer = [CChar](repeating: 0, count: 512)
        guard stage_lws_header(wsi, token, &buffer, Int32(buffer.count)) >= 0 else { return nil }
        return String(cBuffer: buffer)
    }

    /// A fragment of a message; the whole message is handled at its last fragment.
    func receive(_ c: Client, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        if let input, length > 0 { c.incoming += UnsafeRawBufferPointer(start: input, count: length) }
        if c.incoming.count > options.maxMessage {
            messagesRefused.add(1, ordering: .relaxed)
            stage_lws_close_policy(c.wsi, "message over \(options.maxMessage) bytes")
            return -1
        }
        guard lws_is_final_fragment(c.wsi) != 0, lws_remaining_packet_payload(c.wsi) == 0 else { return 0 }
        let bytes = c.incoming
        c.incoming.removeAll(keepingCapacity: true)
        guard c.rate.allow(now: monotonicSeconds()) else {
            messagesRefused.add(1, ordering: .relaxed)
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
            queue(c, WebProtocol.error(e.message))
        case .success(.login(let pin)):
            switch security.login(pin, now: monotonicSeconds()) {
            case .token(let t):
                c.canWrite = true
                queue(c, WebProtocol.session(token: t))
                if !options.viewers { sendState(c) }
            case .wrongPIN(let wait):
                log("web: a wrong PIN\(wait > 0 ? "; the next try waits \(Int(wait)) s" : "")")
                queue(c, WebProtocol.error("wrong PIN" + (wait > 0 ? "; try again in \(Int(wait)) s" : "")))
            case .tooSoon(let wait):
                queue(c, WebProtocol.error("too many wrong PINs: try again in \(Int(wait.rounded(.up))) s"))
            }
        case .success(.resume(let token)):
            if security.isValid(token: token) {
                c.canWrite = true
                queue(c, WebProtocol.session(token: token))
                if !options.viewers { sendState(c) }
            } else {
                queue(c, WebProtocol.error("the session has ended: log in with the PIN"))
            }
        case .success(.meters(let on)):
            guard c.canWrite || options.viewers else { return queue(c, WebProtocol.error("log in with the PIN first")) }
            c.meters = on
        case .success(.save(let snapshot)):
            guard c.canWrite else { return queue(c, WebProtocol.error("read-only: log in with the PIN to save")) }
            guard hub.requestSave(snapshot: snapshot) else { return queue(c, WebProtocol.error("busy: a save is under way; try again")) }
        case .success(.command(let command)):
            guard c.canWrite else { return queue(c, WebProtocol.error("read-only: log in with the PIN to change anything")) }
            guard hub.fromWeb.push(command) else { return queue(c, WebProtocol.error("busy: too many commands waiting; this one is dropped")) }
            hub.wakeControl()
        }
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

/// libwebsockets' one callback: finds the server through the context's user pointer.
private func webCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else { return 0 }
    let server = Unmanaged<WebServer>.fromOpaque(raw).takeUnretainedValue()
    return server.callback(wsi, reason, user, input, length)
}
