import StageOSC
import StageSync

/// The band's key the fuzzer's datagrams are checked against.
private let key = try! SyncKey("the fuzzer's long shared secret")

/// libFuzzer entry: the bytes as a datagram on the sync port (liblo's decoder, the
/// signature, the payload), and as a payload signed with the band's key (so the payload's
/// reader is reached past the signature), its message written out and read back. Nothing
/// may crash, hang or trap. Thread: libFuzzer's.
func fuzzSync(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size <= 4096 else { return 0 }
    var bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = bytes.withUnsafeMutableBytes { SyncMessage.open($0, key: key) }
    let text = String(decoding: bytes, as: UTF8.self)
    var signed = OSCPacket(path: SyncMessage.path, arguments: [.string(text), .string(SyncKey.hex(key.signature(Array(text.utf8))))]).encoded()
    if case .success(let m) = signed.withUnsafeMutableBytes({ SyncMessage.open($0, key: key) }) {
        // What was read writes back to a payload that reads the same.
        guard case .success(let again) = SyncMessage.parse(m.payload), again == m else { fatalError("a payload does not read back: \(m)") }
    }
    return 0
}
