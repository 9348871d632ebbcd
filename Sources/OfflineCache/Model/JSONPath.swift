import FoundationEssentials

/// A path of object keys into a JSON value: `$` is the value itself, `$.data.items` two keys down.
/// A key that is not a plain name goes in brackets: `$['@odata.nextLink']`, `$.data["items"]`.
/// Key fields are written without the `$.` (`user.id`).
///
/// ```swift
/// let path = JSONPath("$['@odata.nextLink']")   // nil for text that is not a path
/// ```
package struct JSONPath: Sendable, Equatable, Hashable {
    /// The object keys from the root, in order.
    package var keys: [String]

    /// The path through these keys (none: the root, `$`).
    package init(_ keys: [String] = []) { self.keys = keys }

    /// `$`, `$.a.b`, `$['a.b']`, or (for key fields) `a.b`; nil for an empty key or a malformed path.
    /// A name runs to the next `.` or `['`/`["`: any other character is part of it (`items[]`
    /// is one key, as paths stored before brackets were read have it).
    package init?(_ text: String) {
        var rest = Substring(text)
        if rest.hasPrefix("$") {
            rest = rest.dropFirst()
            if rest.isEmpty { keys = []; return }
        } else if !Self.opensBracket(rest) {
            rest = "." + rest  // a key field: `a.b` is `$.a.b`
        }
        var keys: [String] = []
        while let first = rest.first {
            if first == "." {
                rest = rest.dropFirst()
                var end = rest.startIndex
                while end < rest.endIndex, rest[end] != ".", !Self.opensBracket(rest[end...]) { end = rest.index(after: end) }
                let name = rest[..<end]
                guard !name.isEmpty, !name.contains("$") else { return nil }
                keys.append(String(name))
                rest = rest[end...]
            } else if Self.opensBracket(rest) {
                // ['name'] or ["name"]: any characters but that quote.
                let quote = rest[rest.index(after: rest.startIndex)]
                rest = rest.dropFirst(2)
                guard let close = rest.firstIndex(of: quote) else { return nil }
                let name = rest[..<close]
                rest = rest[rest.index(after: close)...]
                guard !name.isEmpty, rest.first == "]" else { return nil }
                keys.append(String(name))
                rest = rest.dropFirst()
            } else {
                return nil
            }
        }
        guard !keys.isEmpty else { return nil }
        self.keys = keys
    }

    private static func opensBracket(_ text: Substring) -> Bool { text.hasPrefix("['") || text.hasPrefix("[\"") }

    /// Whether `text` holds a `[` or `]` outside a quoted name (`$.a[0]`, `$.a[`, `$.a[-1]`):
    /// an array index, which paths do not follow. Such a path, given as an option, is refused
    /// rather than read as a key literally named `a[0]`; a key with brackets in its name is
    /// written quoted, `$['a[0]']`. (Stored paths from before brackets were read still load.)
    package static func indexesAnArray(_ text: String) -> Bool {
        var rest = Substring(text)
        while let first = rest.first {
            if opensBracket(rest) {
                let quote = rest[rest.index(after: rest.startIndex)]
                rest = rest.dropFirst(2)
                guard let close = rest.firstIndex(of: quote) else { return false }  // malformed: JSONPath refuses it
                rest = rest[rest.index(after: close)...].dropFirst()  // the quote, then its `]`
            } else if first == "[" || first == "]" {
                return true
            } else {
                rest = rest.dropFirst()
            }
        }
        return false
    }

    /// Key fields as written after `--key`: `id`, or `user.id,repo`, commas inside brackets kept.
    package static func fields(_ text: String) -> [JSONPath?] {
        var fields: [String] = [], current = "", quote: Character?
        var rest = Substring(text)
        while let character = rest.first {
            if let open = quote {
                if character == open { quote = nil }
            } else if opensBracket(rest) {
                quote = rest[rest.index(after: rest.startIndex)]
                current += "[" + String(quote!)
                rest = rest.dropFirst(2)
                continue
            } else if character == "," {
                fields.append(current)
                current = ""
                rest = rest.dropFirst()
                continue
            }
            current.append(character)
            rest = rest.dropFirst()
        }
        fields.append(current)
        return fields.map { JSONPath($0.trimmingSpaces()) }
    }

    /// A key written as it is (else in brackets): nothing in it a path or a key list gives meaning to.
    private static func isPlain(_ key: String) -> Bool {
        !key.isEmpty && !key.contains(".") && !key.contains("$") && !key.contains(",")
            && !key.contains("['") && !key.contains("[\"") && key.trimmingSpaces() == key
    }

    /// `['key']`, or `["key"]` for a key holding `'`.
    private static func bracketed(_ key: String) -> String { key.contains("'") ? "[\"" + key + "\"]" : "['" + key + "']" }

    /// As SQLite's JSON functions take it: `$."a"."b"` (keys hold no `"` or `\`: see the settings' check).
    package var sqlitePath: String { "$" + keys.map { ".\"" + $0 + "\"" }.joined() }

    package var description: String {
        "$" + keys.map { Self.isPlain($0) ? "." + $0 : Self.bracketed($0) }.joined()
    }

    /// As a key field is written: `user.id`; a key that is not a plain name in brackets (`['a.b']`).
    package var dotted: String {
        keys.enumerated().map { index, key in
            Self.isPlain(key) ? (index == 0 ? key : "." + key) : Self.bracketed(key)
        }.joined()
    }
}
