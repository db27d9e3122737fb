/// A command for one unit (a transport button: the player's `play`, the looper's
/// `record`), fired by a `midi.map` entry whose `action` is `"unit.command"`.
///
/// Commands travel to the render thread as ordinary `.midi` engine events addressed to the
/// unit, so they land on the frame of the MIDI event that fired them (live events carry
/// their frame from `AudioClock`, MIDI-file events theirs). The message uses status 0xF9,
/// a system real-time status MIDI 1.0 leaves undefined: the mapper never forwards
/// controller bytes with it to units, so a unit can tell a command from a note.
/// `data1` is the command's index in the unit type's `commands(_:)` list, `data2` is 1 for
/// a press and 0 for a release. Thread: any (values).
public enum UnitCommand {
    public static let status: UInt8 = 0xF9
    /// The most commands a unit type may offer (the index travels in 7 bits).
    public static let maximumCount = 128

    /// The message for command `index`, pressed or released.
    @inlinable
    public static func message(_ index: Int, pressed: Bool) -> MIDIMessage {
        MIDIMessage(status: status, data1: UInt8(truncatingIfNeeded: index & 0x7F), data2: pressed ? 1 : 0)
    }

    /// The command index of `message`, or nil when it is not a command.
    @inlinable
    public static func index(of message: MIDIMessage) -> Int? {
        message.status == status ? Int(message.data1) : nil
    }

    @inlinable
    public static func isPress(_ message: MIDIMessage) -> Bool { message.data2 != 0 }
}

/// A unit that plays something with a transport (the player, the looper): its state for
/// `--status` and `--meters`. The render thread stores the values once per block with
/// relaxed atomics. Thread: any.
public protocol UnitTransport: AnyObject {
    /// A word for the state: "playing", "stopped", "recording", ...
    var transportState: String { get }
    /// Where it plays, in seconds of its material.
    var positionSeconds: Double { get }
    /// Seconds left to the end (nil when not known or looping forever).
    var remainingSeconds: Double? { get }
    /// Blocks in which the disk was late and silence was played (0 for units without a disk).
    var underruns: Int { get }
    /// The command (`UnitCommand`) that stops it with its fade: sent when its rack is left
    /// for another (`RenderEngine.releaseAllNotes`), so a backing track does not play on
    /// under the next song.
    var stopCommand: Int { get }
}
