/// One problem found in a rack file, located as `FILE:LINE:COL: path: message`.
public struct RackDiagnostic: Sendable, Equatable, CustomStringConvertible {
    /// The file it came from; empty for racks that were not read from a file.
    public var file: String
    public var location: SourceLocation?
    /// Where in the document, e.g. `units.reverb.params.dryWetMix`.
    public var path: String
    public var message: String

    public init(file: String = "", location: SourceLocation?, path: String, message: String) {
        self.file = file
        self.location = location
        self.path = path
        self.message = message
    }

    public var description: String {
        var s = file.isEmpty ? "rack" : file
        if let location { s += ":\(location.line):\(location.column)" }
        s += ": "
        if !path.isEmpty { s += "\(path): " }
        return s + message
    }
}

/// A rack that cannot be used, with every problem found (not just the first).
public struct RackError: Error, Sendable, Equatable, CustomStringConvertible {
    public var diagnostics: [RackDiagnostic]
    public init(_ diagnostics: [RackDiagnostic]) { self.diagnostics = diagnostics }
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// Suggests the closest known word to a misspelt one, for "did you mean" hints.
public enum Suggest {
    /// The candidate nearest to `word` by edit distance (case-insensitive), if it is close
    /// enough to be a plausible typo.
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let w = Array(word.lowercased())
        var best: (String, Int)?
        for c in candidates {
            let d = distance(w, Array(c.lowercased()))
            if best == nil || d < best!.1 { best = (c, d) }
        }
        guard let (candidate, d) = best else { return nil }
        let limit = max(2, min(w.count, candidate.count) / 3)
        return d <= limit ? candidate : nil
    }

    /// `" (did you mean \"x\"?)"`, or empty when nothing is close.
    public static func hint(for word: String, in candidates: [String]) -> String {
        guard let c = closest(to: word, in: candidates) else { return "" }
        return " (did you mean \"\(c)\"?)"
    }

    /// Levenshtein distance with adjacent transpositions counted as one edit.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev2 = [Int](repeating: 0, count: b.count + 1)
        var prev = Array(0...b.count)
        var cur = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            cur[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    cur[j] = min(cur[j], prev2[j - 2] + 1)
                }
            }
            (prev2, prev, cur) = (prev, cur, prev2)
        }
        return prev[b.count]
    }
}
