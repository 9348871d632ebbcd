import FoundationEssentials
import Glibc

/// The typed values the built-in decoders read, and where the reader is, for messages.
extension JSONCursor {
    var pathText: String {
        var text = ""
        for component in path {
            switch component {
            case .key(let key): text += (text.isEmpty ? "" : ".") + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return text.isEmpty ? "the top level" : text
    }

    /// The error for a value of the wrong kind, as PayloadDecoder words it.
    mutating func mismatch(_ expected: String) throws(Failure) -> Failure {
        if try readNull() { return Failure(message: "\(pathText): expected \(expected), got null") }
        try skipValue()  // a syntax error later in the body outranks the type error, as in Foundation
        return Failure(message: "\(pathText): expected \(expected)")
    }

    mutating func readString() throws(Failure) -> String {
        guard peek() == UInt8(ascii: "\"") else { throw try mismatch("a string") }
        return try readStringToken()
    }

    mutating func readDouble() throws(Failure) -> Double {
        guard let next = peek(), next == UInt8(ascii: "-") || (next >= 0x30 && next <= 0x39) else { throw try mismatch("a number") }
        let token = try readNumberToken()
        guard let value = token.double, value.isFinite else {
            throw Failure(message: "a number does not fit its field (an integer field holds a fraction, or a value too large)")
        }
        return value
    }

    mutating func readInt() throws(Failure) -> Int {
        guard let next = peek(), next == UInt8(ascii: "-") || (next >= 0x30 && next <= 0x39) else { throw try mismatch("an integer") }
        let token = try readNumberToken()
        if let value = token.integer { return value }
        // Like Foundation: 1.0 or 1e2 is an integer when it is one exactly.
        if let value = token.double, value.rounded() == value, abs(value) < 9.2e18 { return Int(value) }
        throw Failure(message: "a number does not fit its field (an integer field holds a fraction, or a value too large)")
    }
}
