
/// The 64-bit FNV-1a hash of bytes: stable across processes and releases (a transaction's id
/// is made with it), and cheap on the short texts it hashes (dates, vendors).
package struct FNV1a {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package init(value: UInt64) { self.value = value }

    package mutating func mix(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    package mutating func mix(_ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes { mix(byte) }
    }

    /// The hash of `bytes` for a table's slots: FNV's low bits mix poorly on short keys, so the
    /// high half is folded into them.
    package static func slotHash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash = FNV1a()
        hash.mix(bytes)
        return hash.value ^ (hash.value >> 29)
    }
}

extension String {
    /// Whether this text's UTF-8 is exactly `bytes` (as SQLite compares text, not Swift's
    /// canonical equivalence).
    mutating func hasUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        withUTF8 { kept in
            kept.count == bytes.count && (bytes.isEmpty || Memory.compare(kept.baseAddress!, bytes.baseAddress!, count: bytes.count) == 0)
        }
    }
}
