import StageCore
import StageDrivers

#if canImport(Glibc)
import Glibc
#endif

/// Where each input is written for libsndfile to open by name, as `render --input` does.
private let inputPath: String = {
    let dir = String(cString: getenv("TMPDIR") ?? strdup("/tmp"))
    return "\(dir)/stagerack-fuzz-audio-\(getpid()).bin"
}()

/// libFuzzer entry: the bytes as an audio file given to `render --input`: read through
/// libsndfile (which is not instrumented: the reader must check what headers claim), then
/// resampled to the rack's rate. Errors are fine; traps and hangs are not.
/// Thread: libFuzzer's.
func fuzzAudioFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    guard let f = fopen(inputPath, "wb") else { return 0 }
    _ = fwrite(data, 1, size, f)
    fclose(f)
    defer { unlink(inputPath) }
    guard let audio = try? AudioData.read(path: inputPath) else { return 0 }
    precondition(audio.sampleRate.isFinite && audio.sampleRate > 0, "rate \(audio.sampleRate)")
    precondition(audio.channels.allSatisfy { $0.count == audio.frameCount }, "ragged channels")
    _ = try? audio.resampled(to: 48000)
    return 0
}
