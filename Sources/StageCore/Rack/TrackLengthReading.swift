/// A unit type that can tell how long a sound file is (the `player`'s, through
/// libsndfile): `RackFiles.readSong` checks a song's sections (placed by time, or by bar in a
/// song with a tempo) against its track's length with it. Thread: control.
public protocol TrackLengthReading {
    /// The file's length in seconds; nil when it cannot be read or its length is unknown.
    func trackSeconds(_ path: String) -> Double?
}
