import StageCore
import StageControl

/// MIDI learn from the page, on the control thread: a page asks to learn `unit.param`
/// (`RemoteCommand.learn`), the MIDI thread copies what comes in (`MIDIRouter.learnMessages`,
/// armed only while learning), `MIDILearn` works out the control as `stagerack learn` does,
/// and the mapping joins the rack's live mapper (`remap`, a new `MIDIMapper` handed to the
/// MIDI thread). Every page sees `learning`, the mappings and a notice; a learned mapping
/// can be removed from the page (`unlearn`) and is written into the rack file by "save".
///
/// Learned mappings belong to their song (setlist entry): they are mapped again when the
/// song comes back, until saved or until `play` stops.
///
/// Thread: all of it on the control thread.
struct PageLearn {
    /// Give up when no control moved for this long after the page asked.
    static let timeoutSeconds = 60.0

    var router: MIDIRouter?
    /// Hands the MIDI thread a new mapper (`MIDIInput.replaceMapper`).
    var remap: (@Sendable (MIDIMapper) -> Void)?
    /// Mappings learned from a page, by song index, not yet in the rack file.
    var bySong: [Int: [MIDIMappingDescription]] = [:]
    /// Mappings saved into the rack file while it plays: live until the plan changes (the
    /// file's own then include them).
    var saved: [MIDIMappingDescription] = []
    var target: ParameterAddress?
    var learner = MIDILearn()
    var started = 0.0
}

extension RemoteHub {
    /// Lets pages learn MIDI controls: `router` copies messages while learning, `remap`
    /// hands the MIDI thread a new mapper. Thread: main, before the control thread starts
    /// (the router's `reportMessagesForLearning` must have been called before it started).
    public func attachLearning(router: MIDIRouter, remap: @escaping @Sendable (MIDIMapper) -> Void) {
        learn.router = router
        learn.remap = remap
    }

    /// The mapper for `plan`: the rack's mappings and those learned from the page for the
    /// song playing. Thread: control (the switcher's `onChange`, after `planChanged`).
    public func mapper(for plan: RenderPlan) -> MIDIMapper {
        MIDIMapper(plan: plan, presetsByDefault: true, midi: midiSection(for: plan))
    }

    func midiSection(for plan: RenderPlan) -> MIDIDescription {
        var midi = plan.rack.midi
        midi.map += learn.saved + (learn.bySong[current.song] ?? [])
        return midi
    }

    /// The learned mappings of the song playing, as the page lists them after the rack's.
    func refreshMappings() {
        var list = plan.rack.midi.map.map { RemoteMapping($0, learned: nil) }
        list += learn.saved.map { RemoteMapping($0, learned: nil) }
        list += (learn.bySong[current.song] ?? []).enumerated().map { RemoteMapping($1, learned: $0) }
        current.mappings = list
    }

    /// A new plan: learning stops (its target may be gone); the page lists its mappings.
    func learnPlanChanged() {
        learn.saved = []
        if learn.target != nil { stopLearning(notice: "learning stopped: another rack plays") }
        refreshMappings()
    }

    /// `learn`, `learnCancel`, `unlearn`. False when refused (another rack, no such mapping,
    /// no MIDI input). Thread: control.
    func applyLearn(_ c: RemoteCommand) -> Bool {
        switch c.kind {
        case .learn:
            guard c.generation == current.state.generation, current.state.spec(c.address) != nil else { return false }
            guard let router = learn.router, let messages = router.learnMessages else {
                current.notice = "MIDI learn needs a MIDI input (none is open)"
                return true
            }
            while messages.pop() != nil {}  // what came before the page asked is not the control
            learn.target = c.address
            learn.learner = MIDILearn()
            learn.started = monotonicSeconds()
            router.learnArmed.store(true, ordering: .relaxed)
            current.learning = current.state.name(c.address)
            current.notice = "move a control on the MIDI controller for \(current.state.name(c.address))"
        case .learnCancel:
            guard learn.target != nil else { return true }
            stopLearning(notice: "MIDI learn cancelled")
        case .unlearn:
            guard c.generation == current.state.generation, var list = learn.bySong[current.song],
                list.indices.contains(Int(c.index))
            else { return false }
            let gone = list.remove(at: Int(c.index))
            learn.bySong[current.song] = list
            learn.remap?(mapper(for: plan))
            refreshMappings()
            current.notice = "removed \(gone.jsonText)"
        default:
            return false
        }
        return true
    }

    /// One turn: feeds what the MIDI thread copied to the learner; maps the control once it
    /// settled. True when the view changed. Thread: control.
    func learnTick() -> Bool {
        guard let target = learn.target, let messages = learn.router?.learnMessages else { return false }
        while let m = messages.pop() { learn.learner.feed(m.message, seconds: m.seconds) }
        let now = monotonicSeconds()
        if !learn.learner.hasControl {
            guard now - learn.started >= PageLearn.timeoutSeconds else { return false }
            stopLearning(notice: "MIDI learn: no control moved in \(Int(PageLearn.timeoutSeconds)) s")
            return true
        }
        guard learn.learner.isSettled(at: now) else { return false }
        let name = current.state.name(target)
        guard let spec = current.state.spec(target), let (mapping, notes) = learn.learner.mapping(target: name, spec: spec) else {
            stopLearning(notice: "MIDI learn: nothing to map")
            return true
        }
        learn.bySong[current.song, default: []].append(mapping)
        stopLearning(notice: nil)
        learn.remap?(mapper(for: plan))
        refreshMappings()
        let already = midiSection(for: plan).map.dropLast().filter { $0.source == mapping.source && ($0.channel == nil || $0.channel == mapping.channel) }
        current.notice = "learned \(mapping.jsonText)" + notes.map { "; \($0)" }.joined()
            + already.map { "; \($0.source.label(hires: $0.hires)) also moves \($0.target ?? $0.action?.rawValue ?? "?")" }.joined()
        return true
    }

    func stopLearning(notice: String?) {
        learn.target = nil
        learn.router?.learnArmed.store(false, ordering: .relaxed)
        current.learning = nil
        if let notice { current.notice = notice }
    }
}
