/// Parses connection chains: `"mic -> pitch -> mix:2"`. `unit:N` names input bus N
/// (1-based); a bare name is bus 1. Each link reads the source's output bus 1.
public enum ConnectionSyntax {
    public struct Problem: Error, Equatable {
        public var location: SourceLocation
        public var message: String
    }

    /// `location` is where the string literal starts (its opening quote); element
    /// locations point at each unit name inside it.
    public static func parse(
        _ text: String, at location: SourceLocation = SourceLocation(line: 1, column: 0)
    ) -> Result<[ConnectionDescription], Problem> {
        // Column of character i of the text: after the opening quote.
        func loc(_ offset: Int) -> SourceLocation {
            SourceLocation(line: location.line, column: location.column + 1 + offset)
        }
        var endpoints: [Endpoint] = []
        let chars = Array(text)
        var pieces: [(String, Int)] = []  // trimmed text and its offset
        var start = 0
        var i = 0
        while i <= chars.count {
            let atArrow = i + 1 < chars.count && chars[i] == "-" && chars[i + 1] == ">"
            if i == chars.count || atArrow {
                var a = start
                var b = i
                while a < b && chars[a] == " " { a += 1 }
                while b > a && chars[b - 1] == " " { b -= 1 }
                pieces.append((String(chars[a..<b]), a))
                start = i + 2
                i += 2
            } else {
                i += 1
            }
        }
        if pieces.count < 2 {
            return .failure(Problem(location: loc(0), message: "\"\(text)\" is not a chain like \"a -> b\""))
        }
        for (piece, offset) in pieces {
            if piece.isEmpty {
                return .failure(Problem(location: loc(offset), message: "a unit name is missing around '->'"))
            }
            let parts = piece.split(separator: ":", omittingEmptySubsequences: false)
            let name = String(parts[0])
            if !RackReader.isValidUnitID(name) {
                return .failure(Problem(location: loc(offset), message: "\"\(piece)\" is not a unit name or unit:bus"))
            }
            var bus = 1
            if parts.count == 2 {
                guard let n = Int(parts[1]), n >= 1 else {
                    return .failure(
                        Problem(location: loc(offset + name.count + 1), message: "bus numbers start at 1, found \"\(parts[1])\""))
                }
                bus = n
            } else if parts.count > 2 {
                return .failure(Problem(location: loc(offset), message: "\"\(piece)\" has more than one ':'"))
            }
            endpoints.append(Endpoint(unit: name, bus: bus, location: loc(offset)))
        }
        var links: [ConnectionDescription] = []
        for k in 0..<(endpoints.count - 1) {
            var from = endpoints[k]
            from.bus = 1
            links.append(ConnectionDescription(from: from, to: endpoints[k + 1]))
        }
        return .success(links)
    }
}
