import CSQLite

/// One document `cache search` found: its key within the source (a record's key, a joke's id,
/// a vendor), a snippet of its text with the matches between `[` and `]`, and FTS5's rank (bm25:
/// lower is better).
package struct SearchHit: Sendable, Equatable {
    package var document: String
    package var snippet: String
    package var rank: Double
}

/// A query FTS5 cannot run, with its message (`fts5: syntax error near "AND"`).
package struct SearchQueryError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// The index itself cannot be read (damaged): not the query's fault; `cache reindex` mends it.
package struct SearchIndexDamaged: Error, CustomStringConvertible {
    package var message: String
    package var description: String {
        "the search index is damaged (\(message)); 'cache reindex' mends it (the cached rows are unharmed: 'cache list' reads them)"
    }
}

/// Full-text search over one source's cached rows, offline (see `SearchIndex`).
extension CacheReader {
    /// The query with each word that holds punctuation FTS5 does not take in a bare word
    /// (`knock-knock`, `doesn't`, `v1.2`, `me@example.com`) quoted as the phrase its tokens make,
    /// so such words work as people type them. FTS5's own syntax is left as it is: `"phrases"`,
    /// `AND`/`OR`/`NOT`, `NEAR(a b, 5)` (a word holding a comma is left alone), parentheses,
    /// `prefix*`, `^first`, `column:`, `+`.
    package static func quotingWords(_ query: String) -> String {
        func isBare(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value >= 0x80 || scalar == "_" || scalar == "\u{1A}" || (scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
        }
        let syntax = Set<Unicode.Scalar>(["(", ")", "*", "^", "\"", ":", "{", "}", "+", ","])
        var out = "", word = "", inQuotes = false
        func flush() {
            defer { word = "" }
            guard !word.isEmpty else { return }
            let scalars = Array(word.unicodeScalars)
            // Punctuation FTS5 has no use for, and none of its syntax: quoted whole (keeping
            // a leading `(`, a trailing `)` or `*`).
            guard scalars.contains(where: { !isBare($0) && !syntax.contains($0) }),
                  !scalars.contains(where: { ["\"", ":", "{", "}", "^", "+", ","].contains($0) }) else { return out += word }
            let lead = scalars.prefix { $0 == "(" }.count
            let trail = scalars.reversed().prefix { $0 == ")" || $0 == "*" }.count
            let core = String(String.UnicodeScalarView(scalars[lead..<(scalars.count - trail)]))
            out += String(repeating: "(", count: lead) + "\"" + core + "\"" + String(String.UnicodeScalarView(scalars[(scalars.count - trail)...]))
        }
        for scalar in query.unicodeScalars {
            if inQuotes {
                out.unicodeScalars.append(scalar)
                if scalar == "\"" { inQuotes = false }
            } else if scalar == "\"" {
                flush()
                out.unicodeScalars.append(scalar)
                inQuotes = true
            } else if scalar == " " || scalar == "\t" || scalar == "\n" {
                flush()
                out.unicodeScalars.append(scalar)
            } else {
                word.unicodeScalars.append(scalar)
            }
        }
        flush()
        return out
    }

    /// The best `limit` documents of `source` for `query`, in FTS5's query syntax, best first.
    package func search(_ source: Source, query: String, limit: Int) throws -> [SearchHit] {
        do {
            // The source's documents lie within one range of rowids (a sync adds its documents
            // together): FTS5 ranks only the matches inside it, not every source's (figures:
            // docs/performance.md).
            // (No documents: an empty range, and the query is still read, so a bad one is refused.)
            // Each end by the index on (source, id): one lookup each (min and max in one query
            // would read the whole range).
            let (first, last) = try db.query("""
                SELECT (SELECT min(id) FROM search_docs WHERE source = ?1), (SELECT max(id) FROM search_docs WHERE source = ?1)
                """, [.text(source.name)], row: { $0.isNull(0) ? (1, 0) : ($0.int(0), $0.int(1)) }).first ?? (1, 0)
            return try db.query("""
                SELECT d.doc, snippet(search_index, 0, '[', ']', '…', 16), search_index.rank
                FROM search_index JOIN search_docs d ON d.id = search_index.rowid
                WHERE search_index MATCH ?2 AND search_index.rowid BETWEEN ?4 AND ?5 AND d.source = ?1
                ORDER BY search_index.rank LIMIT ?3
                """, [.text(source.name), .text(Self.quotingWords(query)), .int(Int64(limit)), .int(Int64(first)), .int(Int64(last))]) {
                SearchHit(document: $0.text(0) ?? "", snippet: $0.text(1) ?? "", rank: $0.double(2))
            }
        } catch let error as DatabaseError where error.primaryCode == SQLITE_ERROR || error.primaryCode == SQLITE_CORRUPT {
            // A statement of our own that SQLite refuses is a query of the user's it cannot parse,
            // unless the index refuses a query anyone can read: then the index is damaged.
            let damaged = error.primaryCode != SQLITE_ERROR
                || (try? db.scalarInt("SELECT count(*) FROM search_index WHERE search_index MATCH '\"a\"'")) == nil
            throw damaged ? SearchIndexDamaged(message: error.message) as Error : SearchQueryError(message: error.message)
        }
    }

    /// Which field of a found row holds the snippet's first match (`name`, `owner.login`): the
    /// first string field, in the row's order, whose text holds the matched words, compared
    /// without case. `fields` are the row's columns (a record's JSON is looked into, nested
    /// fields too); nil when none is found (a match that only folding accents made, say).
    package static func matchedField(of source: Source, snippet: String, fields: [(name: String, text: String)]) -> String? {
        let indexed = source.kind.storage.definition.search.indexed
        return matchedField(snippet: snippet, fields: fields.filter { indexed.contains($0.name) })
    }

    static func matchedField(snippet: String, fields: [(name: String, text: String)]) -> String? {
        guard let open = snippet.firstIndex(of: "["), let close = snippet[open...].firstIndex(of: "]") else { return nil }
        let term = snippet[snippet.index(after: open)..<close].lowercased()
        guard !term.isEmpty else { return nil }
        for field in fields {
            if field.name == "record", let strings = Self.strings(ofRecord: field.text) {
                if let hit = strings.first(where: { $0.value.lowercased().contains(term) }) { return hit.path }
            } else if field.text.lowercased().contains(term) {
                return field.name
            }
        }
        return nil
    }

    /// A record's string values with their dotted paths, in the record's order.
    static func strings(ofRecord json: String) -> [(path: String, value: String)]? {
        var bytes = Array(json.utf8)
        let node: JSONNode? = bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = JSONCursor(UnsafeBufferPointer(buffer))
            return try? RecordDecoder.node(&cursor)
        }
        guard let node else { return nil }
        var out: [(String, String)] = []
        func walk(_ node: JSONNode, _ path: String) {
            switch node {
            case .string(let text): out.append((path, text))
            case .object(let keys, let values): for (key, value) in zip(keys, values) { walk(value, path.isEmpty ? key : path + "." + key) }
            case .array(let items): for item in items { walk(item, path) }
            default: break
            }
        }
        walk(node, "")
        return out
    }

    /// The rows of one document `search` found, as `forEachRow` gives them: one row, or for a
    /// vendor its transactions, newest first.
    package func forEachRow(of source: Source, document: String, limit: Int?, asRecords: Bool,
                            _ body: ([String], Statement) throws -> Void) throws {
        try forEachRow(RowSelection(source: source.name, document: true), kind: source.kind, limit: limit,
                       asRecords: asRecords, bindings: [.text(document)], body)
    }
}
