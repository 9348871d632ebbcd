import FoundationEssentials

extension JSONValue {
    /// Why a document could not be read as a value: not JSON (RFC 8259), or an object naming a
    /// key twice.
    package struct Unreadable: Error, CustomStringConvertible {
        package let description: String
        /// The document is JSON, but one of its objects names a key twice.
        package let repeatedKey: Bool
    }

    /// A whole document read by the project's strict reader (`JSONCursor`: RFC 8259's grammar
    /// and nothing else, so no trailing comma, comment or bare word), as a value. A number keeps
    /// the text it was written in (`.raw`), so nothing is rounded on the way. An object that names
    /// a key twice is refused, naming it: readers disagree on which one counts (Foundation took
    /// the first; jq, Python and JavaScript take the last), and a file two tools read differently
    /// is not one to act on. A UTF-8 byte-order mark in front is passed over (RFC 8259 §8.1).
    package static func parse(_ data: Data) throws(Unreadable) -> JSONValue {
        let result: Result<JSONValue, JSONCursor.Failure> = data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var cursor = JSONCursor(bytes)
            cursor.refusesRepeatedKeys = true
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { cursor.position = 3 }
            do throws(JSONCursor.Failure) {
                let value = try read(&cursor)
                try cursor.expectEnd()
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(let failure): throw Unreadable(description: failure.message, repeatedKey: failure.repeatedKey)
        }
    }

    private static func read(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> JSONValue {
        switch cursor.peek() {
        case UInt8(ascii: "{"):
            var pairs: [(String, JSONValue)] = []
            try cursor.readObject { cursor, key throws(JSONCursor.Failure) in pairs.append((key, try read(&cursor))) }
            return .object(pairs)
        case UInt8(ascii: "["):
            var items: [JSONValue] = []
            try cursor.readArray { cursor, _ throws(JSONCursor.Failure) in items.append(try read(&cursor)) }
            return .array(items)
        case UInt8(ascii: "\""):
            return .string(try cursor.readStringToken())
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return .bool(try cursor.readBool())
        case UInt8(ascii: "n"):
            _ = try cursor.readNull()
            return .null
        default:
            let start = cursor.position
            try cursor.skipNumberToken()
            return .raw(String(decoding: UnsafeBufferPointer(rebasing: cursor.bytes[start..<cursor.position]), as: UTF8.self))
        }
    }
}
