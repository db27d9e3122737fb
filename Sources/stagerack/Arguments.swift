import StageCore

/// A bad command line: the message says what to fix.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A parsed command line for one command: positional arguments and `--name value` options.
/// Keeps the program free of outside argument parsers. Thread: main.
struct Arguments {
    var positional: [String] = []
    var options: [String: String] = [:]
    var flags: Set<String> = []

    /// Parses `args` knowing which options take a value and which are flags.
    init(_ args: [String], valueOptions: [String], flagOptions: [String]) throws {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "--" {
                positional += args[(i + 1)...]
                break
            }
            if a.hasPrefix("--") || (a.hasPrefix("-") && a.count == 2 && Double(a) == nil) {
                var name = a
                var inlineValue: String?
                if let eq = a.firstIndex(of: "=") {
                    name = String(a[..<eq])
                    inlineValue = String(a[a.index(after: eq)...])
                }
                if valueOptions.contains(name) {
                    if let v = inlineValue {
                        options[name] = v
                    } else {
                        guard i + 1 < args.count else { throw UsageError(message: "\(name) needs a value") }
                        options[name] = args[i + 1]
                        i += 1
                    }
                } else if flagOptions.contains(name) {
                    flags.insert(name)
                } else {
                    let hint = Suggest.hint(for: name, in: valueOptions + flagOptions)
                    throw UsageError(message: "unknown option \(name)\(hint)")
                }
            } else {
                positional.append(a)
            }
            i += 1
        }
    }

    func double(_ name: String, range: ClosedRange<Double>) throws -> Double? {
        guard let s = options[name] else { return nil }
        guard let v = Double(s), range.contains(v) else {
            throw UsageError(message: "\(name) takes a number \(formatNumber(range.lowerBound))…\(formatNumber(range.upperBound)), not \"\(s)\"")
        }
        return v
    }

    func int(_ name: String, range: ClosedRange<Int>) throws -> Int? {
        guard let s = options[name] else { return nil }
        guard let v = Int(s), range.contains(v) else {
            throw UsageError(message: "\(name) takes a whole number \(range.lowerBound)…\(range.upperBound), not \"\(s)\"")
        }
        return v
    }
}
