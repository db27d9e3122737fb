import CLV2Host
import Foundation
import StageCore

/// One property of a plugin's state (`state:interface`): its key and type as URIs and its
/// value, readable where the type is a plain one.
public struct LV2StateProperty: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        /// atom:Int, atom:Long.
        case integer(Int64)
        /// atom:Float, atom:Double.
        case real(Double)
        case bool(Bool)
        /// atom:String, atom:Path (absolute, or relative to the rack file), atom:URI, atom:URID (its URI).
        case text(String)
        /// atom:Vector of Int, Long, Float, Double or Bool: its child type's URI and elements
        /// (the child type is a URID in memory: kept as a URI it survives another process).
        case vector(childType: String, [Double])
        /// Any other type: the plugin's bytes.
        case bytes([UInt8])
    }
    public var key: String
    public var type: String
    public var value: Value

    public init(key: String, type: String, value: Value) {
        self.key = key
        self.type = type
        self.value = value
    }
}

/// A plugin's state, as the rack file keeps it in a unit's `"state"`.
///
/// The JSON shape (racks/README.md § LV2 plugins): an object whose keys are the properties'
/// URIs, each `{ "type": TYPE-URI, "value": V }` where the type is atom:Int, Long, Float,
/// Double, Bool (a number or true/false), String, Path, URI or URID (a string), atom:Vector
/// of numbers (`"childType": URI, "value": [numbers]`), else
/// `{ "type": TYPE-URI, "base64": "…" }` (the plugin's bytes as they are in memory). A Path
/// that does not start with `/` is relative to the rack file's folder.
/// Thread: control (a value; conversions allocate).
public struct LV2State: Sendable, Equatable {
    public var properties: [LV2StateProperty]

    public init(_ properties: [LV2StateProperty] = []) { self.properties = properties }

    public subscript(key: String) -> LV2StateProperty? { properties.first { $0.key == key } }

    // MARK: JSON

    /// Reads a unit's `"state"` object; throws a message naming the property at fault.
    public init(json node: JSONNode) throws(UnitError) {
        guard let members = node.members else {
            throw UnitError("must be an object of PROPERTY-URI: { \"type\": TYPE-URI, \"value\" or \"base64\": … }")
        }
        var out: [LV2StateProperty] = []
        for m in members {
            guard let fields = m.value.members, let type = m.value["type"]?.value.string else {
                throw UnitError("\(m.key): must be { \"type\": TYPE-URI, \"value\": … } or { \"type\": TYPE-URI, \"base64\": \"…\" }")
            }
            if let b64 = m.value["base64"]?.value {
                guard let text = b64.string, let data = Data(base64Encoded: text) else {
                    throw UnitError("\(m.key): \"base64\" must be a base64 string")
                }
                out.append(LV2StateProperty(key: m.key, type: type, value: .bytes([UInt8](data))))
                continue
            }
            guard let v = m.value["value"]?.value else {
                throw UnitError("\(m.key): needs \"value\" (or \"base64\")")
            }
            if let extra = fields.first(where: { !["type", "value", "base64", "childType"].contains($0.key) }) {
                throw UnitError("\(m.key): unknown key \"\(extra.key)\" (type, value, base64, childType)")
            }
            if type == LV2URI.atomVector {
                guard let child = m.value["childType"]?.value.string, Self.vectorChildSize(child) != nil else {
                    throw UnitError("\(m.key): an atom:Vector needs \"childType\": atom:Int, Long, Float, Double or Bool")
                }
                guard let items = v.elements, let numbers = Optional(items.compactMap(\.number)), numbers.count == items.count
                else { throw UnitError("\(m.key): an atom:Vector's \"value\" is a list of numbers") }
                out.append(LV2StateProperty(key: m.key, type: type, value: .vector(childType: child, numbers)))
                continue
            }
            out.append(LV2StateProperty(key: m.key, type: type, value: try Self.value(v, type: type, key: m.key)))
        }
        properties = out
    }

