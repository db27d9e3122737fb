import Synchronization

/// Switches on a shared beat (a band's boxes in step, `StageSync`): the control thread holds
/// the next switch until the shared session (`TempoSession`, Link) reaches a beat; the render
/// thread begins it at the block nearest that beat and says which beat that block took.
extension RackPlayer {
    /// Beats ahead of the session past which a held switch is taken as nonsense and begins
    /// at once (a clock that jumped, a bad message): the show never waits on it.
    public static let longestSwitchHoldBeats = 32.0

    /// Holds the next submitted rack until the session's beat reaches `beat` (nil: no hold).
    /// Without a session the hold is ignored (the switch begins at once). Call it before
    /// `submit`. Thread: control.
    public func holdNextSwitch(untilBeat beat: Double?) {
        switchGateBits.store((beat ?? .nan).bitPattern, ordering: .releasing)
    }

    /// The last switch that began with a session: the session's beat at its block, and how
    /// many such switches there have been (0: none yet). Thread: any.
    public var switchOnBeat: (beat: Double, count: Int) {
        let count = switchesOnBeat.load(ordering: .acquiring)
        return (Double(bitPattern: switchBeatBits.load(ordering: .relaxed)), count)
    }

    /// Whether a waiting switch may begin in this block of `n` frames: no hold, no session,
    /// or the hold's beat within half a block of the block's beat (the block nearest it), or
    /// absurdly far ahead. Opening clears the hold. Thread: render (no lock, no allocation).
    @inline(__always)
    func switchGateOpen(frames n: Int) -> Bool {
        let gate = Double(bitPattern: switchGateBits.load(ordering: .acquiring))
        if gate.isNaN { return true }
        guard let session, incoming.approximateCount > 0 else { return session == nil }
        let state = session.read(quantum: current.beatsPerBar)
        let halfBlockBeats = Double(n) / 2 / current.plan.sampleRate * state.tempo / 60
        guard state.beat + halfBlockBeats >= gate || gate - state.beat > Self.longestSwitchHoldBeats else { return false }
        switchGateBits.store(Double.nan.bitPattern, ordering: .relaxed)
        return true
    }

    /// The last section jump taken with a session (`SongClock`): the session's beat at its
    /// frame, and how many there have been (0: none yet). Thread: any.
    public var sectionJumpOnBeat: (beat: Double, count: Int) {
        let count = jumpsOnBeat.load(ordering: .acquiring)
        return (Double(bitPattern: jumpBeatBits.load(ordering: .relaxed)), count)
    }

    /// The last snapshot recall held for a bar line (`HeldSnapshots`) made with a session:
    /// the session's beat at its frame, and how many there have been (0: none yet).
    /// Thread: any.
    public var snapshotOnBeat: (beat: Double, count: Int) {
        let count = recallsOnBeat.load(ordering: .acquiring)
        return (Double(bitPattern: recallBeatBits.load(ordering: .relaxed)), count)
    }

    /// The last live transpose applied with a session (`SongTranspose`): the session's beat
    /// at its frame, and how many there have been (0: none yet). Thread: any.
    public var transposeOnBeat: (beat: Double, count: Int) {
        let count = transposesOnBeat.load(ordering: .acquiring)
        return (Double(bitPattern: transposeBeatBits.load(ordering: .relaxed)), count)
    }

    /// Records the session's beat at the frame of a section jump, a held snapshot recall and
    /// a live transpose the playing rack's song clock made in the block of `n` frames just
    /// rendered.
    /// Thread: render.
    @inline(__always)
    func noteClockBeats(frames n: Int) {
        guard current.songClockMadeSomething, let clock = current.songClock else { return }
        if clock.jumpedAt >= 0 {
            jumpBeatBits.store(sessionBeat(atFrame: clock.jumpedAt, frames: n).bitPattern, ordering: .relaxed)
            jumpsOnBeat.add(1, ordering: .releasing)
        }
        if let held = clock.heldSnapshots, held.recalledAt >= 0 {
            recallBeatBits.store(sessionBeat(atFrame: held.recalledAt, frames: n).bitPattern, ordering: .relaxed)
            recallsOnBeat.add(1, ordering: .releasing)
        }
        if let transposer = clock.transposer, transposer.appliedAt >= 0 {
            transposeBeatBits.store(sessionBeat(atFrame: transposer.appliedAt, frames: n).bitPattern, ordering: .relaxed)
            transposesOnBeat.add(1, ordering: .releasing)
        }
    }

    /// The session's beat at engine frame `frame` of the block of `n` frames just rendered.
    /// Thread: render.
    @inline(__always)
    func sessionBeat(atFrame frame: Int64, frames n: Int) -> Double {
        let offset = Double(frame - (current.sampleTime - Int64(n)))
        return sessionState.beat + offset * sessionState.tempo / 60 / current.plan.sampleRate
    }

    /// Records the beat of the block where a switch began. Thread: render.
    @inline(__always)
    func noteSwitchBeat() {
        switchBeatBits.store(sessionState.beat.bitPattern, ordering: .relaxed)
        switchesOnBeat.add(1, ordering: .releasing)
    }
}
