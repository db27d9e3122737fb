import StageCore
import StageControl
import StageLink
import StageService
import StageSync

/// `play --sync leader|follower`: a band's boxes in step (README "A band's boxes in step";
/// `StageSync.SyncNode`). Thread: main.
extension LiveSession {
    static let syncValueOptions = ["--sync", "--sync-followers", "--sync-port"]

    /// Starts sync when `syncRole` is set, before the switcher's thread starts (it hooks the
    /// switcher); nil, with a clear error line, when it cannot (no key or a short one, no
    /// followers for a leader, the port taken): the show goes on without sync.
    func startSync(switcher: PresetSwitcher) -> SyncNode? {
        let s = setup.service.settings
        guard let roleText = s.text(.syncRole) else { return nil }
        do {
            let key = try SyncKey(s.text(.syncKey))
            var role = SyncNode.Role.follower
            if roleText == "leader" {
                guard let list = s.text(.syncFollowers) else {
                    throw SyncError("a leader needs syncFollowers: its followers' HOST:PORT, comma-separated")
                }
                role = .leader(followers: try SyncAddress.parseList(list).get())
            }
            let port = UInt16(s.integer(.syncPort) ?? Int(SyncNode.defaultPort))
            let node = try SyncNode(options: .init(role: role, key: key, port: port), switcher: switcher, log: { LogOutput.emit($0, $1) })
            try node.start()
            if case .leader(let followers) = role {
                Log.info("sync: leading \(followers.map(\.description).joined(separator: ", ")) from udp port \(port)")
            } else {
                Log.info("sync: following a leader on udp port \(port)")
            }
            if !setup.link { Log.info("sync: without --link, followers switch when the message comes (not on a shared bar line)") }
            return node
        } catch {
            Log.error("sync: \(error); playing without sync")
            return nil
        }
    }

    /// Whether this run syncs (`syncRole` set): then every song can be transposed live, so
    /// that a follower can take its leader's transpose and a leader's can be told.
    var syncs: Bool { setup.service.settings.text(.syncRole) != nil }

    /// Whether this run leads a band (`syncRole` leader): its transposes wait for a bar line.
    var leadsBand: Bool { setup.service.settings.text(.syncRole) == "leader" }

    /// The shared beat for sync, from the Link session's last block, carried to now.
    static func syncClock(_ link: LinkSession) -> @Sendable () -> SyncClock? {
        { [link] in
            guard let block = link.lastBlock else { return nil }
            let beat = block.beat + Double(link.clockMicros - block.micros) / 60e6 * block.tempo
            return SyncClock(beat: beat, tempo: block.tempo, shared: link.peers > 0)
        }
    }
}

/// Says, with Link, at which beat each song's switch began (the block nearest the beat it
/// was held for), and when that was on Link's clock (µs, CLOCK_MONOTONIC_RAW: boxes on one
/// machine compare these directly). Thread: main (each turn of the loop).
struct SwitchBeatWatch {
    var seen = 0
    var seenJumps = 0
    var seenRecalls = 0
    var seenTransposes = 0

    mutating func update(_ player: RackPlayer, link: LinkSession, song: Int) {
        Self.say(player.switchOnBeat, &seen, link) { _, line in "Link: song \(song + 1) began \(line)" }
        // A section jump (the song's clock, from a button, the page, OSC or a sync leader).
        Self.say(player.sectionJumpOnBeat, &seenJumps, link) { n, line in "Link: section jump \(n) began \(line)" }
        // A snapshot recall and a transpose held for a bar line (a sync leader's own, or its follower's).
        Self.say(player.snapshotOnBeat, &seenRecalls, link) { n, line in "Link: snapshot recall \(n) made \(line)" }
        Self.say(player.transposeOnBeat, &seenTransposes, link) { n, line in "Link: transpose \(n) made \(line)" }
    }

    /// Logs `text(count, line)` once for each new `event` (a beat and a running count).
    static func say(_ event: (beat: Double, count: Int), _ seen: inout Int, _ link: LinkSession, _ text: (Int, String) -> String) {
        guard event.count != seen, let line = line(beat: event.beat, link) else { return }
        seen = event.count
        Log.info(text(event.count, line))
    }

    /// "at beat 4.001 (120 BPM) at 23367155059 us": `beat` on Link's clock.
    static func line(beat: Double, _ link: LinkSession) -> String? {
        guard let block = link.lastBlock, block.tempo > 0 else { return nil }
        let micros = block.micros + Int64(((beat - block.beat) / block.tempo * 60e6).rounded())
        return "at beat \(formatNumber((beat * 10000).rounded() / 10000)) (\(formatNumber((block.tempo * 100).rounded() / 100)) BPM) at \(micros) us"
    }
}
