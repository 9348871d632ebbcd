/// Numbers distinct texts by their UTF-8 bytes, in the order first seen: 0, 1, 2, …
///
/// Bytes, as SQLite compares text: a String's own equality is Unicode-canonical, and would take
/// "é" and "e\u{301}" for one text. An open-addressed table hashed with `FNV1a`: a million rows'
/// vendors are numbered at a fraction of what a Dictionary keyed by a byte-comparing wrapper
/// costs (SipHash and a generic lookup per row).
struct DistinctTexts {
    /// The texts, by number.
    private(set) var texts: [String] = []
    /// Each slot's text number plus one; 0 is empty. A power of two, at most half full.
    private var slots = [UInt32](repeating: 0, count: 64)
    private var hashes: [UInt64] = []

    /// The number of `text`, given it if it is new.
    mutating func number(_ text: String) -> UInt32 {
        var text = text
        return text.withUTF8 { bytes in
            let hash = FNV1a.slotHash(bytes)
            var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
            while slots[slot] != 0 {
                let number = Int(slots[slot] - 1)
                if hashes[number] == hash && texts[number].hasUTF8(bytes) { return UInt32(number) }
                slot = (slot + 1) & (slots.count - 1)
            }
            let number = UInt32(texts.count)
            texts.append(String(decoding: bytes, as: UTF8.self))
            hashes.append(hash)
            slots[slot] = number + 1
            if texts.count * 2 > slots.count { grow() }
            return number
        }
    }

    private mutating func grow() {
        slots = [UInt32](repeating: 0, count: slots.count * 2)
        for (number, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = UInt32(number + 1)
        }
    }
}
