/// A song's lyrics matched to its sections: the ChordPro file's blocks and, for each of the
/// song's sections (`SongTimeline.sections`, in the order the song clock numbers them), the
/// block it shows (nil: none, an instrumental). Made on the control thread when the song's
/// rack is read; sent to the page (`WebProtocol.lyrics`). Thread: any (a value).
///
/// A section named N shows (names compared without case, runs of spaces and "_" as one space):
/// 1. the block labelled N (`{start_of_verse: Verse 2}`, `{comment: Chorus}` above a
///    paragraph); the k-th section named N takes the k-th such block, the last repeating;
/// 2. else, when N is a kind and a number ("verse 2"), the block of that number among the
///    blocks of that kind (`{sov}` … `{eov}` blocks count 1, 2, ...; a paragraph outside
///    any environment is a verse);
/// 3. else, when N is a kind ("verse", "chorus", "bridge"), the k-th section named N takes
///    the k-th block of that kind, the last repeating (a chorus sung three times);
/// 4. else no block: the page shows the section's name alone (an intro, a solo).
public struct SongLyrics: Sendable, Equatable {
    public var title: String?
    public var blocks: [LyricBlock]
    /// For section i of the song's timeline, the index of its block in `blocks`.
    public var sectionBlocks: [Int?]
    /// The sections' names, as the song's timeline has them.
    public var sectionNames: [String]

    /// Matches `song`'s blocks to sections `names` (the timeline's, in order). Thread: control.
    public init(_ song: ChordProSong, sections names: [String]) {
        title = song.title
        blocks = song.blocks
        sectionNames = names
        var seen: [String: Int] = [:]
        sectionBlocks = names.map { name in
            let n = Self.normalized(name)
            let k = seen[n, default: 0]
            seen[n] = k + 1
            return Self.block(for: n, occurrence: k, in: song.blocks)
        }
    }

    static func block(for name: String, occurrence k: Int, in blocks: [LyricBlock]) -> Int? {
        let labelled = blocks.indices.filter { blocks[$0].label.map(normalized) == name }
        if !labelled.isEmpty { return labelled[min(k, labelled.count - 1)] }
        let words = name.split(separator: " ")
        if words.count >= 2, let number = Int(words.last!) {
            let kind = words.dropLast().joined(separator: " ")
            return blocks.indices.first { normalized(blocks[$0].kind) == kind && blocks[$0].number == number }
        }
        let ofKind = distinctOfKind(name, in: blocks)
        return ofKind.isEmpty ? nil : ofKind[min(k, ofKind.count - 1)]
    }

    /// The blocks of `kind`, one per number (a `{chorus}` repeat is the chorus it repeats).
    static func distinctOfKind(_ kind: String, in blocks: [LyricBlock]) -> [Int] {
        var numbers: Set<Int> = []
        return blocks.indices.filter { normalized(blocks[$0].kind) == kind && numbers.insert(blocks[$0].number).inserted }
    }

    /// Lowercased, "_" as a space, runs of spaces as one, none at the ends.
    static func normalized(_ s: String) -> String {
        s.lowercased().split { $0 == " " || $0 == "_" || $0 == "\t" }.joined(separator: " ")
    }
}
