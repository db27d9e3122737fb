/// A place in a text file: 1-based line and column (columns count characters).
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
    public static func < (a: SourceLocation, b: SourceLocation) -> Bool {
        (a.line, a.column) < (b.line, b.column)
    }
    public var description: String { "\(line):\(column)" }
}

/// A JSON value with the location where it starts, as read from a rack file.
public struct JSONNode: Sendable, Equatable {
    public var value: JSONValue
    public var location: SourceLocation
    public init(_ value: JSONValue, at location: SourceLocation) {
        self.value = value
        self.location = location
    }
}

/// One `"key": value` of an object, with the key's own location.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var keyLocation: SourceLocation
    public var value: JSONNode
}

/// The JSON data model (members keep file order).
public indirect enum JSONValue: Sendable, Equatable {
    case object([JSONMember])
    case array([JSONNode])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    /// A short name of the kind of value, for messages ("a number", "an object").
    public var kindName: String {
        switch self {
        case .object: return "an object"
        case .array: return "a list"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "true/false"
        case .null: return "null"
        }
    }
}

extension JSONNode {
    public var members: [JSONMember]? {
        if case .object(let m) = value { return m }
        return nil
    }
    public var elements: [JSONNode]? {
        if case .array(let a) = value { return a }
        return nil
    }
    public var string: String? {
        if case .string(let s) = value { return s }
        return nil
    }
    public var number: Double? {
        if case .number(let n) = value { return n }
        return nil
    }
    public var bool: Bool? {
        if case .bool(let b) = value { return b }
        return nil
    }
    /// The member named `key`, if this is an object that has one.
    public subscript(key: String) -> JSONMember? {
        members?.first { $0.key == key }
    }
}
