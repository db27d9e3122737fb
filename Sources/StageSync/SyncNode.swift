import StageControl
import StageCore
import StageOSC
import StageRemote
import StageService
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where the shared beat is now (Link's session, read by the app from the last block):
/// the beat, the tempo, and whether another program shares the session (followers trust a
/// leader's beats only then). Thread: any (a value).
public struct SyncClock: Sendable {
    public var beat: Double
    public var tempo: Double
    public var shared: Bool
    public init(beat: Double, tempo: Double, shared: Bool) {
        self.beat = beat
        self.tempo = tempo
        self.shared = shared
    }
}

/// A band's boxes in step (README "A band's boxes in step"): one box leads, the others
/// follow its song changes (each switching on the same bar line of the shared Link
/// timeline), its snapshot recalls, and catch up from its state, sent every second. Signed
/// OSC messages (`SyncMessage`, `SyncKey`) on a UDP port of its own (`syncPort`, never the
/// remote's). The sync thread ("stagerack-sync") receives, sends and keeps the time; the
/// control thread asks it, through `switchBeat`, at which beat a song's switch begins; the
/// render thread never sees it (the switch waits in `RackPlayer.holdNextSwitch`).
/// Thread: main (`init`, `start`, `stop`); members say otherwise where they are.
public final class SyncNode: @unchecked Sendable {
    public enum Role: Sendable, Equatable {
        case leader(followers: [SyncAddress])
        case follower
    }

    public struct Options: Sendable {
        public var role: Role
        public var key: SyncKey
        public var port: UInt16
        /// Seconds between two state messages of the leader (a follower's catch-up).
        public var stateInterval = 1.0
        /// Seconds without an answer after which the leader says a follower is silent.
        public var silentAfter = 3.0
        /// The least time from a song change on the leader to the bar line it happens at
        /// (the followers load the song's rack meanwhile).
        public var leadSeconds = 0.3
        public init(role: Role, key: SyncKey, port: UInt16) {
            self.role = role
            self.key = key
            self.port = port
        }
    }

    /// The port used when `syncPort` is not set.
    public static let defaultPort: UInt16 = 9720

    let options: Options
    let socket: SyncSocket
    let switcher: PresetSwitcher
    /// Reads the shared beat (nil: no Link, changes happen on receipt); set once Link runs.
    let clockSource = Locked<@Sendable () -> SyncClock?>({ nil })
    let log: @Sendable (LogLevel, String) -> Void
    let session = SyncKey.randomSessionID()
    var sequence: UInt64 = 0
    var refusals = RefusalLog()
    let running = Atomic<Bool>(false)
    var thread: StageThread?
    /// Messages the control thread wants sent (the leader's song changes and recalls).
    /// Producers: the control thread; consumer: the sync thread.
    let outbox = Locked<[SyncMessage]>([])
    /// The follower's pending switch beats by song (set by the sync thread when a song
    /// message comes, taken by the control thread in `switchBeat`).
    let pendingBeats = Locked<[Int: Double]>([:])
    /// The leader's state (nil on a follower). Thread: sync.
    var leader: SyncLeaderState?
    /// Whether this box leads (fixed at `init`). Thread: any.
    let leads: Bool
    var follower = SyncFollowerState()

    /// Binds the sync port (a clear error when it is taken). Thread: main.
    public init(options: Options, switcher: PresetSwitcher, log: @escaping @Sendable (LogLevel, String) -> Void) throws(SyncError) {
        self.options = options
        self.switcher = switcher
        self.log = log
        if let failure = OSCPacket.libraryFailure { throw SyncError(failure) }
        socket = try SyncSocket(port: options.port)
        if case .leader = options.role { leads = true } else { leads = false }
        if case .leader(let followers) = options.role { leader = SyncLeaderState(followers: followers, now: Self.now()) }
    }

    /// Where the shared beat comes from (Link), once it runs. Thread: main.
    public func setClock(_ clock: @escaping @Sendable () -> SyncClock?) { clockSource.withLock { $0 = clock } }

    /// The shared beat now; nil without Link. Thread: control or sync.
    func clock() -> SyncClock? { clockSource.withLock { $0 }() }

    /// Starts the sync thread and hooks the switcher (`switchBeat`). Thread: main, before
    /// the switcher starts.
    public func start() throws(StageThread.StartError) {
        switcher.switchBeat = { [weak self] index in self?.switchBeat(index) }
        if leads { switcher.recallsOnBarLine = true }  // the followers recall on its bar line
        running.store(true, ordering: .releasing)
        thread = try StageThread(.init(name: "stagerack-sync")) { [self] in
            while running.load(ordering: .acquiring) { turn() }
        }
    }

    /// Stops the sync thread and waits for it (20 ms at most). Thread: main.
    public func stop() {
        guard thread != nil, running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        thread?.join()
        thread = nil
    }

    /// The beat a song's switch waits for: the leader's next bar line (and the followers are
    /// told), or the beat the leader sent this follower. Thread: control.
    func switchBeat(_ index: Int) -> Double? {
        if leads { return leaderSwitchBeat(index) }
        return pendingBeats.withLock { $0.removeValue(forKey: index) }
    }

    /// One turn: datagrams in (at most 256: a flood waits in the socket), then the
    /// leader's or the follower's timed work. Thread: sync.
    func turn() {
        _ = socket.wait(milliseconds: 20)
        for _ in 0..<256 {
            guard let handled = socket.receive({ bytes, from in handle(bytes, from: from) }) else { break }
            _ = handled
        }
        let now = Self.now()
        if leads { leaderTurn(now: now) }
        for line in refusals.flush(now: now) { log(.warning, "sync: \(line)") }
    }

    /// A datagram: opened with the key, then the role's handling; a refusal is logged
    /// (rate limited by class: a flood costs a line a minute). Thread: sync.
    func handle(_ bytes: UnsafeMutableRawBufferPointer, from: sockaddr_in) {
        switch SyncMessage.open(bytes, key: options.key) {
        case .failure(let r): refuse(r.class, "\(r.text) from \(SyncSocket.text(from))")
        case .success(let m):
            if leads { leaderTook(m, from: from) } else { followerTook(m, from: from) }
        }
    }

    func refuse(_ kind: String, _ text: String) {
        if let line = refusals.note(kind, "sync: refused \(text)", now: Self.now()) { log(.warning, line) }
    }

    /// The next message of this run.
    func message(_ kind: SyncMessage.Kind, song: Int) -> SyncMessage {
        sequence += 1
        return SyncMessage(session: session, sequence: sequence, kind: kind, song: song)
    }

    static func now() -> Double { Double(monotonicNanoseconds()) / 1e9 }

    static func fixed3(_ x: Double) -> String { String(Double((x * 1000).rounded()) / 1000) }
}
