/// The string values of JSON text, found by a scan of its bytes (the text is the cache's own
/// canonical JSON; anything malformed ends the scan with what was found).
enum JSONStrings {
    /// The values joined by spaces, or nil when there is none (`group_concat` of none).
    static func values(_ json: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(json.count)
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
            if found { out.append(UInt8(ascii: " ")) }
            found = true
            if escaped {
                // Past the end where a malformed escape ends the scan.
                index = max(index, unescape(json, from: start, into: &out))
            } else {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: json[start..<min(end, json.count)]))
            }
        }
        return found ? out : nil
    }

    /// Appends the string whose first byte is at `from`, unescaped; returns the index after its closing quote.
    private static func unescape(_ json: UnsafeBufferPointer<UInt8>, from: Int, into out: inout [UInt8]) -> Int {
        var index = from
        while index < json.count {
            let byte = json[index]
            if byte == UInt8(ascii: "\"") { return index + 1 }
            guard byte == UInt8(ascii: "\\"), index + 1 < json.count else { out.append(byte); index += 1; continue }
            let escaped = json[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "u"):
                guard var scalar = hex(json, index) else { return json.count }
                index += 4
                // A surrogate pair: \ud83d\ude00.
                if (0xD800..<0xDC00).contains(scalar), index + 5 < json.count, json[index] == UInt8(ascii: "\\"),
                   json[index + 1] == UInt8(ascii: "u"), let low = hex(json, index + 2), (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                out.append(contentsOf: Unicode.Scalar(scalar).map { Array(String($0).utf8) } ?? [UInt8(ascii: " ")])
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            default:
                out.append(escaped)
            }
        }
        return index
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
