// What the code needs of text beyond the standard library, without Foundation's
// internationalization (its ICU data would be most of the binary): trimming and percent-encoding
// (printf-style numbers are in Platform/CFormat.swift).

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (not newlines: a header value keeps a CR or
    /// LF, to be refused).
    package func trimmingSpaces() -> String {
        trimmed { $0 == " " || $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
    }

    /// Without leading and trailing whitespace, newlines included.
    package func trimmingWhitespace() -> String {
        trimmed { $0.properties.isWhitespace }
    }

    /// Without the leading and trailing scalars `drop` picks.
    /// (Walked in place from both ends: every header line of every answer is trimmed.)
    package func trimmed(_ drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }) else { return "" }
        var last = scalars.index(before: scalars.endIndex)
        while drop(scalars[last]) { last = scalars.index(before: last) }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}

extension String {
    /// Each scalar `replacement` names replaced by that text; by scalar, so the LF of a CRLF
    /// (one Character in Swift) is found too.
    package func replacingScalars(_ replacement: (Unicode.Scalar) -> String?) -> String {
        var out = ""
        for scalar in unicodeScalars {
            if let text = replacement(scalar) { out += text } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    /// Percent-encodes every byte outside `unreserved` (RFC 3986's unreserved characters by default).
    package func percentEncoded(keeping kept: (UInt8) -> Bool = String.isUnreserved) -> String {
        var out = ""
        for byte in utf8 {
            if kept(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(cFormat: "%02X", UInt32(byte))
            }
        }
        return out
    }

    /// A byte a URI carries as it is (RFC 3986's unreserved characters).
    package static func isUnreserved(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
            || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
    }

    /// `%XX` sequences decoded; nil when one is malformed or the bytes are not UTF-8.
    package var percentDecoded: String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == 0x25 else { bytes.append(byte); continue }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// Text compared and hashed by its UTF-8 bytes, as SQLite compares text: `é` and `e` + U+0301
/// are two keys here, where Swift's `String` calls them one (canonical equivalence). Record keys,
/// CSV header names and a JSON object's member names are told apart this way, so the cache never
/// merges two rows (or two fields) that its tables keep apart.
package struct ExactText: Hashable, Sendable {
    package let text: String

    package init(_ text: String) { self.text = text }

    package static func == (a: ExactText, b: ExactText) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

    package func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