    private static func value(_ v: JSONNode, type: String, key: String) throws(UnitError) -> LV2StateProperty.Value {
        switch type {
        case LV2URI.atomInt, LV2URI.atomLong:
            guard let n = v.number, let i = Int64(exactly: n) else { throw UnitError("\(key): a whole number for \(type)") }
            if type == LV2URI.atomInt && Int32(exactly: i) == nil { throw UnitError("\(key): \(i) does not fit atom:Int") }
            return .integer(i)
        case LV2URI.atomFloat, LV2URI.atomDouble:
            guard let n = v.number else { throw UnitError("\(key): a number for \(type)") }
            return .real(n)
        case LV2URI.atomBool:
            if let b = v.bool { return .bool(b) }
            throw UnitError("\(key): true or false for atom:Bool")
        case LV2URI.atomString, LV2URI.atomPath, LV2URI.atomURI, LV2URI.atomURID:
            guard let s = v.string else { throw UnitError("\(key): a string for \(type)") }
            return .text(s)
        default:
            throw UnitError("\(key): \(type) is kept as \"base64\", not \"value\"")
        }
    }

    /// The `"state"` object as JSON text, indented by `indent` (one property a line).
    public func json(indent: String = "") -> String {
        if properties.isEmpty { return "{}" }
        let lines = properties.map { p -> String in
            let body: String
            switch p.value {
            case .integer(let i): body = "\"value\": \(i)"
            case .real(let d): body = "\"value\": \(formatNumber(d))"
            case .bool(let b): body = "\"value\": \(b)"
            case .text(let s): body = "\"value\": \(Self.quote(s))"
            case .vector(let child, let items):
                body = "\"childType\": \(Self.quote(child)), \"value\": [\(items.map { formatNumber($0) }.joined(separator: ", "))]"
            case .bytes(let b): body = "\"base64\": \"\(Data(b).base64EncodedString())\""
            }
            return "\(indent)  \(Self.quote(p.key)): { \"type\": \(Self.quote(p.type)), \(body) }"
        }
        return "{\n" + lines.joined(separator: ",\n") + "\n\(indent)}"
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }

    // MARK: C properties

    /// The properties a plugin stored (`stage_lv2_state`), plain types read as values.
    init(_ raw: stage_lv2_state) {
        var out: [LV2StateProperty] = []
        for i in 0..<Int(raw.count) {
            let item = raw.items[i]
            let key = stage_lv2_unmap(item.key).map { String(cString: $0) } ?? "urid:\(item.key)"
            let type = stage_lv2_unmap(item.type).map { String(cString: $0) } ?? "urid:\(item.type)"
            let bytes = [UInt8](UnsafeBufferPointer(start: item.value, count: Int(item.size)))
            out.append(LV2StateProperty(key: key, type: type, value: Self.decode(bytes, type: type)))
        }
        properties = out
    }

