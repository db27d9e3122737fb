import StageCore
import StageLink
import StageService

/// `play --link`: the rack joins the Ableton Link session on the network (README "Tempo",
/// "Playing with a band: Ableton Link"). Thread: main.
extension LiveSession {
    /// Makes the Link session at the rack's tempo, joins it and hands it to the player; nil
    /// (with a log line, the show going on without Link) when Link cannot start. A port
    /// another program holds is said once: Link then finds no peers.
    func startLink(player: RackPlayer, tempo: Double, beatsPerBar: Double, latencySeconds: Double) -> LinkSession? {
        do {
            let session = try LinkSession(tempo: tempo, latencySeconds: latencySeconds)
            try session.enable()
            player.session = session
            if let taken = LinkSession.discoveryPortTaken() {
                Log.warning("Link: UDP port \(LinkSession.discoveryPort) is held by another program (\(taken)): no peers can be found; "
                            + "the rack keeps its own tempo")
            }
            Log.info("Link on: a session of one at \(formatNumber(tempo)) BPM, \(formatNumber(beatsPerBar)) beats a bar; "
                     + "looking for peers on UDP port \(LinkSession.discoveryPort)")
            return session
        } catch {
            Log.error("Link could not start (\(error)): the rack keeps its own tempo")
            return nil
        }
    }
}

/// Says when the Link session's peers or tempo change, and gives the status its reading.
/// Thread: main (each turn of the control loop).
struct LinkWatch {
    var peers = 0
    var tempo = 0.0
    var reported = false

    /// `rack`: the tempo the playing rack follows and its source (`RackPlayer.playingTempo`).
    mutating func update(_ session: LinkSession, rack: (bpm: Double, source: TempoSource?)) -> LinkStatus? {
        let peers = session.peers
        guard let block = session.lastBlock else { return nil }
        if peers != self.peers {
            if peers == 0 {
                Log.info("Link: no peers; the rack keeps its own tempo (a session of one)")
            } else {
                Log.info("Link: \(counted(peers, "peer")), session tempo \(fixed2(block.tempo)) BPM")
            }
            self.peers = peers
        }
        if reported && abs(block.tempo - tempo) >= 0.005 {
            Log.info("Link: session tempo \(fixed2(block.tempo)) BPM\(peers > 0 ? "" : " (no peers)")")
        }
        reported = true
        tempo = block.tempo
        return LinkStatus(
            peers: peers, tempo: block.tempo, beat: block.beat, micros: block.micros, rackTempo: rack.bpm, rackSource: rack.source?.name ?? "none")
    }

    func fixed2(_ x: Double) -> String { formatNumber((x * 100).rounded() / 100) }
}
