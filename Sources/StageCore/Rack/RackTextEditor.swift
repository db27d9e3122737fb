/// Small edits of a rack file's text that keep everything else as written (comments,
/// layout, key order): `stagerack learn --write` adds a mapping this way.
/// Thread: any (pure functions).
public enum RackTextEditor {
    public struct EditError: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// `text` with `entry` (one JSON value) appended to `midi.map`, creating `map` or the
    /// whole `midi` section when missing. The new entry takes the indentation of its
    /// neighbours; a trailing comma style is kept.
    public static func addingMIDIMapping(_ entry: String, to text: String) throws(EditError) -> String {
        let (root, chars, offset) = try parsed(text)

        if let midi = root["midi"] {
            guard midi.value.members != nil else { throw EditError(message: "midi is not an object") }
            if let map = midi.value["map"] {
                guard map.value.elements != nil else { throw EditError(message: "midi.map is not a list") }
                return insert(entry, into: chars, open: offset(map.value.location))
            }
            return insert("\"map\": [ \(entry) ]", into: chars, open: offset(midi.value.location))
        }
        return insert("\"midi\": { \"map\": [ \(entry) ] }", into: chars, open: offset(root.location))
    }

    /// Inserts `item` as the last element of the object or array opening at `open`.
    static func insert(_ item: String, into chars: [Unicode.Scalar], open: Int) -> String {
        var i = open + 1
        var depth = 0
        var last = open  // the last significant character before the close
        var firstInside: Int?
        while i < chars.count {
            let c = chars[i]
            if c == "/" && i + 1 < chars.count && chars[i + 1] == "/" {
                while i < chars.count && chars[i] != "\n" { i += 1 }
                continue
            }
            if c == "/" && i + 1 < chars.count && chars[i + 1] == "*" {
                i += 2
                while i + 1 < chars.count && !(chars[i] == "*" && chars[i + 1] == "/") { i += 1 }
                i += 2
                continue
            }
            if c == " " || c == "\t" || c == "\n" || c == "\r" {
                i += 1
                continue
            }
            if depth == 0 && (c == "]" || c == "}") { break }
            if firstInside == nil { firstInside = i }
            if c == "\"" || c == "'" {
                i += 1
                while i < chars.count && chars[i] != c {
                    if chars[i] == "\\" { i += 1 }
                    i += 1
                }
            } else if c == "[" || c == "{" {
                depth += 1
            } else if c == "]" || c == "}" {
                depth -= 1
            }
            last = i
            i += 1
        }
        let close = i
        let multiline = chars[open..<min(close, chars.count)].contains("\n")
        let indent: String = {
            guard let f = firstInside else {
                return lineIndent(chars, at: open) + "  "
            }
            return lineIndent(chars, at: f)
        }()
        let firstOnOwnLine = firstInside.map { f in !chars[open..<f].filter { $0 == "\n" }.isEmpty } ?? false
        var out = chars
        if last == open {
            // Empty: `[]` or `{}`.
            let text = multiline ? "\n\(indent)\(item)\n\(lineIndent(chars, at: open))" : " \(item) "
            out.replaceSubrange((open + 1)..<close, with: text.unicodeScalars)
        } else if !firstOnOwnLine {
            let text = chars[last] == "," ? " \(item)," : ", \(item)"
            out.insert(contentsOf: text.unicodeScalars, at: last + 1)
        } else {
            // One element per line: the new one goes on a line of its own after the last
            // one's line (and after a `//` comment that ends it).
            let end = lineEnd(chars, after: last)
            let text = chars[last] == "," ? "\n\(indent)\(item)," : "\n\(indent)\(item)"
            out.insert(contentsOf: text.unicodeScalars, at: end)
            if chars[last] != "," { out.insert(",", at: last + 1) }
        }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: out)
        return String(result)
    }

    /// Where the line holding `index` ends when only spaces and a `//` comment follow it;
    /// otherwise just after `index`.
    static func lineEnd(_ chars: [Unicode.Scalar], after index: Int) -> Int {
        var i = index + 1
        while i < chars.count && (chars[i] == " " || chars[i] == "\t") { i += 1 }
        if i + 1 < chars.count && chars[i] == "/" && chars[i + 1] == "/" {
            while i < chars.count && chars[i] != "\n" && chars[i] != "\r" { i += 1 }
        }
        if i < chars.count && chars[i] == "\r" { return i }
        return i < chars.count && chars[i] == "\n" ? i : index + 1
    }

    static func lineStarts(_ chars: [Unicode.Scalar]) -> [Int] {
        var starts = [0]
        for (i, c) in chars.enumerated() where c == "\n" { starts.append(i + 1) }
        return starts
    }

    /// The spaces and tabs that start the line holding `index`.
    static func lineIndent(_ chars: [Unicode.Scalar], at index: Int) -> String {
        var s = index
        while s > 0 && chars[s - 1] != "\n" { s -= 1 }
        var e = s
        while e < chars.count && (chars[e] == " " || chars[e] == "\t") { e += 1 }
        var v = String.UnicodeScalarView()
        v.append(contentsOf: chars[s..<e])
        return String(v)
    }
}
