import Foundation
import Synchronization
import CAllocCounter
import StageCore
import StageControl
import StageDrivers
import StageSynth
import StageTestSupport
import XCTest

/// The real live path under load, for tens of seconds: the audio thread rendering to a
/// paced alsa-lib file-plugin device, the MIDI router on a flood thread (10,000 messages a
/// second: CCs on 16 controllers, notes on 16 channels, 50 program changes a second), the
/// control thread switching songs, reloading (SIGHUP's path) and recalling snapshots.
/// Each song also streams a looping backing track from disk (a `player`, toggled by note 60 in
/// the flood), and the show is recorded (`ShowRecorder`'s disk thread): a late disk may only
/// give counted underruns, a full pool only counted dropped frames; the render never waits.
/// Nothing may be lost, no note may hang, every retired rack must be released exactly once,
/// memory must stay flat, and no queue may see a second producer or consumer. `make tsan`
/// runs it under the thread sanitizer too (STAGERACK_STRESS_SECONDS sets its length).
final class LiveStressTests: XCTestCase {
    override class func setUp() {
        let path = Fixtures.temporaryPath("alsa-test.conf")
        try? LiveAudioFileTests.config.write(toFile: path, atomically: true, encoding: .utf8)
        setenv("ALSA_CONFIG_PATH", "/usr/share/alsa/alsa.conf:\(path)", 1)
        setenv("STAGERACK_TEST_PLAYBACK", "/dev/null", 1)
    }

    static func rack(_ n: Int, font: String, track: String) -> String {
        let maps = (0..<16).map { k -> String in
            let target = ["mix.gain1", "delay.wetDryMix", "reverb.dryWetMix", "synth.gain"][k % 4]
            let range = target.hasPrefix("mix") || target.hasPrefix("synth") ? (-30, 0) : (0, 40)
            return "{ \"cc\": \(20 + k), \"to\": \"\(target)\", \"min\": \(range.0), \"max\": \(range.1) }"
        }
        return """
            { "format": 1, "name": "stress \(n)",
              "units": {
                "synth": { "type": "synth", "soundfont": "\(font)", "channel": "all", "polyphony": 256 },
                "delay": { "type": "delay", "params": { "delayTime": 0.\(n + 1), "feedback": 30 } },
                "reverb": { "type": "reverb", "params": { "dryWetMix": 20 } },
                "track": { "type": "player", "file": "\(track)", "loop": true, "trigger": "toggle", "startOnLoad": true, "preload": 0.5, "buffer": 1 },
                "mix": { "type": "mixer", "inputs": 2 }, "out": { "type": "output" } },
              "connections": [ "synth -> delay -> reverb -> mix:1", "track -> mix:2", "mix -> out" ],
              "midi": { "map": [ \(maps.joined(separator: ", ")), { "note": 60, "action": "track.play" } ] },
              "snapshots": { "a": { "params": { "reverb.dryWetMix": 10 } }, "b": { "morph": 0.1, "params": { "reverb.dryWetMix": 30 } } } }
            """
    }

