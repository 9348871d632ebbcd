import FoundationEssentials

/// What `cache metrics` exposes of one source: its status, its failure streak, its last sync's
/// duration, size and HTTP status, and how many runs ended each way (from `sync_runs`).
package struct SourceMetrics: Sendable {
    package var status: SourceStatus
    package var consecutiveFailures: Int
    /// The newest run that fetched (not skipped): seconds, body bytes, HTTP status.
    package var lastSyncSeconds: Double?
    package var lastSyncBytes: Int?
    package var lastHTTPStatus: Int?
    /// Runs recorded by outcome (`updated`, `unchanged`, `failed`, `held`, `skipped`), since the
    /// source was added: a counter, which `cache prune` does not lower (`run_totals`).
    package var runsByOutcome: [String: Int]
    /// When the source was added, as stored: with no success yet, how long it has gone without.
    package var addedAt: String?
}

extension CacheReader {
    package func metrics(counting: RowCounting = .everyRow) throws -> [SourceMetrics] {
        let added = try SourceStore(database).addedAt()
        return try status(counting: counting).map { status in
            let name = SQLValue.text(status.source.name)
            let failures = try db.scalarInt("SELECT failures FROM sync_state WHERE source = ?", [name]).map(Int.init) ?? 0
            let last = try db.query("""
                SELECT (julianday(finished_at) - julianday(started_at)) * 86400, bytes, http_status
                FROM sync_runs WHERE source = ? AND outcome != 'skipped' ORDER BY id DESC LIMIT 1
                """, [name]) { row in
                (row.double(0), row.isNull(1) ? nil : row.int(1), row.isNull(2) ? nil : row.int(2))
            }.first
            var outcomes: [String: Int] = [:]
            for (outcome, count) in try db.query("SELECT outcome, runs FROM run_totals WHERE source = ?",
                                                 [name], row: { ($0.text(0) ?? "", $0.int(1)) }) {
                outcomes[outcome] = count
            }
            return SourceMetrics(status: status, consecutiveFailures: failures, lastSyncSeconds: last?.0,
                                 lastSyncBytes: last?.1 ?? nil, lastHTTPStatus: last?.2 ?? nil, runsByOutcome: outcomes,
                                 addedAt: added[status.source.name])
        }
    }
}
