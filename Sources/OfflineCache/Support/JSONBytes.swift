/// JSON written straight into a byte buffer, for output that streams a million rows: the same
/// text `JSONValue` writes, with no String built per value (building them was three quarters of
/// a full `list --json`).
package enum JSONBytes {
    package static func literal(_ text: StaticString, into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A string from its UTF-8 bytes, quoted and escaped as `JSONValue.quote` does.
    package static func string(_ utf8: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var plainFrom = 0
        for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainFrom..<index]))
            plainFrom = index + 1
            switch byte {
            case UInt8(ascii: "\""): literal("\\\"", into: &out)
            case UInt8(ascii: "\\"): literal("\\\\", into: &out)
            case 0x0A: literal("\\n", into: &out)
            case 0x0D: literal("\\r", into: &out)
            case 0x09: literal("\\t", into: &out)
            default:
                literal("\\u00", into: &out)
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0xF))
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainFrom...]))
        out.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    package static func string(_ text: String, into out: inout [UInt8]) {
        var text = text
        text.withUTF8 { string($0, into: &out) }
    }

    package static func int(_ value: Int, into out: inout [UInt8]) {
        out.append(contentsOf: String(value).utf8)
    }

    package static func double(_ value: Double, into out: inout [UInt8]) {
        out.append(contentsOf: JSONValue.number(value).utf8)
    }

    package static func bool(_ value: Bool, into out: inout [UInt8]) {
        value ? literal("true", into: &out) : literal("false", into: &out)
    }
}
