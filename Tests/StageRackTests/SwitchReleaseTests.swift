import Foundation
import StageCore
import StageControl
import StageDrivers
import StageSynth
import StageTestSupport
import XCTest
import CAllocCounter

#if canImport(Glibc)
import Glibc
#endif

/// A song switch: the rack left releases its notes (sustain-off and all-notes-off, only on
/// the channels that hold notes: `UnitHeldNotes`), and the new rack's warm-up on the control
/// thread (`RenderEngine.warmUp`) leaves no trace in its sound nor in its queues' owners.
final class SwitchReleaseTests: XCTestCase {
    static let font = "/usr/share/sounds/sf2/TimGM6mb.sf2"
    let rate = 48000.0
    let block = 64

    /// TimGM6mb's drawbar organ (GM program 17): it neither decays while held nor rings long
    /// after its release.
    static let organRack = """
        { "format": 2, "units": { "synth": { "type": "synth", "soundfont": "\(font)", "program": 17 },
            "out": { "type": "output" } }, "connections": [ "synth -> out" ] }
        """

    /// A player with a rack playing, driven as the render thread and the MIDI thread drive it.
    final class Run {
        let player: RackPlayer
        let plan: RenderPlan
        let block: Int
        let input: BusStorage
        let output: BusStorage
        var left: [Float] = []

        init(plan: RenderPlan, block: Int) {
            self.plan = plan
            self.block = block
            player = RackPlayer(engine: RenderEngine(plan: plan))
            input = BusStorage(bufferCount: 1, maxFrames: block)
            output = BusStorage(bufferCount: 2, maxFrames: block)
        }

        var synthIndex: Int { plan.unitIDs.firstIndex(of: "synth")! }
        var synth: SynthUnit { plan.units[synthIndex] as! SynthUnit }

        /// Queues `m` for the playing rack's synth at the next block's first frame.
        func send(_ m: MIDIMessage, to plan: RenderPlan? = nil) {
            let p = plan ?? self.plan
            var e = EngineEvent.midi(m, toUnit: p.unitIDs.firstIndex(of: "synth")!, at: player.sampleTime)
            e.generation = p.generation
            XCTAssertTrue(player.events.push(e))
        }

        /// Renders `blocks` blocks; `voice(frame)` is the input (silence by default).
        func render(blocks: Int, voice: ((Int) -> Float)? = nil) {
            for _ in 0..<blocks {
                let start = Int(player.sampleTime)
                for i in 0..<block { input.buffer(0)[i] = voice?(start + i) ?? 0 }
                player.render(frameCount: block, input: input.bus(first: 0, channels: 1), output: output.bus(first: 0, channels: 2))
                left += UnsafeBufferPointer(start: output.buffer(0), count: block)
                player.collectRetired()
            }
        }

        func seconds(_ s: Double) -> Int { Int(s * 48000) / block }
    }

    func organPlan() throws -> RenderPlan {
        if access(Self.font, R_OK) != 0 { throw XCTSkip("timgm6mb-soundfont is not installed") }
        return try RackBuilding.plan(Self.organRack, maxFrames: block)
    }

    /// A key held on channel 3 and a note held only by the sustain pedal on channel 10: both
    /// end at the switch, with their release.
    func testAKeyHeldAndANoteHeldOnlyByThePedalOnOtherChannelsBothEndAtASwitch() throws {
        let run = Run(plan: try organPlan(), block: block)
        let c4 = 261.63
        let g4 = 392.0
        run.send(.controlChange(channel: 9, controller: 64, value: 127))
        run.send(.noteOn(channel: 9, note: 67, velocity: 100))
        run.render(blocks: 10)
        run.send(.noteOff(channel: 9, note: 67))  // G4 on channel 10: held by the pedal only
        run.send(.noteOn(channel: 2, note: 60, velocity: 100))  // C4 on channel 3: key down
        run.render(blocks: run.seconds(0.5))
        XCTAssertEqual(run.synth.channelsHoldingNotes, 1 << 9 | 1 << 2, "the synth knows what holds notes")
        let switchFrame = run.left.count
        let before = run.left[(switchFrame - 9600)..<switchFrame]
        let cBefore = Measure.magnitude(at: c4, in: before)
        let gBefore = Measure.magnitude(at: g4, in: before)
        XCTAssertGreaterThan(cBefore, 1e-3, "C4 sounds (key down)")
        XCTAssertGreaterThan(gBefore, 1e-3, "G4 sounds (pedal down)")

        let sentBefore = run.synth.controlChangesSent
        XCTAssertTrue(run.player.submit(RenderEngine(plan: try organPlan())))
        run.render(blocks: run.seconds(0.6))
        XCTAssertEqual(run.synth.controlChangesSent - sentBefore, 4, "sustain-off and all-notes-off on channels 3 and 10 only")
        let after = run.left[(switchFrame + 14400)..<(switchFrame + 24000)]
        XCTAssertLessThan(Measure.magnitude(at: c4, in: after), cBefore * 0.01, "C4 ended")
        XCTAssertLessThan(Measure.magnitude(at: g4, in: after), gBefore * 0.01, "G4 ended")
        XCTAssertLessThan(Measure.peak(after), 1e-4, "the old rack is silent 0.3 s after the switch")
        XCTAssertEqual(run.player.tailsEnded.load(ordering: .relaxed), 1, "and its tail ended (−80 dBFS for 50 ms)")
    }

