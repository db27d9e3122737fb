import CSndFile
import StageCore

/// The length of a song's track, for the check of its sections against it
/// (`SongTimeline.sectionsPastTrack`): the file's header, through libsndfile. Thread: control.
extension PlayerUnitType: TrackLengthReading {
    public func trackSeconds(_ path: String) -> Double? {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { return nil }
        defer { sf_close(file) }
        guard info.samplerate > 0, info.frames > 0, info.seekable != 0 else { return nil }
        return Double(info.frames) / Double(info.samplerate)
    }
}
