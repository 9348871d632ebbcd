/// The stable id of an upstream transaction, which carries none of its own.
///
/// A transaction is known by its source, date and vendor, plus an ordinal that tells apart
/// repeats of the same date and vendor in one response. The id is a 64-bit FNV-1a hash of
/// those, in hex: the same inputs give the same id in every process and on every re-sync.
package struct TransactionID {
    /// The hash after the source's part, mixed once for all of a source's transactions.
    private let seed: UInt64

    package init(source: String) {
        var hash = FNV1a()
        var source = source
        source.withUTF8 { hash.mix($0) }
        hash.mix(Self.separator)
        seed = hash.value
    }

    /// The id's hash; `hex` gives its stored form.
    package func hash(date: TransactionDate, vendor: String, ordinal: Int) -> UInt64 {
        var vendor = vendor
        return date.withISOBytes { iso in vendor.withUTF8 { hash(iso: iso, vendor: $0, ordinal: ordinal) } }
    }

    /// The same, from the date's stored form and the vendor's bytes as a load has them at hand.
    package func hash(iso: UnsafeBufferPointer<UInt8>, vendor: UnsafeBufferPointer<UInt8>, ordinal: Int) -> UInt64 {
        var hash = FNV1a(value: seed)
        hash.mix(iso)
        hash.mix(Self.separator)
        hash.mix(vendor)
        hash.mix(Self.separator)
        // The ordinal's decimal digits, most significant first, with no String built.
        var divisor = 1
        while divisor <= ordinal / 10 { divisor *= 10 }
        while divisor > 0 {
            hash.mix(UInt8(ascii: "0") + UInt8(ordinal / divisor % 10))
            divisor /= 10
        }
        return hash.value
    }

    package static func make(source: String, date: TransactionDate, vendor: String, ordinal: Int) -> String {
        hex(TransactionID(source: source).hash(date: date, vendor: vendor, ordinal: ordinal))
    }

    /// The 16-digit lowercase hex form of a hash: the stored id.
    package static func hex(_ hash: UInt64) -> String {
        withHexBytes(hash) { String(decoding: $0, as: UTF8.self) }
    }

    /// The stored form's 16 bytes, built on the stack (for binding).
    package static func withHexBytes<R>(_ hash: UInt64, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: hexCount) { buffer in
            writeHex(hash, into: buffer.baseAddress!)
            return try body(UnsafeBufferPointer(buffer))
        }
    }

    /// The length of the stored form.
    package static let hexCount = 16

    /// Writes the stored form's 16 bytes at `buffer`.
    package static func writeHex(_ hash: UInt64, into buffer: UnsafeMutablePointer<UInt8>) {
        for index in 0..<hexCount {
            let nibble = UInt8(truncatingIfNeeded: hash >> UInt64(60 - 4 * index)) & 0xF
            buffer[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
        }
    }

    /// The unit separator between fields, so ("ab", "c") and ("a", "bc") differ.
    private static let separator: UInt8 = 0x1F
}
