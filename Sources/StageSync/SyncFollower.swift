import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// What a follower knows of its leader: the replay window of its messages, the song it
/// asked the switcher for last (and when), the snapshot it recalled last on the leader's
/// word. Thread: sync.
struct SyncFollowerState {
    var window = SyncReplayWindow()
    var requestedSong: Int?
    var requestedAt = 0.0
    var snapshot: String?
    var snapshotSong: Int?
    var sectionSaid: String?
    /// The transpose last asked of the switcher on the leader's word, and in which song.
    var transpose: Int?
    var transposeSong: Int?
}

extension SyncNode {
    /// A signed message from the leader: refused if replayed or stale; a song change is
    /// scheduled at its beat (with a shared Link session, else at once), a snapshot
    /// recalled, a state caught up with; each answered. Thread: sync.
    func followerTook(_ m: SyncMessage, from: sockaddr_in) {
        guard m.kind != .ack else { return refuse("role", "an answer from \(SyncSocket.text(from)): this box follows (syncRole follower)") }
        let c = clock()
        switch follower.window.take(session: m.session, sequence: m.sequence) {
        case .replayed(let last): return refuse("replayed", "a replayed message (seq \(m.sequence), last taken \(last)) from \(SyncSocket.text(from))")
        case .newSession(let first):
            log(.info, "sync: following the leader at \(SyncSocket.text(from))" + (first ? "" : " (a new run: it restarted)"))
        case .accepted: break
        }
        let now = Self.now()
        switch m.kind {
        case .song: followSong(m, clock: c, now: now)
        case .snapshot: followSnapshot(m)
        case .state: catchUp(m, now: now)
        case .transpose: followTranspose(m, catchingUp: false)
        case .section: followSection(m)
        case .ack: break
        }
        answer(from: from)
    }

    /// A song change: at the leader's bar line when both share the Link session (the render
    /// thread holds the switch until then), else at once. Link shares the beat's phase, not
    /// its magnitude: the bar line is the one `ahead` beats from now on this box's timeline,
    /// rounded to a whole bar (exact while the message takes less than half a bar).
    func followSong(_ m: SyncMessage, clock c: SyncClock?, now: Double) {
        var beat: Double?
        if let c, c.shared, let ahead = m.ahead, let bar = m.bar {
            beat = ((c.beat + ahead) / bar).rounded() * bar
        }
        guard m.song < switcher.setlist.entries.count else {
            return refuse("song", "song \(m.song + 1) from the leader: this box's setlist has \(switcher.setlist.entries.count)")
        }
        guard m.song != switcher.currentIndex else { return }  // already there (caught up from a state)
        if let beat { pendingBeats.withLock { $0[m.song] = beat } }
        follower.requestedSong = m.song
        follower.requestedAt = now
        follower.snapshot = nil
        log(.info, "sync: the leader's song \(m.song + 1) " + (beat.map { "at beat \(Self.fixed3($0))" } ?? "now (no shared Link session)"))
        switcher.request(.entry(m.song))
    }

    /// The leader's snapshot recall: on the same bar line (its song beat, `at`) when the
    /// leader held it for one, else at once. Thread: sync.
    func followSnapshot(_ m: SyncMessage) {
        guard let name = m.snapshot, m.song == switcher.currentIndex else { return }
        follower.snapshot = name
        follower.snapshotSong = m.song
        if let at = m.at {
            log(.info, "sync: the leader recalls snapshot \"\(name)\" at song beat \(at)")
            return switcher.requestSnapshot(name, atBar: at)
        }
        log(.info, "sync: the leader recalls snapshot \"\(name)\"")
        switcher.request(.snapshot(name))
    }

    /// The leader's state: this box catches up when it plays another song (one it did
    /// not just ask for) or missed a snapshot; a section that differs is said once.
    func catchUp(_ m: SyncMessage, now: Double) {
        let playing = switcher.currentIndex
        if m.song != playing {
            guard follower.requestedSong != m.song || now - follower.requestedAt > 2 else { return }
            guard m.song < switcher.setlist.entries.count else {
                return refuse("song", "song \(m.song + 1) from the leader: this box's setlist has \(switcher.setlist.entries.count)")
            }
            log(.info, "sync: catching up with the leader: song \(m.song + 1)" + (m.section.map { ", section \($0)" } ?? ""))
            follower.requestedSong = m.song
            follower.requestedAt = now
            follower.snapshot = nil
            switcher.request(.entry(m.song))
            return
        }
        if let name = m.snapshot, follower.snapshot != name || follower.snapshotSong != m.song {
            log(.info, "sync: catching up with the leader: snapshot \"\(name)\"")
            follower.snapshot = name
            follower.snapshotSong = m.song
            switcher.request(.snapshot(name))
        }
        followTranspose(m, catchingUp: true)
        let mine = switcher.songClock?.publishedNames.current
        if let section = m.section, section != mine, follower.sectionSaid != section {
            follower.sectionSaid = section
            log(.info, "sync: the leader is in section \(section), this box in \(mine ?? "none") (sections follow each box's own song clock)")
        }
    }

    /// The leader's transpose (a `.transpose` message, or its state's): asked of the
    /// switcher, at once, when this box plays the same song and its transpose differs;
    /// asked once per song and value (the switcher's answer shows in the next state).
    func followTranspose(_ m: SyncMessage, catchingUp: Bool) {
        guard let t = m.transpose, m.song == switcher.currentIndex else { return }
        guard let mine = switcher.songClock?.transposer?.published else {
            if !catchingUp { log(.info, "sync: the leader transposes to \(Self.signed(t)): this song cannot be transposed here") }
            return
        }
        if let at = m.at, !catchingUp {  // on the leader's bar line (or section start)
            follower.transpose = t
            follower.transposeSong = m.song
            log(.info, "sync: the leader transposes to \(Self.signed(t)) at song beat \(at)")
            return switcher.requestTranspose(t, atBar: at)
        }
        guard t != mine, follower.transpose != t || follower.transposeSong != m.song else { return }
        follower.transpose = t
        follower.transposeSong = m.song
        log(.info, "sync: " + (catchingUp ? "catching up with the leader: transpose " : "the leader transposes to ") + Self.signed(t))
        switcher.requestTranspose(t)
    }

    /// The leader's section jump: armed for the same bar line (its song beat) when this box
    /// plays the same song; the song clocks of boxes that switched on one bar line agree.
    func followSection(_ m: SyncMessage) {
        guard let jump = m.jump, let at = m.at, m.song == switcher.currentIndex else { return }
        log(.info, "sync: the leader jumps to " + (jump == .next ? "the next section" : "the section again") + " at song beat \(at)")
        switcher.requestSection(jump, atBar: at)
    }

    /// "+2", "0", "-3".
    static func signed(_ n: Int) -> String { n > 0 ? "+\(n)" : "\(n)" }

    /// Tells the leader this box is here and what it plays.
    func answer(from: sockaddr_in) {
        let m = message(.ack, song: switcher.currentIndex)
        socket.send(m.datagram(key: options.key), to: from)
    }
}
