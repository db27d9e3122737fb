import StageCore

/// libFuzzer entry: the bytes as a Standard MIDI File. Errors are fine; traps, hangs and
/// times that are not finite are not. Thread: libFuzzer's.
func fuzzMIDIFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    guard let file = try? StandardMIDIFile(bytes: Array(UnsafeBufferPointer(start: data, count: size))) else { return 0 }
    // What `render` does with the times next (frames = seconds × rate, as an Int) must not
    // trap: every time the reader gives out is finite and not negative.
    precondition(file.duration.isFinite && file.duration >= 0, "duration \(file.duration)")
    for m in file.messages {
        precondition(m.seconds.isFinite && m.seconds >= 0, "message at \(m.seconds) s")
    }
    return 0
}
