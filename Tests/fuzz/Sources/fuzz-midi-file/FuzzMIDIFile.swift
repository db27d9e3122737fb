import StageCore

/// libFuzzer entry: the bytes as a Standard MIDI File. Errors are fine; traps and hangs are
/// not. Thread: libFuzzer's.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMIDIFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let file = try? StandardMIDIFile(bytes: Array(UnsafeBufferPointer(start: data, count: size))) else { return 0 }
    var latest = 0.0
    for m in file.messages { latest = max(latest, m.seconds) }
    _ = (latest, file.duration, file.format, file.trackCount)
    return 0
}
