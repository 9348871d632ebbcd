/// Any JSON API: records found and keyed by the source's `RecordLayout`, kept as canonical JSON
/// in one `records` table, with a view per source (`RecordView`).
struct RecordsKind: KindDefinition {
    var defaultMode: SyncMode { .replace }
    var rowNoun: String { "records" }
    var rowTable: String { "records" }
    var cachedTables: [String] { ["records"] }

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
}
