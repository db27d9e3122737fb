/// A setlist song's MIDI-file backing (`"midi"`, racks/README.md "A MIDI file as backing"):
/// the channel messages of a Standard MIDI File with their places in quarter notes, played
/// by the song clock (`SongMIDIPlayer`) in the song's tempo from bar 1 beat 1 through the
/// rack's units that play MIDI (each listens to its own channels). The file's tempo map is
/// not followed: the song's tempo (the documented precedence) places the beats; the file's
/// tempo at its start is the song's tempo when the song names none.
///
/// Made when the setlist is read (`RackFiles.readSetlist`: a missing, broken or SMPTE-timed
/// file is an error at the `"midi"` key's line and column), carried by the song's
/// `SongTimeline` into the rack. Thread: control (a value).
public struct SongMIDIBacking: Sendable, Equatable {
    /// The file as resolved (for messages).
    public var file: String
    /// Channel messages in time order, each with its place in quarter notes from the start.
    public var messages: [MIDIMessage]
    public var quarterNotes: [Double]
    /// The file's tempo at tick 0 in BPM (quarter notes), if it sets one.
    public var initialTempo: Double?

    public init(file: String, messages: [MIDIMessage], quarterNotes: [Double], initialTempo: Double? = nil) {
        self.file = file
        self.messages = messages
        self.quarterNotes = quarterNotes
        self.initialTempo = initialTempo
    }

    /// The backing of a parsed file; nil (with the reason) when it has no beats to follow
    /// (an SMPTE time division counts seconds, not quarter notes).
    public static func make(file: String, from smf: StandardMIDIFile) -> Result<SongMIDIBacking, SongMIDIBackingError> {
        guard smf.quarterNotes.count == smf.messages.count else {
            return .failure(SongMIDIBackingError(message: "its time division counts SMPTE frames, not beats: a song's MIDI file must count ticks per quarter note to follow the song's tempo"))
        }
        guard smf.messages.contains(where: { $0.message.isNoteOn }) else {
            return .failure(SongMIDIBackingError(message: "has no notes to play"))
        }
        return .success(SongMIDIBacking(
            file: file, messages: smf.messages.map(\.message), quarterNotes: smf.quarterNotes, initialTempo: smf.initialTempo))
    }

    /// Song beats a quarter note in a time signature whose beat is a `beatUnit` note: 1 in
    /// 4/4, 2 in 6/8 (the song's tempo counts eighths there).
    public static func beatsPerQuarter(beatUnit: Int) -> Double { Double(beatUnit) / 4 }
}

/// Why a MIDI file cannot back a song. Thread: any (a value).
public struct SongMIDIBackingError: Error, Sendable {
    public var message: String
}
