extension RackTextEditor {
    /// `text` with `units.UNIT.params.PARAM` set to `value` (JSON text: a number, `true`,
    /// a quoted choice) for each entry: the value replaced where the key is, else the key
    /// added to the unit's `params` (made when missing). Everything else stays as written
    /// ("save" from the remote page).
    public static func settingParameters(_ values: [(unit: String, parameter: String, value: String)], in text: String) throws(EditError) -> String {
        var out = text
        for v in values { out = try settingParameter(unit: v.unit, parameter: v.parameter, value: v.value, in: out) }
        return out
    }

    static func settingParameter(unit: String, parameter: String, value: String, in text: String) throws(EditError) -> String {
        let (root, chars, offset) = try parsed(text)
        guard let units = root["units"]?.value, units.members != nil, let u = units[unit]?.value, u.members != nil else {
            throw EditError(message: "the rack has no unit \"\(unit)\"")
        }
        guard let params = u["params"] else {
            return insert("\"params\": { \(quoted(parameter)): \(value) }", into: chars, open: offset(u.location))
        }
        guard params.value.members != nil else { throw EditError(message: "units.\(unit).params is not an object") }
        guard let member = params.value[parameter] else {
            return insert("\(quoted(parameter)): \(value)", into: chars, open: offset(params.value.location))
        }
        let start = offset(member.value.location)
        var out = chars
        out.replaceSubrange(start..<tokenEnd(chars, from: start), with: value.unicodeScalars)
        return string(out)
    }

    /// `text` with a snapshot `name` of `values` (`unit.param` → JSON value text) added to
    /// `snapshots` (made when missing).
    public static func addingSnapshot(_ name: String, values: [(target: String, value: String)], in text: String) throws(EditError) -> String {
        let (root, chars, offset) = try parsed(text)
        let params = values.map { "\(quoted($0.target)): \($0.value)" }.joined(separator: ", ")
        let entry = "\(quoted(name)): { \"params\": { \(params) } }"
        guard let snapshots = root["snapshots"] else {
            return insert("\"snapshots\": { \(entry) }", into: chars, open: offset(root.location))
        }
        guard snapshots.value.members != nil else { throw EditError(message: "snapshots is not an object") }
        guard snapshots.value[name] == nil else { throw EditError(message: "the rack has a snapshot \"\(name)\" already") }
        return insert(entry, into: chars, open: offset(snapshots.value.location))
    }

    /// A JSON string for `s` (quotes, backslashes and control characters escaped).
    public static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20:
                let h = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    static func parsed(_ text: String) throws(EditError) -> (JSONNode, [Unicode.Scalar], (SourceLocation) -> Int) {
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw EditError(message: "\(error.location): \(error.message)")
        }
        guard root.members != nil else { throw EditError(message: "the rack is not a JSON object") }
        let chars = Array(text.unicodeScalars)
        let lines = lineStarts(chars)
        let bom = chars.first == "\u{FEFF}" ? 1 : 0  // the parser skips it without counting a column
        return (root, chars, { l in lines[l.line - 1] + l.column - 1 + (l.line == 1 ? bom : 0) })
    }

    /// Where the scalar value (number, literal or string) starting at `start` ends.
    static func tokenEnd(_ chars: [Unicode.Scalar], from start: Int) -> Int {
        var i = start
        if i < chars.count, chars[i] == "\"" || chars[i] == "'" {
            let q = chars[i]
            i += 1
            while i < chars.count && chars[i] != q {
                if chars[i] == "\\" { i += 1 }
                i += 1
            }
            return min(i + 1, chars.count)
        }
        while i < chars.count && !",}] \t\r\n/".unicodeScalars.contains(chars[i]) { i += 1 }
        return i
    }

    static func string(_ chars: [Unicode.Scalar]) -> String {
        var result = String.UnicodeScalarView()
        result.append(contentsOf: chars)
        return String(result)
    }
}
