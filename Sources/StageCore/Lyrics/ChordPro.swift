/// A song's lyrics and chords as read from a ChordPro file (https://www.chordpro.org):
/// its title and its sections (ChordPro's environments `{start_of_verse}` … `{end_of_verse}`,
/// `{sov}`/`{soc}`/`{sob}`, any `{start_of_NAME}`; a `{chorus}` that repeats the last chorus;
/// paragraphs outside any environment, each a verse of its own, named by a `{comment}` just
/// above it). Read on the control thread when the setlist is read (`ChordProReader`);
/// shown by the page (racks/README.md, "Lyrics and chords"). Thread: any (a value).
public struct ChordProSong: Sendable, Equatable {
    public var title: String?
    public var blocks: [LyricBlock] = []

    public init(title: String? = nil, blocks: [LyricBlock] = []) {
        self.title = title
        self.blocks = blocks
    }
}

/// One section of a ChordPro file: its kind (the environment's name: "verse", "chorus",
/// "bridge", ...), its label if the file gives one ("Verse 1"), its number among the
/// sections of its kind (1, 2, ...) and its lines. Thread: any (a value).
public struct LyricBlock: Sendable, Equatable {
    public var kind: String
    public var label: String?
    public var number: Int
    public var lines: [LyricLine]
    /// The line of the file it starts on.
    public var line: Int

    public init(kind: String, label: String?, number: Int, lines: [LyricLine], line: Int) {
        self.kind = kind
        self.label = label
        self.number = number
        self.lines = lines
        self.line = line
    }
}

/// A line of lyrics: words with the chords above them, as segments (a chord, "" for none,
/// and the words it stands over), or a comment shown as it is. Thread: any (a value).
public enum LyricLine: Sendable, Equatable {
    public struct Segment: Sendable, Equatable {
        /// The chord as written ("F#m7/C#"); "" before the first chord; an annotation
        /// (`[*Rit.]`) starts with "*" and is never transposed.
        public var chord: String
        public var text: String
        public init(chord: String, text: String) {
            self.chord = chord
            self.text = text
        }
    }

    case words([Segment])
    case comment(String)
    /// Words sung from `seconds` into the song's backing track: a line that starts with a
    /// time tag, `[1:23.5]` (minutes, seconds; a chord name never looks like one).
    case timed(Double, [Segment])
}

/// A ChordPro file that cannot be read: every problem, each at its line and column.
/// Thread: any (a value).
public struct ChordProError: Error, Sendable, Equatable {
    public struct Problem: Sendable, Equatable {
        public var location: SourceLocation
        public var message: String
    }

    public var problems: [Problem]
}

/// Reads ChordPro text (a subset: the directives a lyric sheet on stage needs; metadata
/// and layout directives are accepted and left out; an unknown directive is an error, as
/// a typo would be). Thread: control.
public struct ChordProReader {
    /// The directives that start and end the environments with short names.
    static let shortStarts = ["sov": "verse", "soc": "chorus", "sob": "bridge", "sot": "tab", "sog": "grid"]
    static let shortEnds = ["eov": "verse", "eoc": "chorus", "eob": "bridge", "eot": "tab", "eog": "grid"]
    static let comments = ["comment", "c", "comment_italic", "ci", "comment_box", "cb", "highlight"]
    /// Directives read and left out: metadata, fonts, page layout, chord diagrams.
    static let ignored = [
        "subtitle", "st", "artist", "composer", "lyricist", "copyright", "album", "year", "key", "time", "tempo",
        "duration", "capo", "meta", "arranger", "sorttitle", "tag", "new_song", "ns", "new_page", "np",
        "new_physical_page", "npp", "column_break", "colb", "columns", "col", "pagetype", "grid", "g", "no_grid", "ng",
        "titles", "chord", "define", "transpose", "image", "diagrams", "chordfont", "cf", "chordsize", "cs",
        "chordcolour", "textfont", "tf", "textsize", "ts", "textcolour", "tabfont", "tabsize", "tabcolour", "tocfont",
        "tocsize", "toccolour", "titlefont", "titlesize", "footerfont", "footersize", "labelfont", "labelsize",
    ]

    var song = ChordProSong()
    var problems: [ChordProError.Problem] = []
    /// The environment open: its kind, label, lines and the line it started on.
    var open: (kind: String, label: String?, lines: [LyricLine], line: Int, explicit: Bool)?
    /// A `{comment}` just above a paragraph outside any environment: the paragraph's label.
    var pendingLabel: String?
    var counts: [String: Int] = [:]

    public init() {}

