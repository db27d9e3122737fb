import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// One value the page's soundcheck proposes: `unit.parameter` = `value` (`json`: as the
/// rack file writes it), and why. Thread: any (a value).
public struct SoundcheckValue: Sendable, Equatable {
    public var unit: String
    public var parameter: String
    public var value: Float
    public var json: String
    public var reason: String

    public init(unit: String, parameter: String, value: Float, json: String, reason: String) {
        self.unit = unit
        self.parameter = parameter
        self.value = value
        self.json = json
        self.reason = reason
    }
}

/// What the analysis of a take gives the page: the values and a summary, or the refusal.
/// Thread: any (a value).
public struct SoundcheckOffer: Sendable, Equatable {
    public var summary: String
    public var values: [SoundcheckValue]
    /// What the rack lacks and things worth knowing, in words.
    public var notes: [String]

    public init(summary: String, values: [SoundcheckValue], notes: [String]) {
        self.summary = summary
        self.values = values
        self.notes = notes
    }
}

/// The page's soundcheck as every page sees it (`RemoteView.soundcheck`): the guide while
/// the take is recorded, then the proposal (or why there is none). Thread: any (a value).
public struct RemoteSoundcheck: Sendable, Equatable {
    public enum Step: String, Sendable {
        case quiet, sing, analysing, proposal, refused
    }

    public var step: Step
    public var secondsLeft = 0
    /// The input's peak over the last turns (dBFS), while recording.
    public var peakDB: Float = -120
    /// The proposal, or the refusal's message.
    public var offer: SoundcheckOffer?
    public var message = ""
}

/// The soundcheck from the page, on the control thread: "start" arms the player's
/// `InputTap` (the render thread copies the engine's input into its lock-free ring), each
/// turn drains it into the take and updates the guide (`SoundcheckGuide`: quiet, then
/// sing, counted down); the full take goes to `analyseSoundcheck` (set by `play`: the
/// offline soundcheck of `stagerack soundcheck --input`) on a thread of its own, so the
/// control thread never waits for it; the proposal is shown on every page. "apply" sets
/// the values live (as the page's knobs do) and writes them into the rack file keeping its
/// text (`saveRack`, as "save" does); "cancel" ends it. A new rack ends it too.
/// Thread: control (the analysis on its own thread, handing back through `analysed`).
struct PageSoundcheck {
    var guide = SoundcheckGuide()
    var take: [Float] = []
    var frames = 0
    var generation: UInt32 = 0
    var peak: Float = 0
    var lastPeakTurn = 0.0
    var analysis: StageThread?
    /// The offer for the take being analysed, or its refusal. Analysis thread → control.
    let analysed = Locked<Result<SoundcheckOffer, RemoteError>?>(nil)
}

extension RemoteHub {
    /// Starts the soundcheck (the tap armed on `channel`, the guide from its start), applies
    /// the proposal, or cancels. False when refused. Thread: control.
    func applySoundcheck(_ c: RemoteCommand) -> Bool {
        switch c.index {
        case 0: return startSoundcheck(c)
        case 1: return applySoundcheckOffer(c)
        default:
            endSoundcheck(notice: current.soundcheck == nil ? nil : "soundcheck cancelled")
            return true
        }
    }

    func startSoundcheck(_ c: RemoteCommand) -> Bool {
        guard let tap = soundcheckTap, analyseSoundcheck != nil else {
            current.notice = "the soundcheck needs the live input (the rack has no input unit)"
            return true
        }
        guard c.generation == current.state.generation else { return false }
        if let step = current.soundcheck?.step, step == .quiet || step == .sing {
            current.notice = "a soundcheck is under way: cancel it first"
            return true
        }
        guard soundcheck.analysis == nil else {
            current.notice = "a soundcheck is still being analysed: wait a moment"
            return true
        }
        let sing = c.value > 0 ? Double(c.value) : 20
        let quiet = c.parameter > 0 ? Double(c.parameter) / 10 : 3
        guard SoundcheckGuide.singRange.contains(sing), SoundcheckGuide.quietRange.contains(quiet) else { return false }
        soundcheck.guide = SoundcheckGuide(quietSeconds: quiet, singSeconds: sing)
        soundcheck.frames = soundcheck.guide.totalFrames(sampleRate: plan.sampleRate)
        soundcheck.take = []
        soundcheck.take.reserveCapacity(soundcheck.frames)
        soundcheck.generation = current.state.generation
        soundcheck.peak = 0
        tap.arm(channel: soundcheckChannel)
        current.soundcheck = RemoteSoundcheck(step: .quiet, secondsLeft: Int(quiet.rounded(.up)))
        current.notice = "soundcheck: stay quiet, then sing and speak at show level"
        return true
    }

    /// The rack's input unit's channel (0-based; its `channel` setting), else the first.
    var soundcheckChannel: Int {
        (plan.rack.units.first { $0.type == "input" }?.settings.int("channel")).map { $0 - 1 } ?? 0
    }

