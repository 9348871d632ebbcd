/// The string values of JSON text, found by a scan of its bytes (the text is the cache's own
/// canonical JSON; anything malformed ends the scan with what was found).
enum JSONStrings {
    /// Writes the values, joined by spaces, to `out`, which has room for `json.count` bytes: a
    /// value is never longer than its quoted form (an escape is at least as long as what it
    /// stands for), and its quotes make room for the space before it. Returns the bytes written,
    /// or nil when there is no value (`group_concat` of none).
    static func write(_ json: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> Int? {
        var written = 0
        var found = false
        var index = 0
        while index < json.count {
            guard json[index] == UInt8(ascii: "\"") else { index += 1; continue }
            // The string's end is found first: a key (a string followed by ':') is passed over
            // without a byte copied, and a value without escapes is copied whole.
            let start = index + 1
            var end = start, escaped = false
            while end < json.count, json[end] != UInt8(ascii: "\"") {
                if json[end] == UInt8(ascii: "\\") { escaped = true; end += 1 }
                end += 1
            }
            index = min(end + 1, json.count)
            var next = index
            while next < json.count, [0x20, 0x09, 0x0A, 0x0D].contains(json[next]) { next += 1 }
            if next < json.count, json[next] == UInt8(ascii: ":") { continue }
            if found { out[written] = UInt8(ascii: " "); written += 1 }
            found = true
            if escaped {
                // Past the end where a malformed escape ends the scan.
                let (after, count) = unescape(json, from: start, to: out + written)
                index = max(index, after)
                written += count
            } else {
                let count = min(end, json.count) - start
                if count > 0 { (out + written).update(from: json.baseAddress! + start, count: count) }
                written += count
            }
        }
        assert(written <= json.count, "cache_strings wrote past its buffer")
        return found ? written : nil
    }

    /// Writes the string whose first byte is at `from`, unescaped, to `out`; returns the index
    /// after its closing quote and the bytes written.
    private static func unescape(_ json: UnsafeBufferPointer<UInt8>, from: Int, to out: UnsafeMutablePointer<UInt8>) -> (Int, Int) {
        var index = from, written = 0
        func append(_ byte: UInt8) { out[written] = byte; written += 1 }
        while index < json.count {
            let byte = json[index]
            if byte == UInt8(ascii: "\"") { return (index + 1, written) }
            guard byte == UInt8(ascii: "\\"), index + 1 < json.count else { append(byte); index += 1; continue }
            let escaped = json[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "u"):
                guard var scalar = hex(json, index) else { return (json.count, written) }
                index += 4
                // A surrogate pair: \ud83d\ude00.
                if (0xD800..<0xDC00).contains(scalar), index + 5 < json.count, json[index] == UInt8(ascii: "\\"),
                   json[index + 1] == UInt8(ascii: "u"), let low = hex(json, index + 2), (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                if let scalar = Unicode.Scalar(scalar) {
                    for unit in UTF8.encode(scalar)! { append(unit) }
                } else {
                    append(UInt8(ascii: " "))
                }
            case UInt8(ascii: "b"): append(0x08)
            case UInt8(ascii: "f"): append(0x0C)
            case UInt8(ascii: "n"): append(0x0A)
            case UInt8(ascii: "r"): append(0x0D)
            case UInt8(ascii: "t"): append(0x09)
            default:
                append(escaped)
            }
        }
        return (index, written)
    }

    private static func hex(_ json: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt32? {
        guard at + 4 <= json.count else { return nil }
        var value: UInt32 = 0
        for byte in json[at..<(at + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
