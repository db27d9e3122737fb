extension RackTextEditor {
    /// `text` (a JSON5 object: a config file) with its top-level `key` set to `value`:
    /// the number replaced where the key is, else a member added at the end. Comments and
    /// everything else stay as written (`stagerack latency --write`).
    public static func settingNumber(_ key: String, to value: Int, in text: String) throws(EditError) -> String {
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw EditError(message: "\(error.location): \(error.message)")
        }
        guard root.members != nil else { throw EditError(message: "the file is not a JSON object") }
        let chars = Array(text.unicodeScalars)
        let lines = lineStarts(chars)
        let bom = chars.first == "\u{FEFF}" ? 1 : 0
        func offset(_ l: SourceLocation) -> Int { lines[l.line - 1] + l.column - 1 + (l.line == 1 ? bom : 0) }
        guard let member = root[key] else {
            return insert("\"\(key)\": \(value)", into: chars, open: offset(root.location))
        }
        guard member.value.number != nil else { throw EditError(message: "\(key) is not a number") }
        let start = offset(member.value.location)
        var end = start
        let numberCharacters = Set("+-0123456789.eExXabcdefABCDEF".unicodeScalars)
        while end < chars.count && numberCharacters.contains(chars[end]) { end += 1 }
        var out = chars
        out.replaceSubrange(start..<end, with: String(value).unicodeScalars)
        var result = String.UnicodeScalarView()
        result.append(contentsOf: out)
        return String(result)
    }
}
