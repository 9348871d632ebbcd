/// The stable id of an upstream transaction, which carries none of its own.
///
/// A transaction is known by its source, date and vendor, plus an ordinal that tells apart
/// repeats of the same date and vendor in one response. The id is a 64-bit FNV-1a hash of
/// those, in hex: the same inputs give the same id in every process and on every re-sync.
public enum TransactionID {
    public static func make(source: String, date: String, vendor: String, ordinal: Int) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01B3
            }
        }
        mix(source.utf8); mix(CollectionOfOne(0x1F))
        mix(date.utf8); mix(CollectionOfOne(0x1F))
        mix(vendor.utf8); mix(CollectionOfOne(0x1F))
        mix(String(ordinal).utf8)
        return hex(hash)
    }

    /// The 16-digit lowercase hex form of a hash: the stored id.
    public static func hex(_ hash: UInt64) -> String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
