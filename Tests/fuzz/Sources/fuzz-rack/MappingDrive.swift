import StageCore

/// Moves every control a rack could map through its range, both ways. Thread: any.
enum MappingDrive {
    static func sweep(_ mapper: MIDIMapper) {
        var time: Int64 = 0
        for channel in [0, 9, 15] {
            for value in [0, 1, 63, 64, 65, 126, 127, 0] {
                for controller in 0..<128 {
                    time += 1
                    mapper.handle(.controlChange(channel: channel, controller: controller, value: value), at: time) { _ in }
                }
                time += 1
                mapper.handle(.noteOn(channel: channel, note: 36 + value % 64, velocity: value), at: time) { _ in }
            }
        }
        mapper.flush { _ in }
    }
}
