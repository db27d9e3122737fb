import Foundation
import StageCore
import StageDrivers
import StageTestSupport
import XCTest

/// The show recorder in one process (so `make tsan` sees both of its threads): an "audio"
/// thread hands it periods while the main thread changes songs; every frame lands in a
/// file, in order, split at the song change.
final class ShowRecorderTests: XCTestCase {
    func testPeriodsFromAnotherThreadLandInOrderAcrossASongChange() throws {
        let folder = TrackFiles.folder() + "/show"
        let recorder = try ShowRecorder(folder: folder, format: .wav, sampleRate: 48000, micChannels: 1, blockFrames: 256, song: "First song")
        let storage = BusStorage(bufferCount: 3, maxFrames: 256)
        let mic = storage.bus(first: 0, channels: 1)
        let out = storage.bus(first: 1, channels: 2)
        let periods = 400
        let audio = Thread {
            for p in 0..<periods {
                for i in 0..<256 {
                    let n = Float(p * 256 + i)
                    mic[0][i] = 0.5 * sinf(n * 0.01)
                    out[0][i] = 0.25 * sinf(n * 0.02)
                    out[1][i] = -out[0][i]
                }
                recorder.take(input: mic, output: out, frames: 256)
                usleep(300)
            }
        }
        audio.start()
        usleep(40_000)
        recorder.songChanged("Second song")
        while !audio.isFinished { usleep(1000) }
        recorder.stop()
        XCTAssertEqual(recorder.droppedFrames, 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        XCTAssertEqual(names, ["001-First_song-mic.wav", "001-First_song-out.wav", "002-Second_song-mic.wav", "002-Second_song-out.wav"])
        let first = try AudioData.read(path: folder + "/001-First_song-out.wav")
        let second = try AudioData.read(path: folder + "/002-Second_song-out.wav")
        let all = first.channels[0] + second.channels[0]
        XCTAssertEqual(all.count, periods * 256)
        XCTAssertGreaterThan(first.frameCount, 0)
        var worst: Float = 0
        for (n, v) in all.enumerated() { worst = max(worst, abs(v - 0.25 * sinf(Float(n) * 0.02))) }
        XCTAssertLessThanOrEqual(worst, 1.0 / Float(1 << 23) + 1e-7, "a period is missing or out of order")
    }
}
