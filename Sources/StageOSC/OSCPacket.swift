import CLiblo
import CLoadOnUse
import StageCore

/// One OSC argument the remote understands.
public enum OSCArgument: Sendable, Equatable {
    case float(Float)
    case int(Int32)
    case string(String)
    case bool(Bool)
    case other(Character)

    /// A number from `f`, `i`, `d`, `h`, `T`/`F`, or nil.
    public var number: Float? {
        switch self {
        case .float(let f): return f
        case .int(let i): return Float(i)
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }
}

/// An OSC message decoded or encoded by liblo (`lo_message_deserialise`,
/// `lo_message_serialise`): the only place the remote touches liblo's messages.
/// liblo is opened on first use (CLoadOnUse), not at start-up: the OSC server and sync check
/// `libraryFailure` where they start, so a missing liblo is one clear error there.
/// Thread: the OSC server's (any single thread per value).
public struct OSCPacket: Sendable, Equatable {
    /// nil once liblo is open, else why not (opened on first use, once). Thread: any.
    public static let libraryFailure: String? = libraryLoadFailure { stage_load_liblo($0, $1) }

    public var path: String
    public var arguments: [OSCArgument]

    public init(path: String, arguments: [OSCArgument] = []) {
        self.path = path
        self.arguments = arguments
    }

    /// Decodes one datagram; the error says why it is not an OSC message.
    public static func decode(_ bytes: UnsafeMutableRawBufferPointer) -> Result<OSCPacket, OSCDecodeError> {
        if let failure = libraryFailure { return .failure(OSCDecodeError(failure)) }
        guard let base = bytes.baseAddress, bytes.count >= 4 else { return .failure(OSCDecodeError("not an OSC message (too short)")) }
        if bytes.count >= 8, bytes.starts(with: Array("#bundle".utf8)) {
            return .failure(OSCDecodeError("OSC bundles are not taken: send messages one by one"))
        }
        guard let path = lo_get_path(base, bytes.count) else { return .failure(OSCDecodeError("not an OSC message (no address)")) }
        var result: Int32 = 0
        guard let m = lo_message_deserialise(base, bytes.count, &result) else {
            return .failure(OSCDecodeError("not an OSC message (liblo error \(result))"))
        }
        defer { lo_message_free(m) }
        let address = String(cString: path)
        let count = Int(lo_message_get_argc(m))
        guard count <= 64 else { return .failure(OSCDecodeError("too many arguments (\(count))")) }
        var arguments: [OSCArgument] = []
        if count > 0, let types = lo_message_get_types(m), let argv = lo_message_get_argv(m) {
            for i in 0..<count {
                let type = UInt8(bitPattern: types[i])
                if type == UInt8(ascii: "T") || type == UInt8(ascii: "F") {  // no data: argv may be NULL
                    arguments.append(.bool(type == UInt8(ascii: "T")))
                    continue
                }
                guard let a = argv[i] else { continue }
                switch type {
                case UInt8(ascii: "f"): arguments.append(.float(stage_lo_float(a)))
                case UInt8(ascii: "i"): arguments.append(.int(stage_lo_int32(a)))
                case UInt8(ascii: "d"): arguments.append(.float(Float(stage_lo_double(a))))
                case UInt8(ascii: "h"): arguments.append(.int(Int32(clamping: stage_lo_int64(a))))
                case UInt8(ascii: "s"), UInt8(ascii: "S"): arguments.append(.string(String(cString: stage_lo_string(a))))
                case let t: arguments.append(.other(Character(Unicode.Scalar(t))))
                }
            }
        }
        return .success(OSCPacket(path: address, arguments: arguments))
    }

    /// The message as OSC bytes (liblo's encoding); empty without liblo (`libraryFailure`).
    public func encoded() -> [UInt8] {
        guard Self.libraryFailure == nil, let m = lo_message_new() else { return [] }
        defer { lo_message_free(m) }
        for a in arguments {
            switch a {
            case .float(let f): lo_message_add_float(m, f)
            case .int(let i): lo_message_add_int32(m, i)
            case .string(let s): lo_message_add_string(m, s)
            case .bool(let b): if b { lo_message_add_true(m) } else { lo_message_add_false(m) }
            case .other: break
            }
        }
        let size = lo_message_length(m, path)
        guard size > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: size)
        var written = size
        _ = out.withUnsafeMutableBytes { lo_message_serialise(m, path, $0.baseAddress, &written) }
        return Array(out.prefix(written))
    }
}

public struct OSCDecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
