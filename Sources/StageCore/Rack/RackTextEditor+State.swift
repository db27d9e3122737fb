extension RackTextEditor {
    /// `text` with each `units.UNIT.state` set to its JSON text: the whole value replaced
    /// where the key is, else the key added to the unit. The new value's lines after the
    /// first take the indentation of the line the key is on. Everything else stays as
    /// written ("save" from the remote page keeps LV2 plugins' state this way).
    public static func settingUnitStates(_ states: [(unit: String, json: String)], in text: String) throws(EditError) -> String {
        var out = text
        for s in states { out = try settingUnitValue(unit: s.unit, key: "state", json: s.json, in: out) }
        return out
    }

    static func settingUnitValue(unit: String, key: String, json: String, in text: String) throws(EditError) -> String {
        let (root, chars, offset) = try parsed(text)
        guard let units = root["units"]?.value, units.members != nil, let u = units[unit]?.value, u.members != nil else {
            throw EditError(message: "the rack has no unit \"\(unit)\"")
        }
        guard let member = u.members?.first(where: { $0.key == key }) else {
            let open = offset(u.location)
            let inside = u.members?.first.map { lineIndent(chars, at: offset($0.keyLocation)) } ?? lineIndent(chars, at: open) + "  "
            return insert("\(quoted(key)): \(indented(json, inside))", into: chars, open: open)
        }
        let start = offset(member.value.location)
        var out = chars
        let value = indented(json, lineIndent(chars, at: offset(member.keyLocation)))
        out.replaceSubrange(start..<valueEnd(chars, from: start), with: value.unicodeScalars)
        return string(out)
    }

    /// `json` with every line after the first indented by `indent`.
    static func indented(_ json: String, _ indent: String) -> String {
        json.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .map { $0.offset == 0 ? String($0.element) : indent + $0.element }.joined(separator: "\n")
    }

    /// Where the value (object, array or scalar) starting at `start` ends: past its closing
    /// bracket, skipping strings and comments inside.
    static func valueEnd(_ chars: [Unicode.Scalar], from start: Int) -> Int {
        guard start < chars.count, chars[start] == "{" || chars[start] == "[" else { return tokenEnd(chars, from: start) }
        var depth = 0
        var i = start
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
            if c == "\"" || c == "'" {
                i = tokenEnd(chars, from: i)
                continue
            }
            if c == "{" || c == "[" { depth += 1 }
            if c == "}" || c == "]" {
                depth -= 1
                if depth == 0 { return i + 1 }
            }
            i += 1
        }
        return chars.count
    }
}