    /// A note held only by the sostenuto pedal (CC 66: it latches the keys down when it is
    /// pressed) on channel 6 ends at the switch too: all-notes-off alone leaves it (it rang
    /// until the 15 s tail limit), so sostenuto-off is sent where that pedal is down.
    func testANoteHeldOnlyByTheSostenutoPedalEndsAtASwitch() throws {
        let run = Run(plan: try organPlan(), block: block)
        let e4 = 329.63
        run.send(.noteOn(channel: 5, note: 64, velocity: 100))
        run.render(blocks: 10)
        run.send(.controlChange(channel: 5, controller: 66, value: 127))  // latches E4
        run.render(blocks: 2)
        run.send(.noteOff(channel: 5, note: 64))  // E4 now held by the sostenuto pedal only
        run.render(blocks: run.seconds(0.5))
        XCTAssertEqual(run.synth.channelsHoldingNotes, 1 << 5)
        XCTAssertEqual(run.synth.channelsWithSostenutoDown, 1 << 5)
        let switchFrame = run.left.count
        let eBefore = Measure.magnitude(at: e4, in: run.left[(switchFrame - 9600)..<switchFrame])
        XCTAssertGreaterThan(eBefore, 1e-3, "E4 sounds (sostenuto down)")

        let sentBefore = run.synth.controlChangesSent
        XCTAssertTrue(run.player.submit(RenderEngine(plan: try organPlan())))
        run.render(blocks: run.seconds(0.6))
        XCTAssertEqual(run.synth.controlChangesSent - sentBefore, 3, "sustain-off, sostenuto-off and all-notes-off on channel 6")
        let after = run.left[(switchFrame + 14400)..<(switchFrame + 24000)]
        XCTAssertLessThan(Measure.magnitude(at: e4, in: after), eBefore * 0.01, "E4 ended")
        XCTAssertEqual(run.player.tailsEnded.load(ordering: .relaxed), 1, "and the old rack's tail ended")
    }

    /// Nothing sounding (a note played and released, the pedal pressed and lifted): the
    /// switch sends FluidSynth no controller message (each would scan all 256 voice slots).
    func testASwitchWithNothingHeldSendsFluidSynthNoController() throws {
        let run = Run(plan: try organPlan(), block: block)
        run.send(.noteOn(channel: 0, note: 60, velocity: 100))
        run.render(blocks: 20)
        run.send(.noteOff(channel: 0, note: 60))
        run.send(.controlChange(channel: 5, controller: 64, value: 127))
        run.render(blocks: 5)
        run.send(.controlChange(channel: 5, controller: 64, value: 0))
        run.render(blocks: 5)
        XCTAssertEqual(run.synth.channelsHoldingNotes, 0)
        let sent = run.synth.controlChangesSent
        XCTAssertEqual(sent, 2, "the two pedal messages")
        XCTAssertTrue(run.player.submit(RenderEngine(plan: try organPlan())))
        run.render(blocks: 40)
        XCTAssertEqual(run.player.switches.load(ordering: .relaxed), 1)
        XCTAssertEqual(run.synth.controlChangesSent, sent, "no controller message at the switch")
    }

