import StageCore
import StageControl
import StageDrivers

extension LiveSession {
    /// The live MIDI input: the ALSA sequencer client, or the raw-MIDI pipe named by
    /// `STAGERACK_MIDI_PIPE` (a test hook for machines without `/dev/snd/seq`); nil when
    /// neither opens (the rack plays without MIDI). Thread: main, before the switcher starts.
    func openLiveMIDI(plan: RenderPlan, player: RackPlayer, switcher: PresetSwitcher) -> (any LiveMIDI)? {
        // STAGERACK_MIDI_TIMING=block: live events at the next block's first frame, as before
        // they were scheduled on the audio clock (to measure the difference: Tests/e2e/timing.sh).
        let blockTimedMIDI = ProcessEnvironment.current["STAGERACK_MIDI_TIMING"] == "block"
        if blockTimedMIDI { Log.info("MIDI timing: the next block's first frame (STAGERACK_MIDI_TIMING=block)") }
        let mapper = MIDIMapper(plan: plan, presetsByDefault: true)
        let clock = blockTimedMIDI ? nil : player.clock
        let input: any LiveMIDI
        do {
            if let pipe = ProcessEnvironment.current["STAGERACK_MIDI_PIPE"], !pipe.isEmpty {
                input = try MIDIPipeInput(path: pipe, mapper: mapper, events: player.events, clock: clock, monitor: true)
            } else {
                input = try MIDIInput(options: .init(patterns: rack.midi.connect, monitor: true), mapper: mapper, events: player.events, clock: clock)
            }
            input.router.onAction = { [weak switcher] in switcher?.wakeUp() }  // program changes wake the control thread
            if wantsRemote {
                input.router.reportParameterChanges()  // knobs' changes into the remote's state
                input.router.reportMessagesForLearning()  // MIDI learn from the page
            }
            try input.start()
        } catch {
            Log.warning("MIDI: no sequencer (\(error)); playing without MIDI")
            return nil
        }
        Log.info("MIDI: \(input.inputName) listening\(rack.midi.connect.isEmpty ? " (every hardware port)" : " (\(rack.midi.connect.joined(separator: ", ")))")")
        return input
    }
}
