import FoundationEssentials

/// Number and string tokens, checked strictly, read in place.
extension JSONCursor {
    struct NumberToken {
        var integer: Int?
        var double: Double?
    }

    /// A number, checked against JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    mutating func readNumberToken() throws(Failure) -> NumberToken {
        skipWhitespace()
        let start = position
        let isInteger = try skipNumberToken()
        let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
        if isInteger, slice.count <= 18 {
            // Up to 18 digits cannot overflow: exact, and no allocation.
            var value = 0
            var negative = false
            for byte in slice {
                if byte == UInt8(ascii: "-") { negative = true } else { value = value * 10 + Int(byte - 0x30) }
            }
            value = negative ? -value : value
            return NumberToken(integer: value, double: Double(value))
        }
        if !isInteger, let value = Self.exactDouble(slice) { return NumberToken(integer: nil, double: value) }
        // Number tokens are short: a String of up to 15 bytes is built without allocating.
        let text = String(decoding: slice, as: UTF8.self)
        return NumberToken(integer: isInteger ? Int(text) : nil, double: Double(text))
    }

    /// Passes over a number checked against JSON's grammar (`01`, `1.`, `.5`, `1e`, `+1` and
    /// `1.2.3` are refused); true when it has no fraction and no exponent.
    @discardableResult
    mutating func skipNumberToken() throws(Failure) -> Bool {
        skipWhitespace()
        var isInteger = true
        func digit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= 0x30 && bytes[i] <= 0x39 }
        if position < bytes.count && bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard digit(position) else { throw Self.syntaxError }
        if bytes[position] == 0x30 {
            position += 1
        } else {
            while digit(position) { position += 1 }
        }
        if position < bytes.count && bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard digit(position) else { throw Self.syntaxError }
            while digit(position) { position += 1 }
        }
        if position < bytes.count && (bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E")) {
            isInteger = false
            position += 1
            if position < bytes.count && (bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")) { position += 1 }
            guard digit(position) else { throw Self.syntaxError }
            while digit(position) { position += 1 }
        }
        // A number ends where a structural character or whitespace begins: `1x`, `01`, `1.2.3`
        // end early here, and what follows them is not a `,`, `]` or `}`.
        return isInteger
    }

    /// Powers of ten that a Double holds exactly.
    private static let exactPowersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

    /// A checked number token with at most 15 significant digits and a small exponent, as
    /// strtod reads it: the digits and the power of ten are both exact Doubles, so one
    /// multiplication or division rounds once, correctly (Clinger's fast path). Nil otherwise.
    static func exactDouble(_ token: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        let negative = token.first == UInt8(ascii: "-")
        if negative { index += 1 }
        var mantissa: UInt64 = 0, digits = 0, scale = 0
        var inFraction = false
        while index < token.count {
            let byte = token[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if byte >= 0x30 && byte <= 0x39 {
                if mantissa > 0 || byte != 0x30 { digits += 1 }
                guard digits <= 15 else { return nil }
                mantissa = mantissa * 10 + UInt64(byte - 0x30)
                if inFraction { scale -= 1 }
            } else {
                break  // the exponent
            }
            index += 1
        }
        if index < token.count {  // e or E, then an optional sign and digits
            index += 1
            var exponentNegative = false
            if token[index] == UInt8(ascii: "+") || token[index] == UInt8(ascii: "-") {
                exponentNegative = token[index] == UInt8(ascii: "-")
                index += 1
            }
            guard token.count - index <= 3 else { return nil }
            var exponent = 0
            while index < token.count {
                exponent = exponent * 10 + Int(token[index] - 0x30)
                index += 1
            }
            scale += exponentNegative ? -exponent : exponent
        }
        var value = Double(mantissa)
        if mantissa != 0 {
            guard abs(scale) <= 22 else { return nil }
            value = scale < 0 ? value / exactPowersOfTen[-scale] : value * exactPowersOfTen[scale]
        }
        return negative ? -value : value
    }

    /// The bytes of the string token that is next when it is plain printable ASCII (no escapes,
    /// nothing to validate), read in place; nil, with nothing consumed, for any other string.
    mutating func readPlainASCIIString() -> UnsafeBufferPointer<UInt8>? {
        guard peek() == UInt8(ascii: "\"") else { return nil }
        var end = position + 1
        // Eight bytes at a time while eight are left: the first that is a quote, a backslash, a
        // control character or not ASCII ends the plain run (SWAR: each test's lowest flagged
        // byte is exact, and that is the one taken).
        let raw = UnsafeRawPointer(bytes.baseAddress!)
        while end + 8 <= bytes.count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: end, as: UInt64.self))
            let flagged = Self.zeroBytes(word ^ Self.quotes) | Self.zeroBytes(word ^ Self.backslashes)
                | (word &- Self.spaces) & ~word & Self.highBits | word & Self.highBits
            if flagged == 0 {
                end += 8
                continue
            }
            end += flagged.trailingZeroBitCount / 8
            guard bytes[end] == UInt8(ascii: "\"") else { return nil }
            let slice = UnsafeBufferPointer(rebasing: bytes[(position + 1)..<end])
            position = end + 1
            return slice
        }
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[(position + 1)..<end])
                position = end + 1
                return slice
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            end += 1
        }
        return nil
    }

    private static let highBits: UInt64 = 0x8080_8080_8080_8080
    private static let quotes: UInt64 = 0x2222_2222_2222_2222
    private static let backslashes: UInt64 = 0x5C5C_5C5C_5C5C_5C5C
    private static let spaces: UInt64 = 0x2020_2020_2020_2020

    /// The high bit of each byte of `word` that is zero (exact up to the first such byte).
    private static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- 0x0101_0101_0101_0101) & ~word & highBits
    }

    /// Whether a key read in place is `word`.
    static func isKey(_ key: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        key.count == word.utf8CodeUnitCount && (key.isEmpty || Memory.compare(key.baseAddress!, word.utf8Start, count: key.count) == 0)
    }

    /// A string token, unescaped; the bytes must be valid UTF-8.
    mutating func readStringToken() throws(Failure) -> String {
        try consume(UInt8(ascii: "\""))
        let start = position
        // Fast path: no escapes, the string is the bytes between the quotes.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                guard let text = String(validating: slice, as: UTF8.self) else { throw Self.syntaxError }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw Self.syntaxError }
            position += 1
        }
        // Slow path: escapes.
        var buffer = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: buffer, as: UTF8.self) else { throw Self.syntaxError }
                return text
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { throw Self.syntaxError }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try readHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                        else { throw Self.syntaxError }
                        position += 2
                        let low = try readHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw Self.syntaxError }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw Self.syntaxError
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw Self.syntaxError }
                    buffer.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw Self.syntaxError
                }
            default:
                guard byte >= 0x20 else { throw Self.syntaxError }
                buffer.append(byte)
            }
        }
        throw Self.syntaxError
    }

    /// Passes over a string without building it, checked as strictly as one that is read: its
    /// escapes (surrogates paired), no control character, valid UTF-8.
    mutating func skipStringToken() throws(Failure) {
        try consume(UInt8(ascii: "\""))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw Self.syntaxError }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    let unit = try readHex4()
                    if (0xDC00...0xDFFF).contains(unit) { throw Self.syntaxError }
                    if (0xD800...0xDBFF).contains(unit) {
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                        else { throw Self.syntaxError }
                        position += 2
                        guard (0xDC00...0xDFFF).contains(try readHex4()) else { throw Self.syntaxError }
                    }
                default:
                    throw Self.syntaxError
                }
            case 0x00..<0x20:
                throw Self.syntaxError
            case 0x20..<0x80:
                position += 1
            default:
                try skipUTF8Sequence()
            }
        }
        throw Self.syntaxError
    }

    /// Passes over one multi-byte UTF-8 sequence, as the Unicode standard bounds it (no overlong
    /// form, no surrogate, nothing past U+10FFFF).
    private mutating func skipUTF8Sequence() throws(Failure) {
        let lead = bytes[position]
        let (length, low, high): (Int, UInt8, UInt8) = switch lead {
        case 0xC2...0xDF: (2, 0x80, 0xBF)
        case 0xE0: (3, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (3, 0x80, 0xBF)
        case 0xED: (3, 0x80, 0x9F)
        case 0xF0: (4, 0x90, 0xBF)
        case 0xF1...0xF3: (4, 0x80, 0xBF)
        case 0xF4: (4, 0x80, 0x8F)
        default: throw Self.syntaxError
        }
        guard position + length <= bytes.count, (low...high).contains(bytes[position + 1]) else { throw Self.syntaxError }
        for offset in 2..<max(2, length) where !(0x80...0xBF).contains(bytes[position + offset]) { throw Self.syntaxError }
        position += length
    }

    private mutating func readHex4() throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw Self.syntaxError }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            position += 1
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw Self.syntaxError
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
