import FoundationEssentials

/// The two formats this tool was made for, each read into its own payload.
package enum PayloadShape: Sendable {
    /// The `{status, message, body}` envelope of an account.
    case account
    /// The Official Joke API's jokes: an array, or one joke.
    case jokes
}

/// Turns a whole response body into a `Payload`, or says exactly why it cannot.
///
/// The formats are those docs/sources.md gives ("Sources"): the account envelope `{status, message, body}` and the
/// Official Joke API's jokes (an array, or one object). Unknown fields are ignored.
///
/// `decode` reads the bytes itself (PayloadDecoder+Bytes.swift), several times faster than
/// Foundation's JSONDecoder; the tests hold it equal to a JSONDecoder reading, which lives with
/// them (Tests/OfflineCacheTests/Support/FoundationReferenceDecoder.swift).
package enum PayloadDecoder {
    /// The checks both readings share: something that could be JSON at all.
    static func precheck(_ body: Data) throws(UpstreamError) -> UInt8 {
        guard let first = body.first(where: { !Self.isWhitespace($0) }) else {
            throw .badData("empty body")
        }
        guard first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else {
            throw .badData("not JSON (the body starts with \(Self.preview(body)))")
        }
        return first
    }

    /// What JSON's types cannot check: a date that is not a real `yyyy-MM-dd HH:mm:ss`.
    static func badDate(at index: Int, _ text: String) -> UpstreamError {
        .badData("body.transactions[\(index)].date: expected yyyy-MM-dd HH:mm:ss, got \"\(text.prefix(40))\"")
    }

    /// `2026-11-01 08:15:14` → `2026-11-01T08:15:14Z`, or nil when it is not a real date in that form.
    package static func isoDate(fromUpstream text: String) -> String? {
        TransactionDate(upstream: text)?.iso
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// The first few characters of a body for a message, with control characters escaped.
    static func preview(_ body: Data) -> String {
        let text = String(decoding: body.prefix(24), as: UTF8.self)
        let escaped = text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
        return "\"\(escaped)\(body.count > 24 ? "…" : "")\""
    }
}