    private static func decode(_ b: [UInt8], type: String) -> LV2StateProperty.Value {
        func load<T>(_: T.Type) -> T { b.withUnsafeBytes { $0.loadUnaligned(as: T.self) } }
        switch (type, b.count) {
        case (LV2URI.atomInt, 4): return .integer(Int64(load(Int32.self)))
        case (LV2URI.atomLong, 8): return .integer(load(Int64.self))
        case (LV2URI.atomFloat, 4): return .real(Double(load(Float.self)))
        case (LV2URI.atomDouble, 8): return .real(load(Double.self))
        case (LV2URI.atomBool, 4): return .bool(load(Int32.self) != 0)
        case (LV2URI.atomURID, 4):
            return stage_lv2_unmap(load(UInt32.self)).map { .text(String(cString: $0)) } ?? .bytes(b)
        case (LV2URI.atomVector, 8...):
            let size = Int(b.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
            let childURID = b.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self) }
            guard let c = stage_lv2_unmap(childURID) else { return .bytes(b) }
            let child = String(cString: c)
            guard Self.vectorChildSize(child) == size, (b.count - 8) % size == 0 else { return .bytes(b) }
            let items = stride(from: 8, to: b.count, by: size).map { at -> Double in
                b.withUnsafeBytes { raw in
                    switch child {
                    case LV2URI.atomFloat: return Double(raw.loadUnaligned(fromByteOffset: at, as: Float.self))
                    case LV2URI.atomDouble: return raw.loadUnaligned(fromByteOffset: at, as: Double.self)
                    case LV2URI.atomLong: return Double(raw.loadUnaligned(fromByteOffset: at, as: Int64.self))
                    default: return Double(raw.loadUnaligned(fromByteOffset: at, as: Int32.self))
                    }
                }
            }
            return .vector(childType: child, items)
        case (LV2URI.atomString, _), (LV2URI.atomPath, _), (LV2URI.atomURI, _):
            let text = b.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
            return .text(String(decoding: text, as: UTF8.self))
        default: return .bytes(b)
        }
    }

    /// The properties as the plugin reads them back, paths made absolute from `directory`.
    /// The caller frees `raw` with `stage_lv2_state_clear`.
    func fill(_ raw: inout stage_lv2_state, directory: String) throws(UnitError) {
        for p in properties {
            var bytes: [UInt8]
            switch p.value {
            case .integer(let i):
                bytes = p.type == LV2URI.atomLong ? Self.bytes(of: i) : Self.bytes(of: Int32(truncatingIfNeeded: i))
            case .real(let d): bytes = p.type == LV2URI.atomDouble ? Self.bytes(of: d) : Self.bytes(of: Float(d))
            case .bool(let b): bytes = Self.bytes(of: Int32(b ? 1 : 0))
            case .text(let s):
                if p.type == LV2URI.atomURID {
                    bytes = Self.bytes(of: stage_lv2_map(s))
                } else {
                    let text = p.type == LV2URI.atomPath && !s.hasPrefix("/") && !directory.isEmpty ? directory + "/" + s : s
                    bytes = Array(text.utf8) + [0]
                }
            case .vector(let child, let items):
                bytes = Self.bytes(of: UInt32(Self.vectorChildSize(child) ?? 4)) + Self.bytes(of: stage_lv2_map(child))
                for x in items {
                    switch child {
                    case LV2URI.atomFloat: bytes += Self.bytes(of: Float(x))
                    case LV2URI.atomDouble: bytes += Self.bytes(of: x)
                    case LV2URI.atomLong: bytes += Self.bytes(of: Int64(x))
                    default: bytes += Self.bytes(of: Int32(x))
                    }
                }
            case .bytes(let b): bytes = b
            }
            let ok = bytes.withUnsafeBytes {
                stage_lv2_state_set(
                    &raw, stage_lv2_map(p.key), stage_lv2_map(p.type), UInt32(LV2_STATE_IS_POD.rawValue | LV2_STATE_IS_PORTABLE.rawValue),
                    $0.baseAddress, UInt32($0.count))
            }
            if ok == 0 { throw UnitError("lv2: out of memory restoring state") }
        }
    }

    /// Bytes of one element of an atom:Vector of `child`, nil for a child type not read.
    static func vectorChildSize(_ child: String) -> Int? {
        switch child {
        case LV2URI.atomInt, LV2URI.atomFloat, LV2URI.atomBool: return 4
        case LV2URI.atomLong, LV2URI.atomDouble: return 8
        default: return nil
        }
    }

    private static func bytes<T>(of value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
}

/// What an `lv2` unit restores when it is prepared: the rack's `"preset"` (its URI), then
/// its `"state"`; Path values relative to `directory` (the rack file's folder).
/// Thread: control (a value).
public struct LV2StartingState: Sendable, Equatable {
    public var presetURI: String?
    public var state: LV2State?
    public var directory: String

    public init(presetURI: String? = nil, state: LV2State? = nil, directory: String = "") {
        self.presetURI = presetURI
        self.state = state
        self.directory = directory
    }
}

/// `LV2_State_Status` in words.
enum LV2StateStatus {
    static func describe(_ status: Int32) -> String {
        switch UInt32(bitPattern: status) {
        case LV2_STATE_ERR_BAD_TYPE.rawValue: return "a value of a type it does not take"
        case LV2_STATE_ERR_BAD_FLAGS.rawValue: return "bad flags"
        case LV2_STATE_ERR_NO_FEATURE.rawValue: return "a feature missing"
        case LV2_STATE_ERR_NO_PROPERTY.rawValue: return "a property missing or a file it could not load"
        case LV2_STATE_ERR_NO_SPACE.rawValue: return "no space"
        default: return "status \(status)"
        }
    }
}
