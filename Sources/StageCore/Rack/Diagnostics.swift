/// One problem found in a rack file, located as `FILE:LINE:COL: path: message`.
public struct RackDiagnostic: Sendable, Hashable, CustomStringConvertible {
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

    /// Sorted by line, then column (a stable sort: problems at one place keep their order;
    /// those with no place come first).
    public static func sortedByPlace(_ diagnostics: [RackDiagnostic]) -> [RackDiagnostic] {
        diagnostics.enumerated().sorted { a, b in
            let la = a.element.location ?? SourceLocation(line: 0, column: 0)
            let lb = b.element.location ?? SourceLocation(line: 0, column: 0)
            return la != lb ? la < lb : a.offset < b.offset
        }.map(\.element)
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

/// Suggests known words for a misspelt or shortened one, for "did you mean" hints.
public enum Suggest {
    /// Words longer than this get no suggestion (and cost no time).
    static let longestWord = 100

    /// The candidate nearest to `word` by edit distance (case-insensitive), if it is close
    /// enough to be a plausible typo.
    public static func closest(to word: String, in candidates: [String]) -> String? {
        guard word.count <= longestWord else { return nil }
        let w = Array(word.lowercased())
        var best: (String, Int)?
        for c in candidates where c.count <= longestWord {
            let d = distance(w, Array(c.lowercased()))
            if best == nil || d < best!.1 { best = (c, d) }
        }
        guard let (candidate, d) = best else { return nil }
        let limit = max(2, min(w.count, candidate.count) / 3)
        return d <= limit ? candidate : nil
    }

    /// What `word` may have meant, best first (at most three): a close typo; else the
    /// candidates that end with it (`time` → `delayTime`); else those that contain it or
    /// that it contains (`wet` → `wetDryMix`). Case-insensitive; words under 3 letters
    /// only match as typos.
    public static func candidates(for word: String, in candidates: [String]) -> [String] {
        if let c = closest(to: word, in: candidates) { return [c] }
        let w = word.lowercased()
        guard w.count >= 3, w.count <= longestWord else { return [] }
        let lowered = candidates.map { ($0, $0.lowercased()) }
        let suffixes = lowered.filter { $0.1.hasSuffix(w) }.map(\.0)
        if !suffixes.isEmpty { return Array(suffixes.prefix(3)) }
        let parts = lowered.filter { $0.1.contains(w) || ($0.1.count >= 3 && w.contains($0.1)) }.map(\.0)
        return Array(parts.prefix(3))
    }

    /// `" (did you mean \"x\"?)"`, `" (did you mean \"x\" or \"y\"?)"`, or empty when
    /// nothing fits.
    public static func hint(for word: String, in candidates: [String]) -> String {
        let found = Self.candidates(for: word, in: candidates).map { "\"\($0)\"" }
        guard let last = found.last else { return "" }
        let list = found.count == 1 ? last : found.dropLast().joined(separator: ", ") + " or " + last
        return " (did you mean \(list)?)"
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
