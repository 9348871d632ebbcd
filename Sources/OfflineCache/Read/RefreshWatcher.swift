import FoundationEssentials

/// Watches the run history for the outcome of a refresh that another process performs.
///
/// SQLite is the only state processes share, so a reader learns that a refresh landed by
/// seeing a new, non-skipped run for the source.
package struct RefreshWatcher {
    /// A finished refresh: how it ended and, if it failed, why.
    package struct Landing: Sendable, Equatable {
        package var runID: Int
        package var outcome: SyncReport.Outcome
        package var error: String?
        package var counts: ChangeCounts
    }

    let db: Connection
    let source: String
    /// Runs up to this id happened before the watch began.
    package let baseline: Int

    package init(_ database: CacheDatabase, source: String) throws {
        db = database.connection
        self.source = source
        baseline = Int(try db.scalarInt("SELECT coalesce(max(id), 0) FROM sync_runs WHERE source = ?", [.text(source)]) ?? 0)
    }

    /// The first run after the baseline that did not skip, if one has landed.
    package func landing() throws -> Landing? {
        try db.query("""
            SELECT id, outcome, error, inserted, updated, deleted FROM sync_runs
            WHERE source = ? AND id > ? AND outcome != 'skipped' ORDER BY id LIMIT 1
            """, [.text(source), .int(Int64(baseline))]) { row in
            Landing(runID: row.int(0), outcome: SyncReport.Outcome(rawValue: row.text(1) ?? "") ?? .failed,
                    error: row.text(2), counts: ChangeCounts(inserted: row.int(3), updated: row.int(4), deleted: row.int(5)))
        }.first
    }

    /// Whether some process holds the source's sync lease now.
    package func refreshInFlight() throws -> Bool {
        try SyncLease(db: db).currentHolder(source) != nil
    }
}
