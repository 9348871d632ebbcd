import FoundationEssentials
import Glibc

/// Recent texts by their UTF-8 bytes. A response, or a cache, names a few dozen vendors over
/// and over: a hit costs one comparison instead of building (and checking) a String.
struct RecentTexts {
    private var slots = [(bytes: [UInt8], text: String)?](repeating: nil, count: 64)

    mutating func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let slot = (bytes.count &* 31 &+ Int(bytes.first ?? 0) &* 7 &+ Int(bytes.last ?? 0)) & 63
        if let entry = slots[slot], entry.bytes.count == bytes.count,
           entry.bytes.withUnsafeBufferPointer({ bytes.isEmpty || memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
            return entry.text
        }
        let text = String(decoding: bytes, as: UTF8.self)
        slots[slot] = (Array(bytes), text)
        return text
    }
}