    func testTheLivePathUnderAFloodOfMIDISwitchesReloadsAndRecalls() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["STAGERACK_STRESS_SECONDS"] ?? "") ?? 20
        let font = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../soundfonts/stagerack-basic.sf2")
            .standardizedFileURL.path
        let dir = Fixtures.temporaryPath("stress")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let track = "\(dir)/track.wav"
        let writer = try AudioFileWriter(path: track, channels: 2, sampleRate: 44100, maxFrames: 44100 * 3)
        let tone = (0..<(44100 * 3)).map { Float(0.1 * sin(Double($0) * 0.05)) }
        try writer.write(channels: [tone, tone])
        try writer.close()
        for n in 0..<3 { try Self.rack(n, font: font, track: track).write(toFile: "\(dir)/song\(n).json", atomically: true, encoding: .utf8) }
        let setlistText = """
            { "format": 1, "name": "stress", "songs": [ { "rack": "song0.json", "program": 1 }, { "rack": "song1.json", "program": 2 },
              { "rack": "song2.json", "program": 3 } ] }
            """
        try setlistText.write(toFile: "\(dir)/set.json", atomically: true, encoding: .utf8)
        let enginesBefore = renderEnginesAlive.load(ordering: .relaxed)
        let violationsBefore = queueOwnershipViolations.load(ordering: .relaxed)

        var figures = try run(setlist: "\(dir)/set.json", seconds: seconds)
        // The threads' closures (holding the player) go a moment after the threads end.
        let deadline = monotonicSeconds() + 3
        while renderEnginesAlive.load(ordering: .relaxed) > enginesBefore && monotonicSeconds() < deadline { usleep(10_000) }
        figures.enginesLeft = renderEnginesAlive.load(ordering: .relaxed) - enginesBefore
        let violations = queueOwnershipViolations.load(ordering: .relaxed) - violationsBefore
        print(
            "live stress: \(Int(seconds)) s, MIDI sent \(figures.messages) (\(Int(Double(figures.messages) / seconds))/s), engine events "
                + "sent \(figures.sent) applied \(figures.applied) stale \(figures.stale) late \(figures.late) dropped \(figures.dropped); "
                + "switches \(figures.switches), loads \(figures.loads), requests coalesced \(figures.coalesced), racks released "
                + "\(figures.released); voices at the end \(figures.voices); RSS \(figures.rssBefore / 1024) → \(figures.rssAfter / 1024) MB, heap in use "
                + "\(figures.heapBefore >> 20) → \(figures.heapAfter >> 20) MB; track underruns \(figures.underruns); recorded "
                + "\(figures.recorded) frames, dropped \(figures.recordDropped); highest render load \(Int(figures.maxLoad * 100)) % of a period; "
                + "events taken and tails ended \(formatNumber((figures.drainSeconds * 1000).rounded())) ms after the flood, voices "
                + "\(formatNumber((figures.endSeconds * 1000).rounded())) ms of audio after that")
        XCTAssertEqual(figures.dropped, 0, "engine events dropped")
        XCTAssertEqual(figures.actionsDropped, 0, "actions dropped")
        XCTAssertEqual(figures.sent, figures.applied + figures.stale, "every engine event sent reached a rack, or was meant for one no longer playing")
        XCTAssertGreaterThan(Double(figures.messages), seconds * 9000, "the flood ran at 10,000 messages a second")
        XCTAssertGreaterThan(figures.switches, Int(seconds), "songs switched under the flood")
        XCTAssertEqual(figures.voices, 0, "no note hangs")
        XCTAssertLessThan(figures.drainSeconds, 20, "the flood's events were taken and the tails ended")
        XCTAssertEqual(figures.enginesLeft, 0, "every rack released exactly once (none leaked)")
        XCTAssertEqual(violations, 0, "a queue saw a second producer or consumer thread")
        XCTAssertFalse(figures.recorderFailed, "the recording went on")
        XCTAssertGreaterThan(figures.recorded + figures.recordDropped, Int(seconds * 0.5 * 48000), "the show was recorded (or its drops counted)")
        if figures.heapBefore >= 0 {
            // Leaks show in the heap in use; the resident size also moves with the allocator's
            // arenas (it grew 25 MB once in a full run under load 15, 0 MB alone), so it is printed only.
            XCTAssertLessThan(figures.heapAfter - figures.heapBefore, 8 << 20, "heap in use flat (bytes)")
        } else {
            XCTAssertLessThan(figures.rssAfter - figures.rssBefore, 64 * 1024, "memory flat (KB; under the thread sanitizer)")
        }
    }

    struct Figures {
        var messages = 0, sent = 0, applied = 0, stale = 0, late = 0, dropped = 0, actionsDropped = 0
        var switches = 0, loads = 0, coalesced = 0, released = 0, voices = -1, enginesLeft = 0
        var rssBefore = 0, rssAfter = 0
        var heapBefore: Int64 = -1, heapAfter: Int64 = -1
        var underruns = 0, recorded = 0, recordDropped = 0, recorderFailed = false, maxLoad: Float = 0
        /// Wall time after the flood until its events were taken and the tails ended; audio
        /// rendered after that until the voices ended.
        var drainSeconds = 0.0, endSeconds = 0.0
    }

    func run(setlist path: String, seconds: Double) throws -> Figures {
        let setlist = try RackFiles.readSetlist(path)
        let options = GraphCompiler.Options(sampleRate: 48000, maxFrames: 128, hostInputChannels: 1)
        let plan = try RackFiles.load(setlist.entries[0].rack, registry: Fixtures.registry, options: options)
        let player = RackPlayer(engine: RenderEngine(plan: plan))
        let switcher = PresetSwitcher(setlist: setlist, index: 0, player: player, firstPlan: plan, registry: Fixtures.registry,
                                      options: options, log: { _ in })
        let router = MIDIRouter(mapper: MIDIMapper(plan: plan, presetsByDefault: true), events: player.events, clock: player.clock,
                                monitor: true)
        switcher.onChange = { newPlan, _ in router.replace(MIDIMapper(plan: newPlan, presetsByDefault: true), events: player.events) }
        switcher.onRecall = { plan, snapshot in
            for v in snapshot.values { if let a = plan.address(of: v.target) { _ = router.notices.push(ParameterNotice(address: a, value: v.value, byPreset: true)) } }
        }
        router.onAction = { [weak switcher] in switcher?.wakeUp() }  // weak: the switcher holds the router through onChange
        try switcher.start(midiActions: router.actions)
        let playback = try PCMStream(PCMRequest(device: "stagerack_out", isCapture: false, sampleRate: 48000, channels: 2,
                                                periodFrames: 128, periods: 2, format: .float))
        let recorder = try ShowRecorder(
            folder: Fixtures.temporaryPath("stress-recording"), format: .wav, sampleRate: 48000, micChannels: 1, blockFrames: 128,
            song: "stress")
        let live = LiveAudio(playback: playback, capture: nil, player: player, recorder: recorder)
        XCTAssertTrue(live.isPaced, "the file plugin over null keeps no time: paced")
        let audioDone = DispatchSemaphore(value: 0)
        Thread {
            _ = live.run()
            audioDone.signal()
        }.start()

        let stopFlood = AtomicFlag()
        let floodDone = DispatchSemaphore(value: 0)
        let flood = FloodCounter()
        Thread {
            Self.flood(router, until: stopFlood, counter: flood)
            floodDone.signal()
        }.start()

        // The main thread: reloads (SIGHUP) and snapshot recalls, the monitor, memory.
        var figures = Figures()
        let start = monotonicSeconds()
        var tick = 0
        while monotonicSeconds() - start < seconds {
            usleep(50_000)
            tick += 1
            if tick % 5 == 0 {
                _ = switcher.mainRequests.push(.reload)
                switcher.wakeUp()
            }
            if tick % 2 == 0 { switcher.request(.snapshot(tick % 4 == 0 ? "a" : "b")) }
            if tick % 40 == 0 { recorder.songChanged("song \(switcher.currentIndex)") }
            for t in switcher.unitTransports { figures.underruns = max(figures.underruns, t.transport.underruns) }
            figures.maxLoad = max(figures.maxLoad, live.status().load)
            while router.monitor?.pop() != nil {}
            if figures.rssBefore == 0 && monotonicSeconds() - start > seconds / 4 {
                figures.rssBefore = Self.residentKB()
                figures.heapBefore = alloc_counter_heap_in_use()
            }
        }
        stopFlood.set()
        floodDone.wait()
        // What the end means, waited for (not a time): no more switches; then, while the
        // audio thread plays on, every engine event sent taken by a rack (or dropped as meant
        // for one no longer playing) and every switch's tail ended (at most 20 s).
        switcher.stop()
        let sentAtEnd = router.engineEventsSent
        func drained() -> Bool {
            player.eventsApplied.load(ordering: .relaxed) + player.eventsStale.load(ordering: .relaxed) == sentAtEnd
                && player.tailsEnded.load(ordering: .relaxed) == player.switches.load(ordering: .relaxed)
        }
        let drainStart = monotonicSeconds()
        while !drained() && monotonicSeconds() - drainStart < 20 { usleep(1_000) }
        figures.drainSeconds = monotonicSeconds() - drainStart
        live.requestStop()
        audioDone.wait()
        // Then this thread takes the render side over (no tail left: only the current rack)
        // and renders until the last note-offs' release has ended (at most 20 s of audio):
        // the synth's voices are the render thread's to count.
        player.handOverRenderThread()  // the playing rack's queues too
        let output = BusStorage(bufferCount: 2, maxFrames: 128)
        var endFrames = 0
        func voices() -> Int { player.current.plan.units.compactMap { $0 as? SynthUnit }.reduce(0) { $0 + $1.activeVoiceCount } }
        while (player.eventsWaiting > 0 || voices() > 0) && endFrames < 20 * 48000 {
            player.render(frameCount: 128, input: nil, output: output.bus(first: 0, channels: 2))
            endFrames += 128
        }
        figures.endSeconds = Double(endFrames) / 48000
        while router.monitor?.pop() != nil {}
        figures.rssAfter = Self.residentKB()
        figures.heapAfter = alloc_counter_heap_in_use()
        recorder.stop()
        figures.recorded = recorder.writtenFrames
        figures.recordDropped = recorder.droppedFrames
        figures.recorderFailed = recorder.hasStopped

        figures.messages = flood.messages
        figures.sent = router.engineEventsSent
        figures.dropped = router.engineEventsDropped
        figures.actionsDropped = router.actionsDropped
        figures.applied = player.eventsApplied.load(ordering: .relaxed)
        figures.stale = player.eventsStale.load(ordering: .relaxed)
        figures.late = player.eventsLate.load(ordering: .relaxed)
        figures.switches = player.switches.load(ordering: .relaxed)
        figures.loads = switcher.loadsCompleted.load(ordering: .relaxed)
        figures.coalesced = switcher.requestsCoalesced.load(ordering: .relaxed)
        figures.released = player.racksReleased.load(ordering: .relaxed)
        // Every thread has stopped: the current rack's synth can be asked.
        figures.voices = player.current.plan.units.compactMap { $0 as? SynthUnit }.reduce(0) { $0 + $1.activeVoiceCount }
        XCTAssertEqual(player.eventsWaiting, 0, "nothing left in the queues")
        return figures
    }

    /// 10 messages a millisecond: CCs on 16 controllers and 16 channels, notes on 16
    /// channels (each released 5 ms later), a program change every 20 ms; every note
    /// released at the end. The MIDI thread's loop, as `MIDIInput` runs it.
    static func flood(_ router: MIDIRouter, until stop: AtomicFlag, counter: FloodCounter) {
        var held: [(channel: Int, note: Int, off: Double)] = []
        held.reserveCapacity(256)
        var k = 0
        var next = monotonicSeconds()
        var program = 0
        func send(_ m: MIDIMessage) {
            router.handle(m, arrivalNanoseconds: monotonicNanoseconds())
            counter.messages += 1
        }
        while !stop.isSet {
            router.takeReplacement()
            let now = monotonicSeconds()
            while let first = held.first, first.off <= now {
                send(.noteOff(channel: first.channel, note: first.note))
                held.removeFirst()
            }
            for _ in 0..<(10 - min(held.count, 2)) {
                k += 1
                if k % 4 == 0 {
                    let channel = (k / 4) % 16
                    let note = 36 + (k / 64) % 48
                    send(.noteOn(channel: channel, note: note, velocity: 40 + k % 80))
                    held.append((channel, note, now + 0.005))
                } else {
                    send(.controlChange(channel: k % 16, controller: 20 + (k / 16) % 16, value: k % 128))
                }
            }
            if k % 200 < 10 {
                program = (program + 1) % 3
                send(.programChange(channel: 15, program: program))
            }
            router.poll(nanoseconds: monotonicNanoseconds())
            router.sendFeedback { _ in }
            next += 0.001
            let wait = next - monotonicSeconds()
            if wait > 0 { usleep(UInt32(wait * 1e6)) }
        }
        for h in held { send(.noteOff(channel: h.channel, note: h.note)) }
    }

    static func residentKB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }
}

/// A flag one thread sets and another reads.
final class AtomicFlag: @unchecked Sendable {
    private let flag = Synchronization.Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .releasing) }
    var isSet: Bool { flag.load(ordering: .acquiring) }
}

/// Written by the flood thread, read after it has finished.
final class FloodCounter: @unchecked Sendable {
    var messages = 0
}
