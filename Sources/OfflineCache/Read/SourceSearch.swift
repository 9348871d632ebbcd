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
    /// The best `limit` documents of `source` for `query`, in FTS5's query syntax, best first.
    package func search(_ source: Source, query: String, limit: Int) throws -> [SearchHit] {
        do {
            return try db.query("""
                SELECT d.doc, snippet(search_index, 0, '[', ']', '…', 16), search_index.rank
                FROM search_index JOIN search_docs d ON d.id = search_index.rowid
                WHERE search_index MATCH ?2 AND d.source = ?1
                ORDER BY search_index.rank LIMIT ?3
                """, [.text(source.name), .text(query), .int(Int64(limit))]) {
                SearchHit(document: $0.text(0) ?? "", snippet: $0.text(1) ?? "", rank: $0.double(2))
            }
        } catch let error as DatabaseError where SearchIndex.isDamage(error) {
            // A statement of our own that SQLite refuses is a query of the user's it cannot parse,
            // unless the index refuses a query anyone can read: then the index is damaged.
            let damaged = error.primaryCode != SQLITE_ERROR
                || (try? db.scalarInt("SELECT count(*) FROM search_index WHERE search_index MATCH '\"a\"'")) == nil
            throw damaged ? SearchIndexDamaged(message: error.message) as Error : SearchQueryError(message: error.message)
        }
    }

    /// The rows of one document `search` found, as `forEachRow` gives them: one row, or for a
    /// vendor its transactions, newest first.
    package func forEachRow(of source: Source, document: String, limit: Int?, asRecords: Bool,
                            _ body: ([String], Statement) throws -> Void) throws {
        try forEachRow(RowSelection(source: source.name, document: true), kind: source.kind, limit: limit,
                       asRecords: asRecords, bindings: [.text(document)], body)
    }
}
