import FoundationEssentials

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
        let start = position
        let token = try readNumberToken()
        guard let value = token.double, value.isFinite else { throw unfit(from: start) }
        return value
    }

    mutating func readInt() throws(Failure) -> Int {
        guard let next = peek(), next == UInt8(ascii: "-") || (next >= 0x30 && next <= 0x39) else { throw try mismatch("an integer") }
        let start = position
        let token = try readNumberToken()
        if let value = token.integer { return value }
        // Like Foundation: 1.0 or 1e2 is an integer when it is one exactly.
        if let value = token.double, value.rounded() == value, abs(value) < 9.2e18 { return Int(value) }
        throw unfit(from: start)
    }

    /// A number its field cannot hold (`1.5` for an integer, `1e999`), named by its field and
    /// its text, in the words an app's typed rows use (`DecodingReason`).
    private func unfit(from start: Int) -> Failure {
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        return Failure(message: "\(pathText): found \(text), which the field's type cannot hold (a fraction into a whole number, say, or past its range)")
    }
}