    /// The song in `text`, or every problem found. Thread: control.
    public static func read(_ text: String) throws(ChordProError) -> ChordProSong {
        var reader = ChordProReader()
        var number = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            reader.read(line: raw.hasSuffix("\r") ? raw.dropLast() : raw, number: number)
        }
        if let open = reader.open, open.explicit {
            reader.fail(open.line, 1, "{start_of_\(open.kind)} is never ended; add {end_of_\(open.kind)}")
        }
        reader.close()
        if reader.song.blocks.isEmpty, reader.problems.isEmpty {
            reader.fail(1, 1, "no lyrics: the file has no lines of words")
        }
        if !reader.problems.isEmpty { throw ChordProError(problems: reader.problems) }
        return reader.song
    }

    mutating func fail(_ line: Int, _ column: Int, _ message: String) {
        problems.append(.init(location: SourceLocation(line: line, column: column), message: message))
    }

    mutating func read(line raw: Substring, number: Int) {
        if raw.first == "#" { return }  // a comment for the file's reader, not shown
        let indent = raw.prefix { $0 == " " || $0 == "\t" }.count
        let line = raw.dropFirst(indent)
        if line.first == "{" {
            directive(line, number: number, column: indent + 1)
            return
        }
        if line.allSatisfy({ $0 == " " || $0 == "\t" }) {
            // A blank line ends a paragraph outside an environment (inside one it is kept out).
            if let o = open, !o.explicit { close() }
            return
        }
        if open == nil {
            open = ("verse", pendingLabel, [], number, false)
            pendingLabel = nil
        }
        if let kind = open?.kind, kind == "tab" || kind == "grid" {
            open?.lines.append(.words([.init(chord: "", text: String(raw))]))
            return
        }
        if let (seconds, rest) = Self.timeTag(line) {
            let shift = raw.distance(from: raw.startIndex, to: rest.startIndex)
            if let words = words(rest, number: number, shift: shift) { open?.lines.append(.timed(seconds, words)) }
            return
        }
        if let words = words(raw, number: number) { open?.lines.append(.words(words)) }
    }

    static func isDigit(_ c: Character) -> Bool { c >= "0" && c <= "9" }

    /// `[1:23.5] words` → (83.5, "words"): a time tag at the line's start (1–3 digits of
    /// minutes, 2 of seconds, an optional fraction), the spaces after it dropped; nil when
    /// the line does not start with one.
    static func timeTag(_ line: Substring) -> (Double, Substring)? {
        guard line.first == "[", let close = line.firstIndex(of: "]") else { return nil }
        let tag = line[line.index(after: line.startIndex)..<close]
        let parts = tag.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...3).contains(parts[0].count), parts[0].allSatisfy(Self.isDigit) else { return nil }
        let fraction = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard fraction.count <= 2, fraction[0].count == 2, fraction.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Self.isDigit) }),
            let minutes = Double(parts[0]), let seconds = Double(parts[1]), seconds < 60
        else { return nil }
        return (minutes * 60 + seconds, line[line.index(after: close)...].drop { $0 == " " || $0 == "\t" })
    }

    /// `Amazing [G]grace` → ("", "Amazing "), ("G", "grace"): one pass over the characters.
    mutating func words(_ raw: Substring, number: Int, shift: Int = 0) -> [LyricLine.Segment]? {
        var segments: [LyricLine.Segment] = []
        var chord = ""
        var text = ""
        var name: String?  // inside [ ]: the chord so far
        var opened = 0  // the column of the "[" open
        for (offset, c) in raw.enumerated() {
            let column = offset + 1 + shift  // `shift`: characters of the line before `raw` (a time tag)
            if var n = name {
                if c == "]" {
                    guard !n.isEmpty else {
                        fail(number, opened, "an empty chord \"[]\"")
                        return nil
                    }
                    guard n.first == "*" || !n.contains(" ") else {
                        fail(number, opened, "\"[\(n)]\" is not a chord (a chord has no spaces; an annotation is [*text])")
                        return nil
                    }
                    if !chord.isEmpty || !text.isEmpty { segments.append(.init(chord: chord, text: text)) }
                    chord = n
                    text = ""
                    name = nil
                } else if c == "[" {
                    fail(number, column, "a \"[\" inside the chord opened at column \(opened)")
                    return nil
                } else {
                    n.append(c == "\t" ? " " : c)
                    name = n
                }
            } else if c == "[" {
                name = ""
                opened = column
            } else if c == "]" {
                fail(number, column, "a \"]\" with no \"[\" before it")
                return nil
            } else {
                text.append(c == "\t" ? " " : c)
            }
        }
        if name != nil {
            fail(number, opened, "a chord \"[\" is never closed with \"]\"")
            return nil
        }
        segments.append(.init(chord: chord, text: text))
        return segments
    }

    /// `{name: argument}` or `{name argument}`.
    mutating func directive(_ line: Substring, number: Int, column: Int) {
        let trimmed = line.trimmingTrailingSpaces
        guard trimmed.last == "}" else {
            fail(number, column, "a directive \"{\" must end with \"}\" on the same line")
            return
        }
        let body = trimmed.dropFirst().dropLast()
        let nameEnd = body.firstIndex { $0 == ":" || $0 == " " } ?? body.endIndex
        var name = body[..<nameEnd].lowercased()
        if let dash = name.firstIndex(of: "-") { name = String(name[..<dash]) }  // {title-guitar: ...}: a selector
        var argument = body[nameEnd...].drop { $0 == ":" || $0 == " " }.trimmingTrailingSpaces
        argument = Self.label(argument)
        let arg: String? = argument.isEmpty ? nil : String(argument)
        if name == "title" || name == "t" {
            song.title = arg
        } else if Self.comments.contains(name) {
            comment(arg ?? "")
        } else if let kind = Self.shortStarts[name] ?? (name.hasPrefix("start_of_") ? String(name.dropFirst(9)) : nil) {
            start(kind, label: arg, number: number, column: column)
        } else if let kind = Self.shortEnds[name] ?? (name.hasPrefix("end_of_") ? String(name.dropFirst(7)) : nil) {
            end(kind, number: number, column: column)
        } else if name == "chorus" {
            repeatChorus(label: arg, number: number, column: column)
        } else if !(Self.ignored.contains(name) || name.hasPrefix("x_")) {
            let known = Self.ignored + Self.comments + ["title", "chorus", "start_of_verse", "start_of_chorus", "end_of_verse", "end_of_chorus"]
            fail(number, column, "unknown directive {\(name)}\(Suggest.hint(for: name, in: known))")
        }
    }

    /// `label="Verse 1"` → `Verse 1`; a bare label as it is.
    static func label(_ s: Substring) -> Substring {
        var a = s
        if a.hasPrefix("label=") { a = a.dropFirst(6) }
        if a.count >= 2, let f = a.first, f == "\"" || f == "'", a.last == f { a = a.dropFirst().dropLast() }
        return a
    }

    mutating func comment(_ text: String) {
        if let o = open, o.explicit || !o.lines.isEmpty {
            if o.explicit { open?.lines.append(.comment(text)) } else { close(); pendingLabel = text }
        } else {
            pendingLabel = text
        }
    }

    mutating func start(_ kind: String, label: String?, number: Int, column: Int) {
        guard !kind.isEmpty, kind.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            fail(number, column, "an environment's name is letters, digits and \"_\"")
            return
        }
        if let o = open, o.explicit {
            fail(number, column, "{start_of_\(kind)} inside {start_of_\(o.kind)} (line \(o.line)); end that one first")
            return
        }
        close()
        open = (kind, label ?? pendingLabel, [], number, true)
        pendingLabel = nil
    }

    mutating func end(_ kind: String, number: Int, column: Int) {
        guard let o = open, o.explicit else {
            fail(number, column, "{end_of_\(kind)} with no {start_of_\(kind)} before it")
            return
        }
        guard o.kind == kind else {
            fail(number, column, "{end_of_\(kind)} ends {start_of_\(o.kind)} (line \(o.line)); write {end_of_\(o.kind)}")
            return
        }
        close()
    }

    /// `{chorus}`: the last chorus again, here.
    mutating func repeatChorus(label: String?, number: Int, column: Int) {
        if let o = open, o.explicit {
            fail(number, column, "{chorus} inside {start_of_\(o.kind)} (line \(o.line))")
            return
        }
        close()
        guard let last = song.blocks.last(where: { $0.kind == "chorus" }) else {
            fail(number, column, "{chorus} repeats the last chorus, and there is none before it")
            return
        }
        var again = last
        again.label = label ?? last.label
        again.line = number
        song.blocks.append(again)
    }

    /// Ends the environment or paragraph open, keeping it if it has lines.
    mutating func close() {
        defer { open = nil }
        guard let o = open, !o.lines.isEmpty else { return }
        counts[o.kind, default: 0] += 1
        song.blocks.append(LyricBlock(kind: o.kind, label: o.label, number: counts[o.kind]!, lines: o.lines, line: o.line))
    }
}

extension Substring {
    var trimmingTrailingSpaces: Substring {
        var s = self
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
