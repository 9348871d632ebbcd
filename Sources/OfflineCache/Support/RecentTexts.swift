/// Recent texts by their UTF-8 bytes. A response, or a cache, names a few dozen or a few
/// thousand vendors over and over: a hit costs a hash of the bytes and one comparison instead of
/// building (and checking) a String.
///
/// The slot comes from every byte (`FNV1a`): vendors alike in length and ends ("Vendor 0001 Co",
/// "Vendor 0002 Co", …) would otherwise share one slot and miss every time. Only the String is
/// kept, and compared in its own storage: a miss allocates nothing for a text of up to 15 bytes.
struct RecentTexts {
    private static let slotBits = 12
    private var slots = [String?](repeating: nil, count: 1 << slotBits)

    mutating func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let slot = Int(truncatingIfNeeded: FNV1a.slotHash(bytes)) & (slots.count - 1)
        if var text = slots[slot], text.hasUTF8(bytes) { return text }
        let text = String(decoding: bytes, as: UTF8.self)
        slots[slot] = text
        return text
    }
}