    /// Switches between warmed synth racks with keys and pedals held on several channels:
    /// the render thread (the blocks with the switch, the releases and the new racks' first
    /// blocks) allocates nothing.
    func testSwitchesWithHeldNotesAllocateNothingOnTheRenderThread() throws {
        let run = Run(plan: try organPlan(), block: block)
        var plan = run.plan
        var allocations: Int64 = 0
        for k in 0..<10 {
            run.send(.controlChange(channel: k, controller: 64, value: 127), to: plan)
            run.send(.noteOn(channel: (k + 3) % 16, note: 60 + k, velocity: 90), to: plan)
            run.render(blocks: 4)
            let next = try organPlan()
            let engine = RenderEngine(plan: next)
            engine.warmUp()
            XCTAssertTrue(run.player.submit(engine))
            for _ in 0..<6 {
                alloc_counter_start()
                run.player.render(frameCount: block, input: run.input.bus(first: 0, channels: 1), output: run.output.bus(first: 0, channels: 2))
                allocations += alloc_counter_stop()
                run.player.collectRetired()
            }
            plan = next
        }
        XCTAssertEqual(run.player.switches.load(ordering: .relaxed), 10)
        #if !DEBUG
        XCTAssertEqual(allocations, 0, "the render thread allocated while switching")
        #endif
    }

    /// The rack switched to renders exactly as it would without the warm-up: the default
    /// rack (voice strip, echo, reverb, synth), sung input and a chord on each rack, blocks
    /// of 96 frames (so FluidSynth's 64-frame grid would show a leaked sample time), the
    /// warm-up on another thread (as the control thread does it). And the render thread
    /// takes the engine's queues over without an ownership violation.
    func testAWarmedRackSoundsExactlyAsAColdOne() throws {
        if access(Self.font, R_OK) != 0 { throw XCTSkip("timgm6mb-soundfont is not installed") }
        let block = 96
        let options = GraphCompiler.Options(sampleRate: rate, maxFrames: block, hostInputChannels: 1)
        let path = Fixtures.repository.path + "/racks/default.json"
        let voice: (Int) -> Float = { f in
            let t = Double(f) / 48000
            // One term a line: the whole sum is beyond Swift 6.0's type checker.
            let low: Double = 0.2 * sin(2 * Double.pi * 150 * t)
            let mid: Double = 0.1 * sin(2 * Double.pi * 450 * t)
            let high: Double = 0.05 * sin(2 * Double.pi * 3300 * t)
            return Float(low + mid + high)
        }
        func play(warm: Bool) throws -> (out: [Float], switchFrame: Int, warmed: Bool) {
            let run = Run(plan: try RackFiles.load(path, registry: Fixtures.registry, options: options), block: block)
            run.send(.noteOn(channel: 0, note: 60, velocity: 90))
            run.send(.noteOn(channel: 0, note: 64, velocity: 90))
            run.render(blocks: 100, voice: voice)
            let next = try RackFiles.load(path, registry: Fixtures.registry, options: options)
            let engine = RenderEngine(plan: next)
            if warm { runOnAnotherThread { engine.warmUp() } }
            let switchFrame = run.left.count
            XCTAssertTrue(run.player.submit(engine))
            run.render(blocks: 20, voice: voice)
            run.send(.noteOn(channel: 0, note: 67, velocity: 100), to: next)
            run.send(.noteOn(channel: 0, note: 72, velocity: 100), to: next)
            run.render(blocks: 400, voice: voice)
            return (run.left, switchFrame, engine.warmedUp)
        }
        let violations = queueOwnershipViolations.load(ordering: .relaxed)
        let cold = try play(warm: false)
        let warm = try play(warm: true)
        XCTAssertEqual(queueOwnershipViolations.load(ordering: .relaxed), violations, "every queue kept one consumer")
        XCTAssertFalse(cold.warmed)
        XCTAssertTrue(warm.warmed)
        XCTAssertEqual(cold.out.count, warm.out.count)
        let s = cold.switchFrame
        XCTAssertGreaterThan(Measure.rms(warm.out[(s + 2400)...]), 0.01, "both racks sound after the switch")
        var maxDiff: Float = 0
        for i in s..<cold.out.count { maxDiff = max(maxDiff, abs(cold.out[i] - warm.out[i])) }
        XCTAssertEqual(maxDiff, 0, "the first blocks after the switch, and all after, are the same with and without the warm-up")
    }
}
