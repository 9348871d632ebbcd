/// `jokes`, by id.
struct JokesStorage: StorageDefinition {
    var rowTable: String { "jokes" }
    var cachedTables: [String] { ["jokes"] }
    var rowNoun: String { "jokes" }
    var keepsRecords: Bool { false }

    var views: [ViewDefinition] {
        [
            ViewDefinition("cached_jokes", reads: ["jokes", "sources", "sync_state"], """
                SELECT id, type, setup, punchline, source, \(ViewDefinition.staleness)
                FROM (SELECT j.id, j.type, j.setup, j.punchline, j.source, s.ttl_s,
                             max(j.seen_at, coalesce(st.confirmed_at, '')) AS seen_at
                      FROM jokes j
                      JOIN sources s ON s.name = j.source
                      LEFT JOIN sync_state st ON st.source = j.source)
                """),
        ]
    }

    private static let columns = "id, type, setup, punchline, source, seen_at, age_s, stale"

    /// The jokes by id.
    func rows(_ db: Connection, _ selection: RowSelection) throws -> CachedRows {
        .jokes(try db.query(try rowsQuery(db, selection, asRecords: false),
                            [.text(selection.source), .int(Int64(selection.limit ?? -1))]) {
            CachedJoke(id: $0.int(0), type: $0.text(1) ?? "", setup: $0.text(2) ?? "",
                       punchline: $0.text(3) ?? "", source: $0.text(4) ?? "", seenAt: $0.text(5) ?? "",
                       ageSeconds: $0.int(6), stale: $0.int(7) != 0)
        })
    }

    func rowsQuery(_ db: Connection, _ selection: RowSelection, asRecords: Bool) throws -> String {
        let (with, body) = select(Self.columns, from: "cached_jokes", selection, orderBy: "id")
        return with + body
    }

    var loggedAs: (kind: String, key: String, fields: String) { ("joke", "CAST(id AS TEXT)", "json_object('id', id, 'type', type, 'setup', setup, 'punchline', punchline)") }

    func past(_ rows: PastRows) -> String {
        """
        \(rows.view("cached_jokes", columns: "id, type, setup, punchline, source", kind: loggedAs.kind, table: "jokes",
                    key: "CAST(r.id AS TEXT)", current: "r.id, r.type, r.setup, r.punchline, r.source",
                    restored: "CAST(c.row_id AS INTEGER) AS id, c.before ->> '$.type' AS type, c.before ->> '$.setup' AS setup, "
                              + "c.before ->> '$.punchline' AS punchline, c.source"))
        """
    }

    var pageKey: String { "id" }

    /// A joke's setup and punchline, by its id.
    var search: SearchDocuments {
        SearchDocuments(changedDocument: "c.row_id", column: "id", indexed: ["setup", "punchline"]) { only in
            """
            SELECT CAST(id AS TEXT) AS doc, setup || ' ' || punchline AS text FROM jokes
            WHERE source = ?1\(only ? " AND id IN (SELECT CAST(value AS INTEGER) FROM json_each(?2))" : "")
            """
        }
    }

    func viewColumns(_ db: Connection, source: String) throws -> [String] {
        Self.columns.split(separator: ", ").map(String.init)
    }
}

/// A cached joke as the `cached_jokes` view presents it.
///
/// ```swift
/// if case .jokes(let jokes) = try cache.rows(of: "jokes", limit: 1), let joke = jokes.first {
///     print(joke.setup, "—", joke.punchline)
/// }
/// ```
package struct CachedJoke: Sendable, Equatable {
    /// The joke's id upstream.
    package var id: Int
    /// Its category (`general`, `programming`, …).
    package var type: String
    /// The question.
    package var setup: String
    /// The answer.
    package var punchline: String
    /// The source it was cached from.
    package var source: String
    /// When upstream last confirmed it (ISO 8601, UTC).
    package var seenAt: String
    /// How long ago that was, when it was read.
    package var ageSeconds: Int
    /// Upstream has not confirmed it within the TTL.
    package var stale: Bool
}
