import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// What the leader knows of its followers: each one's address (resolved when its name
/// resolves), its answers (a replay window of its own) and whether it was said silent.
/// Thread: sync (the control thread only pushes into `SyncNode.outbox`).
struct SyncLeaderState {
    struct Follower {
        var address: SyncAddress
        var socketAddress: sockaddr_in?
        var window = SyncReplayWindow()
        var lastAnswer: Double?
        var saidSilent = false
    }
    var followers: [Follower]
    var lastState = 0.0
    var lastResolve = 0.0
    let started: Double
    /// The snapshot recalled last in the song playing (nil after a song change).
    var snapshot: String?
    /// The song's transpose as last told (nil: not yet, or the song has none), and its song.
    var transpose: Int?
    var transposeSong: Int?
    /// The song clock whose jumps were told, and how many of them.
    var jumpClock: ObjectIdentifier?
    var jumpCount = 0
    /// The same for the snapshot recalls held for a bar line (`tellHeldRecall`).
    var recallClock: ObjectIdentifier?
    var recallCount = 0
    /// The transposes told with their bar line on the song's clock: its identity, how many
    /// were armed, and the last total told (not told again when it lands).
    var transposeClock: ObjectIdentifier?
    var transposeArms = 0
    var transposeTold: Int?

    init(followers: [SyncAddress], now: Double) {
        self.followers = followers.map { Follower(address: $0) }
        started = now
    }
}

extension SyncNode {
    /// The leader's song change: the next bar line at least `leadSeconds` ahead on the
    /// shared timeline (nil without Link: at once); the followers are told. Thread: control.
    func leaderSwitchBeat(_ index: Int) -> Double? {
        guard index != switcher.currentIndex else { return nil }  // the song reloaded (SIGHUP, --watch): its own business
        var beat: Double?
        let bar = switcher.currentEngine.beatsPerBar
        if let c = clock(), c.tempo > 0, bar > 0 {
            let earliest = c.beat + options.leadSeconds * c.tempo / 60
            beat = (earliest / bar).rounded(.up) * bar
        }
        var m = SyncMessage(session: session, sequence: 0, kind: .song, song: index)
        m.beat = beat
        m.bar = beat == nil ? nil : bar
        outbox.withLock { $0.append(m) }
        return beat
    }

    /// The leader recalled a snapshot at once: the followers recall it too (on receipt). A
    /// recall held for a bar line (`PresetSwitcher.holdsRecalls`) is told by the sync
    /// thread instead, with its bar line (`tellHeldRecall`). Thread: control.
    public func leaderRecalled(snapshot name: String) {
        guard leads, !switcher.holdsRecalls else { return }
        var m = SyncMessage(session: session, sequence: 0, kind: .snapshot, song: switcher.currentIndex)
        m.snapshot = name
        outbox.withLock { $0.append(m) }
    }

    /// Sends what the control thread queued, the state every `stateInterval`, and says
    /// which followers are silent. Thread: sync.
    func leaderTurn(now: Double) {
        guard var state = leader else { return }
        defer { leader = state }
        if now - state.lastResolve >= 5 || state.lastResolve == 0 {
            state.lastResolve = now
            for i in state.followers.indices where state.followers[i].socketAddress == nil {
                state.followers[i].socketAddress = state.followers[i].address.resolved()
                if state.followers[i].socketAddress == nil {
                    refuse("resolve", "nothing: follower \(state.followers[i].address) does not resolve (yet); retrying every 5 s")
                }
            }
        }
        for var m in outbox.withLock({ q -> [SyncMessage] in defer { q.removeAll() }; return q }) {
            if m.kind == .song {
                state.snapshot = nil
                log(.info, "sync: leading song \(m.song + 1)" + (m.beat.map { " at beat \(Self.fixed3($0))" } ?? " now (no Link: followers switch on receipt)"))
            }
            if m.kind == .snapshot { state.snapshot = m.snapshot }
            if let beat = m.beat, let c = clock() { m.ahead = max(0, beat - c.beat) }  // measured as it leaves
            sequence += 1
            m.sequence = sequence
            send(m, to: state)
        }
        tellTranspose(&state)
        tellSectionJump(&state)
        tellHeldRecall(&state)
        if now - state.lastState >= options.stateInterval {
            state.lastState = now
            var m = message(.state, song: switcher.currentIndex)
            m.beat = clock()?.beat
            m.snapshot = state.snapshot
            m.section = switcher.songClock?.publishedNames.current
            m.transpose = switcher.songClock?.transposer?.published
            send(m, to: state)
        }
        for i in state.followers.indices {
            let f = state.followers[i]
            let silentFor = now - (f.lastAnswer ?? state.started)
            if silentFor >= options.silentAfter && !f.saidSilent {
                state.followers[i].saidSilent = true
                log(.warning, "sync: follower \(f.address) has not answered for \(Int(silentFor)) s (not running, another syncKey, "
                    + "or a firewall on udp \(f.address.port)); the show goes on, and it catches up when it answers")
            }
        }
    }

