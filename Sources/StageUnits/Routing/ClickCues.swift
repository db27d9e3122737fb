import StageCore

#if canImport(Glibc)
import Glibc
#endif

/// A cue file that cannot be used, naming it. Thread: any (a value).
public struct CueError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// The song's spoken cues for a `click` unit (racks/README.md, "Spoken cues"): decoded,
/// resampled and peak-normalised on the control thread when the unit is made, from its
/// `songCues` setting (`RackDescription.giveCuesToClicks`); read by the render thread
/// (`ClickUnit.speak`) without allocating. Thread: init control; the rest render.
final class ClickCues {
    /// Per cue: the section it names (its index in the song's sections), and its samples'
    /// range in `samples`.
    private let sections: UnsafeMutablePointer<Int32>
    private let starts: UnsafeMutablePointer<Int>
    private let samplesStore: UnsafeMutablePointer<Float>
    let count: Int

    /// No cues. Thread: control.
    convenience init() { self.init(list: []) }

    /// Decodes `settings`' cues with `decode` at `sampleRate`. A named file that does not
    /// decode throws naming it; a section name with no shipped cue (`cues/NAME.flac` beside
    /// the rack) has none. Thread: control.
    convenience init(_ settings: UnitSettings, sampleRate: Double, decode: ClickUnitType.CueDecoder?) throws {
        var list: [(Int32, [Float])] = []
        for node in settings.node(RackDescription.songCuesKey)?.elements ?? [] {
            guard let section = node["section"]?.value.number else { continue }
            if let file = node["file"]?.value.string {
                guard let decode else { throw CueError(description: "cue \(file): this program cannot decode cue files") }
                list.append((Int32(section), Self.normalised(try Self.decoded(file, sampleRate, decode))))
                continue
            }
            guard let name = node["name"]?.value.string, let decode else { continue }
            let path = Self.shippedCue(named: name, rackDirectory: settings.rackDirectory)
            guard access(path, R_OK) == 0 else { continue }
            list.append((Int32(section), Self.normalised(try Self.decoded(path, sampleRate, decode))))
        }
        self.init(list: list)
    }

    private init(list: [(Int32, [Float])]) {
        count = list.count
        sections = .allocate(capacity: max(count, 1))
        starts = .allocate(capacity: count + 1)
        let total = list.reduce(0) { $0 + $1.1.count }
        samplesStore = .allocate(capacity: max(total, 1))
        var at = 0
        for (k, (section, samples)) in list.enumerated() {
            sections[k] = section
            starts[k] = at
            (samplesStore + at).initialize(from: samples, count: samples.count)
            at += samples.count
        }
        starts[count] = at
    }

    deinit {
        sections.deallocate()
        starts.deallocate()
        samplesStore.deallocate()
    }

    /// The cue of section `section`, if it has one. Thread: render.
    @inline(__always)
    func index(ofSection section: Int32) -> Int? {
        for k in 0..<count where sections[k] == section { return k }
        return nil
    }

    /// Cue `k`'s samples. Thread: render.
    @inline(__always)
    func samples(_ k: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: samplesStore + starts[k], count: starts[k + 1] - starts[k])
    }

    /// The shipped cue for a section name: `cues/last-chorus.flac` for "Last chorus", in
    /// the rack's folder. Thread: control.
    static func shippedCue(named name: String, rackDirectory: String) -> String {
        let file = String(name.lowercased().map { $0 == " " ? "-" : $0 })
        return (rackDirectory.isEmpty ? "" : rackDirectory + "/") + "cues/" + file + ".flac"
    }

    static func decoded(_ path: String, _ rate: Double, _ decode: ClickUnitType.CueDecoder) throws -> [Float] {
        do { return try decode(path, rate) } catch { throw CueError(description: "cue \(path): \(error)") }
    }

    /// `samples` scaled to a peak of 1 (the click's level then sets it). Thread: control.
    static func normalised(_ samples: [Float]) -> [Float] {
        let peak = samples.reduce(0) { max($0, abs($1)) }
        return peak > 0 ? samples.map { $0 / peak } : samples
    }
}
