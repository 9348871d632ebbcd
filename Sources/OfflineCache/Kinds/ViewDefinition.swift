/// A view every cache has, defined once here and in the kinds' folders, never in a migration.
struct ViewDefinition: Sendable {
    let name: String
    /// The tables it reads: it is made only where they all exist (a test may stop the
    /// migrations part way).
    let reads: [String]
    /// The `SELECT` after `CREATE VIEW name AS`.
    let select: String

    init(_ name: String, reads: [String], _ select: String) {
        self.name = name
        self.reads = reads
        self.select = select
    }

    /// A row's staleness, as every view computes it from its effective `seen_at` and the source's
    /// TTL: `seen_at, age_s, stale` over a subquery that gives `seen_at` and `ttl_s`.
    static let staleness = staleness(at: "'now'")

    /// The same, measured at `moment` (SQL: a time literal, or `'now'`). With `unknownIsStale`,
    /// a row whose seen_at is not known (empty) is stale.
    static func staleness(at moment: String, unknownIsStale: Bool = false) -> String {
        let stale = "(julianday(\(moment)) - julianday(seen_at)) * 86400 > ttl_s"
        return """
        seen_at,
               CAST((julianday(\(moment)) - julianday(seen_at)) * 86400 AS INTEGER) AS age_s,
               \(unknownIsStale ? "coalesce(\(stale), 1)" : "(\(stale))") AS stale
        """
    }
}
