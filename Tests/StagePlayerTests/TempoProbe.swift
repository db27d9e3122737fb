import Foundation
import StageCore
import StageControl
import StageDrivers
import StagePlayer

/// Drives one engine with its rack's MIDI mapper, block by block, as the live path does:
/// MIDI at frames (clock ticks generated while `clockBPM` is set), the mapper polled at each
/// block's end, and impulses to measure a delay's time in frames. Thread: one test thread.
final class TempoProbe {
    let engine: RenderEngine
    /// Injects the mapper's events into `engine` as they fall due.
    let driver: EngineDriver
    let mapper: MIDIMapper
    let block: Int
    let rate: Double
    var frame: Int64 = 0
    /// MIDI clock at this tempo while set (24 ticks a quarter note).
    var clockBPM: Double?
    var nextTick = 0.0
    /// The last output, channel 0.
    var output: [Float] = []
    /// What the input plays (by absolute frame; silence elsewhere).
    var input: [Int64: Float] = [:]

    init(plan: RenderPlan) {
        engine = RenderEngine(plan: plan)
        driver = EngineDriver(engine: engine)
        mapper = MIDIMapper(plan: plan, presetsByDefault: true)
        block = plan.maxFrames
        rate = plan.sampleRate
    }

    var seconds: Double { Double(frame) / rate }

    func send(_ message: MIDIMessage, at seconds: Double) {
        mapper.handle(message, at: Int64((seconds * rate).rounded()), seconds: seconds) { driver.push($0) }
    }

    /// Renders `seconds` more, keeping the output.
    func render(seconds: Double) {
        output = []
        let end = frame + Int64(seconds * rate)
        while frame < end {
            let n = min(block, Int(end - frame))
            let blockEnd = Double(frame + Int64(n)) / rate
            if let bpm = clockBPM {
                if nextTick < self.seconds { nextTick = self.seconds }
                while nextTick < blockEnd {
                    send(.clock, at: nextTick)
                    nextTick += 60 / bpm / 24
                }
            }
            let host = engine.plan.hostInput
            for c in 0..<host.channelCount {
                host[c].update(repeating: 0, count: n)
                for i in 0..<n { if let v = input[frame + Int64(i)] { host[c][i] = v } }
            }
            driver.render(frameCount: n)
            mapper.poll(seconds: blockEnd, sampleTime: frame + Int64(n)) { driver.push($0) }
            output += UnsafeBufferPointer(start: engine.plan.hostOutput[0], count: n)
            frame += Int64(n)
        }
    }

    /// Lets `seconds` pass (the delay's time change crossfades), then plays an impulse and
    /// returns the frames until its echo (the delay is 100 % wet: the first sound out).
    func echoFrames(settle: Double = 0.3) -> Int? {
        render(seconds: settle)
        input[frame] = 1
        let at = frame
        render(seconds: 2.2)
        return output.firstIndex { abs($0) > 0.5 }.map { Int(frame - Int64(output.count) + Int64($0) - at) }
    }
}

/// Setlists and racks written to a fresh folder.
enum SongFiles {
    static func write(_ files: [String: String]) -> String {
        let dir = TrackFiles.folder()
        for (name, text) in files { _ = FileManager.default.createFile(atPath: dir + "/" + name, contents: Data(text.utf8)) }
        return dir
    }

    /// Song `index` of the setlist at `path`, compiled.
    static func plan(setlist path: String, song index: Int = 0, block: Int = 128, leadsBand: Bool = false) throws -> RenderPlan {
        let setlist = try RackFiles.readSetlist(path)
        let rack = try RackFiles.readSong(setlist, index, registry: PlayerRacks.registry)
        var options = GraphCompiler.Options(sampleRate: 48000, maxFrames: block, realTime: false)
        options.transposesEverySong = leadsBand
        options.leadsBand = leadsBand
        return try GraphCompiler(registry: PlayerRacks.registry).compile(rack, options: options)
    }
}