    /// The song's transpose asked within the song playing (a button, the page, OSC): told
    /// when asked, with the song beat it lands on (`SongTranspose.armedTranspose`: its next
    /// bar line, or the next section's), so that the followers take it there too; else (a
    /// section placed by time) told when it changed. A new song's own is told by the next
    /// state. Thread: sync.
    func tellTranspose(_ state: inout SyncLeaderState) {
        let song = switcher.currentIndex
        let clock = switcher.songClock
        let now = clock?.transposer?.published
        defer { (state.transpose, state.transposeSong) = (now, song) }
        let id = clock.map { ObjectIdentifier($0) }
        if state.transposeClock != id { (state.transposeClock, state.transposeArms, state.transposeTold) = (id, 0, nil) }
        if let a = clock?.transposer?.armedTranspose, a.count != state.transposeArms {
            state.transposeArms = a.count
            state.transposeTold = a.total
            var m = message(.transpose, song: song)
            m.transpose = a.total
            m.at = a.bar
            log(.info, "sync: leading transpose \(Self.signed(a.total)) at song beat \(a.bar)")
            return send(m, to: state)
        }
        guard let t = now, t != state.transposeTold, state.transposeSong == song, let told = state.transpose, told != t else { return }
        var m = message(.transpose, song: song)
        m.transpose = t
        log(.info, "sync: leading transpose \(Self.signed(t))")
        send(m, to: state)
    }

    /// A section jump armed on the leader's song clock (a button, the page, OSC), told
    /// within a turn (20 ms), so that the followers arm it for the same bar line: the one at
    /// its song beat. Thread: sync.
    func tellSectionJump(_ state: inout SyncLeaderState) {
        guard let clock = switcher.songClock else { return state.jumpClock = nil }
        let id = ObjectIdentifier(clock)
        let armed = clock.armedJump
        let told = state.jumpClock == id ? state.jumpCount : 0  // a new song's clock counts from 0
        state.jumpClock = id
        state.jumpCount = armed?.count ?? 0
        guard let a = armed, a.count != told else { return }
        var m = message(.section, song: switcher.currentIndex)
        m.jump = a.jump
        m.at = a.bar
        log(.info, "sync: leading a section jump (\(a.jump == .next ? "next" : "repeat")) at song beat \(a.bar)")
        send(m, to: state)
    }

    /// A snapshot recall held on the leader's song clock for its next bar line, told within
    /// a turn (20 ms) with that bar line's song beat, so that the followers recall it on the
    /// same one. Thread: sync.
    func tellHeldRecall(_ state: inout SyncLeaderState) {
        guard let clock = switcher.songClock, let held = clock.heldSnapshots else { return state.recallClock = nil }
        let id = ObjectIdentifier(clock)
        let armed = held.armedRecall
        let told = state.recallClock == id ? state.recallCount : 0  // a new song's clock counts from 0
        state.recallClock = id
        state.recallCount = armed?.count ?? 0
        guard let a = armed, a.count != told, a.snapshot < held.names.count else { return }
        var m = message(.snapshot, song: switcher.currentIndex)
        m.snapshot = held.names[a.snapshot]
        m.at = a.bar
        state.snapshot = m.snapshot
        log(.info, "sync: leading snapshot \"\(held.names[a.snapshot])\" at song beat \(a.bar)")
        send(m, to: state)
    }

    func send(_ m: SyncMessage, to state: SyncLeaderState) {
        let bytes = m.datagram(key: options.key)
        for f in state.followers { if let a = f.socketAddress { socket.send(bytes, to: a) } }
    }

    /// A signed message to the leader: a follower's answer, from a follower's address.
    /// Thread: sync.
    func leaderTook(_ m: SyncMessage, from: sockaddr_in) {
        guard var state = leader else { return }
        defer { leader = state }
        guard m.kind == .ack else { return refuse("role", "a \(m.kind.rawValue) message from \(SyncSocket.text(from)): this box leads (syncRole leader)") }
        guard let i = state.followers.firstIndex(where: { $0.socketAddress.map { SyncSocket.same($0, from) } ?? false }) else {
            return refuse("stranger", "an answer from \(SyncSocket.text(from)), which is not in syncFollowers")
        }
        switch state.followers[i].window.take(session: m.session, sequence: m.sequence) {
        case .replayed(let last): return refuse("replayed", "a replayed answer from \(state.followers[i].address) (seq \(m.sequence), last \(last))")
        case .accepted, .newSession: break
        }
        let f = state.followers[i]
        if f.lastAnswer == nil || f.saidSilent {
            log(.info, "sync: follower \(f.address) answers\(f.saidSilent ? " again" : ""), playing song \(m.song + 1)")
        }
        state.followers[i].lastAnswer = Self.now()
        state.followers[i].saidSilent = false
    }
}
