import CCrypto
import CLoadOnUse
import StageCore

/// Why sync cannot start or a message cannot be signed. Thread: any (a value).
public struct SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The band's shared secret (`syncKey` in every box's config) and the HMAC-SHA256 of a
/// message under it, through OpenSSL's libcrypto (`HMAC`, `CRYPTO_memcmp`): nothing on the
/// sync port is trusted without it. Thread: any (a value; libcrypto's one-shot HMAC keeps
/// no shared state). libcrypto is opened by the first key made (CLoadOnUse), not at start-up.
public struct SyncKey: Sendable {
    /// nil once libcrypto is open, else why not (opened on first use, once).
    static let libraryFailure: String? = libraryLoadFailure { stage_load_crypto($0, $1) }

    /// The shortest key taken: 16 characters (a passphrase a band can type into each box).
    public static let minimumLength = 16
    /// The signature's length in bytes (SHA-256).
    public static let signatureLength = 32
    let bytes: [UInt8]

    /// The key as written in the config; a missing or short one is refused with what to do.
    public init(_ text: String?) throws(SyncError) {
        guard let text, !text.isEmpty else {
            throw SyncError("sync needs syncKey: the band's shared secret, the same in every box's config (at least \(Self.minimumLength) characters)")
        }
        guard text.utf8.count >= Self.minimumLength else {
            throw SyncError("syncKey is too short (\(text.utf8.count) characters): at least \(Self.minimumLength), the same in every box's config")
        }
        if let failure = Self.libraryFailure { throw SyncError(failure) }
        bytes = Array(text.utf8)
    }

    /// HMAC-SHA256 of `message` under this key.
    public func signature(_ message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        bytes.withUnsafeBytes { k in
            message.withUnsafeBufferPointer { m in
                _ = HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress, m.count, &out, &length)
            }
        }
        return Array(out.prefix(Int(length)))
    }

    /// Whether `signature` is this key's for `message` (compared in constant time).
    public func verifies(_ message: [UInt8], signature: [UInt8]) -> Bool {
        guard signature.count == Self.signatureLength else { return false }
        let expected = self.signature(message)
        return expected.withUnsafeBytes { e in signature.withUnsafeBytes { s in CRYPTO_memcmp(e.baseAddress, s.baseAddress, e.count) == 0 } }
    }

    /// Lower-case hex, as the messages carry signatures.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of lower- or upper-case hex; nil if it is not hex.
    public static func unhex(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        var i = 0
        while i < chars.count {
            guard let h = value(chars[i]), let l = value(chars[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }

    /// A random session id for a leader's run (RAND_bytes), as 16 hex digits.
    public static func randomSessionID() -> String {
        var b = [UInt8](repeating: 0, count: 8)
        if Self.libraryFailure != nil || RAND_bytes(&b, Int32(b.count)) != 1 {
            var g = SystemRandomNumberGenerator()
            for i in b.indices { b[i] = UInt8.random(in: 0...255, using: &g) }
        }
        return hex(b)
    }
}
