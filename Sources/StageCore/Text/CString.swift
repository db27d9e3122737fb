extension String {
    /// The text of a C character buffer filled by a C function (`gethostname`, `inet_ntop`,
    /// a header copied out of libwebsockets): the bytes up to the first NUL, or all of them,
    /// read as UTF-8 (invalid bytes become U+FFFD). Any thread (allocates).
    public init(cBuffer buffer: [CChar]) {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        self = String(decoding: bytes, as: UTF8.self)
    }
}
