/// A JSON syntax error at a location.
public struct JSONSyntaxError: Error, Sendable, Equatable {
    public var location: SourceLocation
    public var message: String
}

/// Reads JSON with the JSON5 conveniences rack files allow: `//` and `/* */` comments,
/// trailing commas, unquoted identifier keys, single-quoted strings, a leading `+`,
/// hexadecimal integers. Every value keeps its line and column.
///
/// Foundation's decoder gives no positions, so rack files are read here. Thread: any.
public struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var column = 1
    private var depth = 0
    /// Lists and objects nest at most this deep (a rack needs 5); deeper is an error, not a
    /// stack overflow.
    public static let maxDepth = 200

    public init(text: String) {
        bytes = Array(text.utf8)
    }

    /// Parses one value followed only by whitespace and comments.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONNode {
        var parser = JSONParser(text: text)
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }  // UTF-8 BOM
        try parser.skipTrivia()
        let node = try parser.parseValue()
        try parser.skipTrivia()
        if parser.index < parser.bytes.count {
            throw parser.error("unexpected \(parser.describeCurrent()) after the end of the document")
        }
        return node
    }

    private var location: SourceLocation { SourceLocation(line: line, column: column) }

    private func error(_ message: String, at loc: SourceLocation? = nil) -> JSONSyntaxError {
        JSONSyntaxError(location: loc ?? location, message: message)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func describeCurrent() -> String {
        guard let c = current else { return "end of file" }
        if c >= 0x20 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        return "byte 0x\(String(c, radix: 16))"
    }

    private mutating func advance() {
        let c = bytes[index]
        index += 1
        if c == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if c & 0xC0 != 0x80 {  // count characters, not UTF-8 continuation bytes
            column += 1
        }
    }

    private mutating func skipTrivia() throws(JSONSyntaxError) {
        while let c = current {
            switch c {
            case 0x20, 0x09, 0x0A, 0x0D:
                advance()
            case UInt8(ascii: "#"):
                throw error("'#' does not start a comment here: use // (or /* */) for comments")
            case UInt8(ascii: "/"):
                let start = location
                guard index + 1 < bytes.count else { throw error("unexpected '/'") }
                if bytes[index + 1] == UInt8(ascii: "/") {
                    while let d = current, d != 0x0A { advance() }
                } else if bytes[index + 1] == UInt8(ascii: "*") {
                    advance()
                    advance()
                    var closed = false
                    while let d = current {
                        if d == UInt8(ascii: "*"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                            advance()
                            advance()
                            closed = true
                            break
                        }
                        advance()
                    }
                    if !closed { throw error("comment opened here is never closed (missing */)", at: start) }
                } else {
                    throw error("unexpected '/' (comments start with // or /*)")
                }
            default:
                return
            }
        }
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONNode {
        let start = location
        guard let c = current else { throw error("expected a value but the file ended") }
        switch c {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""), UInt8(ascii: "'"): return JSONNode(.string(try parseString()), at: start)
        case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(.number(try parseNumber()), at: start)
        default:
            let word = readIdentifier()
            switch word {
            case "true": return JSONNode(.bool(true), at: start)
            case "false": return JSONNode(.bool(false), at: start)
            case "null": return JSONNode(.null, at: start)
            case "": throw error("expected a value, found \(describeCurrent())")
            default: throw error("expected a value, found '\(word)' (strings need quotes)", at: start)
            }
        }
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maxDepth { throw error("lists and objects nested more than \(Self.maxDepth) deep (a rack needs about 5)") }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONNode {
        let start = location
        try enter()
        defer { depth -= 1 }
        advance()  // {
        var members: [JSONMember] = []
        var keys = Set<String>()  // duplicate check in linear time (huge objects)
        while true {
            try skipTrivia()
            guard let c = current else { throw error("object opened at \(start) is never closed (missing })") }
            if c == UInt8(ascii: "}") {
                advance()
                return JSONNode(.object(members), at: start)
            }
            let keyLocation = location
            let key: String
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                key = try parseString()
            } else {
                key = readIdentifier()
                if key.isEmpty { throw error("expected a key in quotes or '}', found \(describeCurrent())") }
            }
            if !keys.insert(key).inserted {
                throw error("key \"\(key)\" appears twice in this object", at: keyLocation)
            }
            try skipTrivia()
            guard current == UInt8(ascii: ":") else {
                throw error("expected ':' after key \"\(key)\", found \(describeCurrent())")
            }
            advance()
            try skipTrivia()
            let value = try parseValue()
            let valueEnd = location
            members.append(JSONMember(key: key, keyLocation: keyLocation, value: value))
            try skipTrivia()
            if current == UInt8(ascii: ",") {
                advance()
            } else if current != UInt8(ascii: "}") {
                if startsKey {
                    throw error(
                        "missing ',' after the value of \"\(key)\" (the next key starts at \(location))",
                        at: valueEnd)
                }
                throw error("expected ',' or '}' after the value of \"\(key)\", found \(describeCurrent())")
            }
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONNode {
        let start = location
        try enter()
        defer { depth -= 1 }
        advance()  // [
        var elements: [JSONNode] = []
        while true {
            try skipTrivia()
            guard let c = current else { throw error("list opened at \(start) is never closed (missing ])") }
            if c == UInt8(ascii: "]") {
                advance()
                return JSONNode(.array(elements), at: start)
            }
            elements.append(try parseValue())
            let valueEnd = location
            try skipTrivia()
            if current == UInt8(ascii: ",") {
                advance()
            } else if current != UInt8(ascii: "]") {
                if startsValue {
                    throw error(
                        "missing ',' after item \(elements.count) of the list (the next one starts at \(location))",
                        at: valueEnd)
                }
                throw error("expected ',' or ']' in the list, found \(describeCurrent())")
            }
        }
    }

    /// Whether the current byte can begin a key: a missing comma rather than a stray character.
    private var startsKey: Bool {
        guard let c = current else { return false }
        return c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") || isIdentifierByte(c)
    }

    /// Whether the current byte can begin a value.
    private var startsValue: Bool {
        guard let c = current else { return false }
        return startsKey || c == UInt8(ascii: "{") || c == UInt8(ascii: "[") || c == UInt8(ascii: "-")
            || c == UInt8(ascii: "+") || c == UInt8(ascii: ".")
    }

    private func isIdentifierByte(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_") || c == UInt8(ascii: "$")
    }

    private mutating func readIdentifier() -> String {
        let startIndex = index
        while let c = current, isIdentifierByte(c) { advance() }
        return String(decoding: bytes[startIndex..<index], as: UTF8.self)
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = location
        let quote = bytes[index]
        advance()
        var out: [UInt8] = []
        while true {
            guard let c = current else { throw error("string opened at \(start) is never closed", at: start) }
            if c == quote {
                advance()
                return String(decoding: out, as: UTF8.self)
            }
            if c == 0x0A { throw error("line break inside a string (string opened at \(start))") }
            if c == UInt8(ascii: "\\") {
                advance()
                guard let e = current else { throw error("string opened at \(start) is never closed", at: start) }
                let escapeLocation = location
                advance()
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    var scalar = try readHex4()
                    if (0xD800...0xDBFF).contains(scalar), current == UInt8(ascii: "\\"),
                        index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                    {
                        advance()
                        advance()
                        let low = try readHex4()
                        guard (0xDC00...0xDFFF).contains(low) else {
                            throw error("invalid \\u escape: a high surrogate needs a low one (\\udc00…\\udfff)", at: escapeLocation)
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let u = Unicode.Scalar(scalar) else {
                        throw error("invalid \\u escape", at: escapeLocation)
                    }
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                default:
                    throw error("unknown escape '\\\(Character(Unicode.Scalar(e)))' in a string", at: escapeLocation)
                }
            } else {
                out.append(c)
                advance()
            }
        }
    }

    private mutating func readHex4() throws(JSONSyntaxError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let c = current, let d = hexDigit(c) else { throw error("expected 4 hex digits after \\u") }
            v = v * 16 + d
            advance()
        }
        return v
    }

    private func hexDigit(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(c - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(c - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        let start = location
        let startIndex = index
        var negative = false
        if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
            negative = current == UInt8(ascii: "-")
            advance()
        }
        if current == UInt8(ascii: "0"), index + 1 < bytes.count,
            bytes[index + 1] == UInt8(ascii: "x") || bytes[index + 1] == UInt8(ascii: "X")
        {
            advance()
            advance()
            var v: Double = 0
            var digits = 0
            while let c = current, let d = hexDigit(c) {
                v = v * 16 + Double(d)
                digits += 1
                advance()
            }
            if digits == 0 { throw error("expected hex digits after 0x", at: start) }
            if !v.isFinite { throw error("hexadecimal number too large", at: start) }
            return negative ? -v : v
        }
        while let c = current,
            (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: ".") || c == UInt8(ascii: "e")
                || c == UInt8(ascii: "E") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")
        {
            advance()
        }
        var text = String(decoding: bytes[startIndex..<index], as: UTF8.self)
        if text.hasPrefix("+") { text.removeFirst() }
        guard let v = Double(text) else { throw error("'\(text.prefix(40))' is not a number", at: start) }
        if !v.isFinite { throw error("'\(text.prefix(40))' is too large a number", at: start) }
        return v
    }
}
