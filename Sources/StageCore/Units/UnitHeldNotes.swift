/// A unit that plays MIDI notes and knows, per channel, whether anything it was sent still
/// holds a note: a key down, the sustain pedal (CC 64) or the sostenuto pedal (CC 66) down.
///
/// When a rack is left, `RenderEngine.releaseAllNotes` sends sustain-off, sostenuto-off and
/// all-notes-off to each unit that plays MIDI, so its notes end with their own release. To
/// a unit that conforms it sends them only on the channels this names (sostenuto-off only
/// where that pedal is down) (each message costs an
/// instrument such as FluidSynth a scan of all its voices: 32 of them took 28–41 µs of a
/// switch block with nothing sounding); to every other MIDI receiver, on all 16 channels.
public protocol UnitHeldNotes: AnyObject {
    /// Bit c (0-based channel c) set when that channel has a key down or its sustain or
    /// sostenuto pedal down; 0 when the pedals off and all-notes-off would change nothing.
    /// Thread: render.
    var channelsHoldingNotes: UInt16 { get }
    /// Bit c set when channel c's sostenuto pedal is down (a subset of
    /// `channelsHoldingNotes`). Thread: render.
    var channelsWithSostenutoDown: UInt16 { get }
}
