/// The storage json and csv sources share: one `records` table of canonical JSON by key, and a
/// view per source (`RecordView`) with a column per field.
struct RecordStorage: StorageDefinition {
    var rowTable: String { "records" }
    var cachedTables: [String] { ["records"] }
    var rowNoun: String { "records" }
    var keepsRecords: Bool { true }

    /// Every record with its source and staleness, for any SQLite client (the per-source views
    /// cached_NAME add a column per field).
    var views: [ViewDefinition] {
        [
            ViewDefinition("cached_records", reads: ["records", "sources", "sync_state"], """
                SELECT source, key, record, \(ViewDefinition.staleness)
                FROM (SELECT r.source, r.key, r.record, s.ttl_s,
                             max(r.seen_at, coalesce(st.confirmed_at, '')) AS seen_at
                      FROM records r
                      JOIN sources s ON s.name = r.source
                      LEFT JOIN sync_state st ON st.source = r.source)
                """),
        ]
    }

    /// The records by key, with the fields the source's view has columns for.
    func rows(_ db: Connection, source: String, staleOnly: Bool, limit: Int?) throws -> CachedRows {
        let columns = try RecordView.columns(db, source: source)
        let extracts = columns.map { ", " + RecordView.extract($0) }.joined()
        let rows = try db.query("""
            SELECT key, record, seen_at, age_s, stale\(extracts)
            FROM cached_records WHERE source = ?1 \(staleOnly ? "AND stale = 1" : "") ORDER BY key LIMIT ?2
            """, [.text(source), .int(Int64(limit ?? -1))]) { row in
            CachedRecord(key: row.text(0) ?? "", fields: columns.indices.map { row.text(5 + $0) },
                         record: row.text(1) ?? "{}", seenAt: row.text(2) ?? "", ageSeconds: row.int(3), stale: row.int(4) != 0)
        }
        return .records(columns: columns, rows)
    }

    func rowsQuery(_ db: Connection, source: String, staleOnly: Bool, asRecords: Bool) throws -> String {
        let filter = staleOnly ? "AND stale = 1" : ""
        if asRecords {
            return "SELECT key, record, seen_at, age_s, stale FROM cached_records WHERE source = ?1 \(filter) ORDER BY key LIMIT ?2"
        }
        // The view's columns: the key, each field, seen_at, age_s, stale (see RecordView).
        let fields = try RecordView.columns(db, source: source).map { RecordView.extract($0) + " AS " + RecordView.quoted($0) }
        return "SELECT \((["key"] + fields + ["seen_at", "age_s", "stale"]).joined(separator: ", ")) FROM cached_records WHERE source = ?1 \(filter) ORDER BY key LIMIT ?2"
    }

    func viewColumns(_ db: Connection, source: String) throws -> [String] {
        ["key"] + (try RecordView.columns(db, source: source)) + ["seen_at", "age_s", "stale"]
    }
}

/// A generic source's cached record: its key, the record's top-level fields the source's view
/// has columns for (as text; nil where the record lacks one), and the record itself.
public struct CachedRecord: Sendable, Equatable {
    public var key: String
    public var fields: [String?]
    /// Canonical JSON.
    public var record: String
    public var seenAt: String
    public var ageSeconds: Int
    public var stale: Bool
}