    /// One turn: the tap drained into the take, the guide moved on; at the end of the take,
    /// its analysis started; its result shown. True when the view changed. Thread: control.
    func soundcheckTick() -> Bool {
        if let result = soundcheck.analysed.withLock({ r -> Result<SoundcheckOffer, RemoteError>? in
            let v = r
            r = nil
            return v
        }) {
            soundcheck.analysis?.join()
            soundcheck.analysis = nil
            guard current.soundcheck?.step == .analysing else { return false }  // cancelled meanwhile
            switch result {
            case .success(let offer): current.soundcheck = RemoteSoundcheck(step: .proposal, offer: offer)
            case .failure(let e): current.soundcheck = RemoteSoundcheck(step: .refused, message: e.message)
            }
            return true
        }
        guard var shown = current.soundcheck else { return false }
        guard shown.step == .quiet || shown.step == .sing, let tap = soundcheckTap else { return false }
        let before = soundcheck.take.count
        tap.drain(into: &soundcheck.take, limit: soundcheck.frames)
        for i in before..<soundcheck.take.count { soundcheck.peak = max(soundcheck.peak, abs(soundcheck.take[i])) }
        let seconds = Double(soundcheck.take.count) / plan.sampleRate
        let now = monotonicSeconds()
        if now - soundcheck.lastPeakTurn >= 0.25 {
            shown.peakDB = soundcheck.peak > 0 ? (20 * log10f(soundcheck.peak)).rounded() : -120
            soundcheck.peak = 0
            soundcheck.lastPeakTurn = now
        }
        switch soundcheck.guide.phase(at: seconds) {
        case .quiet(let left): shown.step = .quiet; shown.secondsLeft = left
        case .sing(let left): shown.step = .sing; shown.secondsLeft = left
        case .done:
            tap.disarm()
            shown = RemoteSoundcheck(step: .analysing)
            if tap.dropped > 0 { current.notice = "soundcheck: \(tap.dropped) samples of the take were lost (the control thread fell behind)" }
            startAnalysis()
        }
        guard shown != current.soundcheck else { return false }
        current.soundcheck = shown
        return true
    }

    /// The take's analysis on a thread of its own (it renders the take through the rack a
    /// few times: seconds on a small machine). Thread: control.
    func startAnalysis() {
        guard let analyse = analyseSoundcheck else { return }
        let take = soundcheck.take
        let rate = plan.sampleRate
        let file = plan.rack.file
        let box = soundcheck.analysed
        let wake = wakeControl
        soundcheck.take = []
        do {
            soundcheck.analysis = try StageThread(.init(name: "stagerack-sndchk")) {
                let r = analyse(take, rate, file)
                box.withLock { $0 = r }
                wake()
            }
        } catch {
            current.soundcheck = RemoteSoundcheck(step: .refused, message: "the analysis could not start: \(error)")
        }
    }

    /// Sets the proposal's values live and writes them into the rack file. Thread: control.
    func applySoundcheckOffer(_ c: RemoteCommand) -> Bool {
        guard let shown = current.soundcheck, shown.step == .proposal, let offer = shown.offer,
            soundcheck.generation == current.state.generation, c.generation == current.state.generation
        else { return false }
        var written: [(target: String, value: String)] = []
        for v in offer.values {
            guard let a = current.state.address(unit: v.unit, parameter: v.parameter), let value = current.state.set(a, v.value) else { continue }
            var e = EngineEvent.setParameter(a, value)
            e.generation = current.state.generation
            guard engineEvents.push(e) else {
                current.notice = "soundcheck: the engine's queue is full: apply again"
                return true
            }
            tellMIDI(a, value)
            written.append(("\(v.unit).\(v.parameter)", v.json))
        }
        current.soundcheck = nil
        guard let saveRack else {
            current.notice = "soundcheck applied (\(Self.count(written.count, "value"))); saving is not available here"
            return true
        }
        switch saveRack(RackSaveRequest(rackFile: plan.rack.file, values: written, mappings: [], snapshot: nil)) {
        case .success(let path):
            for w in written {
                let parts = w.target.split(separator: ".", maxSplits: 1).map(String.init)
                if let a = current.state.address(unit: parts[0], parameter: parts[1]), let v = current.state.value(a) {
                    savedBaseline.set(a, v)
                }
            }
            current.notice = "soundcheck applied: \(Self.count(written.count, "value"))\(Self.names(written)) written into \(path)"
        case .failure(let e):
            current.notice = "soundcheck applied live; not written: \(e.message)"
        }
        return true
    }

    /// Ends the soundcheck (the tap disarmed; an analysis under way finishes unseen).
    /// Thread: control.
    func endSoundcheck(notice: String?) {
        soundcheckTap?.disarm()
        soundcheck.take = []
        current.soundcheck = nil
        if let notice { current.notice = notice }
    }
}
