import FoundationEssentials

/// The storage json and csv sources share: one `records` table of canonical JSON by key, and a
/// view per source (`RecordView`).
enum RecordTables {
    /// Every record with its source and staleness, for any SQLite client (the per-source views
    /// cached_NAME add a column per field).
    static var views: [ViewDefinition] {
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

    /// The records of every page, checked and keyed, with each page read by `page`.
    static func set(_ bodies: inout [Data], _ page: (Data, Int) throws(UpstreamError) -> RecordPage) throws(UpstreamError) -> RecordSet {
        var set = RecordSet()
        for number in bodies.indices {
            set.add(try page(bodies[number], number + 1), number: number + 1)
            bodies[number] = Data()  // each body goes once read: memory holds one copy of the data
        }
        try set.finish()
        return set
    }
}
