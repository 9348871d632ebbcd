import FoundationEssentials

/// One row of the sync history, as `cache history` shows it.
package struct SyncRunRecord: Sendable, Equatable {
    package var id: Int
    package var source: String
    package var startedAt: String
    package var finishedAt: String
    package var outcome: String
    package var counts: ChangeCounts
    package var httpStatus: Int?
    package var bytes: Int?
    package var durationMs: Int
    package var attempts: Int
    package var error: String?
    package var note: String?
}

/// Reads and trims the history of syncs and what they changed. Offline, like every read.
package struct HistoryStore {
    let db: Connection

    package init(_ database: CacheDatabase) { db = database.connection }

    /// Sync runs, newest first; with `after`, only the runs after that one, oldest first (a
    /// reader catching up on what it missed).
    package func runs(source: String? = nil, limit: Int? = nil, after: Int? = nil) throws -> [SyncRunRecord] {
        try db.query("""
            SELECT id, source, started_at, finished_at, outcome, inserted, updated, deleted, http_status, bytes,
                   CAST(round((julianday(finished_at) - julianday(started_at)) * 86400000) AS INTEGER),
                   attempts, error, note
            FROM sync_runs WHERE (?1 IS NULL OR source = ?1) AND (?3 IS NULL OR id > ?3)
            ORDER BY id \(after == nil ? "DESC" : "ASC") LIMIT ?2
            """, [.optionalText(source), .int(Int64(limit ?? -1)), .optionalInt(after)]) { row in
            SyncRunRecord(id: row.int(0), source: row.text(1) ?? "", startedAt: row.text(2) ?? "", finishedAt: row.text(3) ?? "",
                          outcome: row.text(4) ?? "", counts: ChangeCounts(inserted: row.int(5), updated: row.int(6), deleted: row.int(7)),
                          httpStatus: row.isNull(8) ? nil : row.int(8), bytes: row.isNull(9) ? nil : row.int(9),
                          durationMs: row.int(10), attempts: row.int(11), error: row.text(12), note: row.text(13))
        }
    }

    /// Which changes `cache diff` prints.
    package enum Selection: Sendable, Equatable {
        /// The newest run of the source that changed anything.
        case latest
        case run(Int)
        /// Every run that finished within the last this many seconds.
        case since(seconds: Int)
        /// Every run after this one (a reader catching up: `cache serve`'s `changes?since=`).
        case afterRun(Int)
    }

    /// The change log of `source` for the selection, oldest first.
    package func changes(source: String, _ selection: Selection) throws -> [ChangeRecord] {
        let filter: String
        var values: [SQLValue] = [.text(source)]
        switch selection {
        case .latest:
            filter = "x.run_id = (SELECT max(run_id) FROM (SELECT run_id FROM changes WHERE source = ?1 UNION ALL SELECT run_id FROM loads WHERE source = ?1))"
        case .run(let id):
            filter = "x.run_id = ?2"
            values.append(.int(Int64(id)))
        case .since(let seconds):
            filter = "r.finished_at >= ?2"
            values.append(.text(Timestamp.format(Date().addingTimeInterval(-Double(seconds)))))
        case .afterRun(let id):
            filter = "x.run_id > ?2"
            values.append(.int(Int64(id)))
        }
        // A run's load (if any) comes first, then its row changes in the order they were made.
        return try db.query("""
            SELECT x.id, x.run_id, r.finished_at, x.source, x.row_kind, x.row_id, x.change, x.before, x.after, x.rows
            FROM (SELECT id, run_id, source, row_kind, row_id, change, before, after, NULL AS rows FROM changes WHERE source = ?1
                  UNION ALL
                  SELECT 0, run_id, source, row_kind, '', 'loaded', NULL, NULL, rows FROM loads WHERE source = ?1) x
            JOIN sync_runs r ON r.id = x.run_id
            WHERE \(filter) ORDER BY x.run_id, x.id
            """, values) { row in
            ChangeRecord(id: row.int(0), runID: row.int(1), at: row.text(2) ?? "", source: row.text(3) ?? "",
                         rowKind: row.text(4) ?? "", rowID: row.text(5) ?? "", change: row.text(6) ?? "",
                         before: row.text(7), after: row.text(8), rows: row.isNull(9) ? nil : row.int(9))
        }
    }

    /// Whether run `id` is one of `source`'s.
    package func hasRun(_ id: Int, source: String) throws -> Bool {
        try db.scalarInt("SELECT EXISTS (SELECT 1 FROM sync_runs WHERE id = ? AND source = ?)", [.int(Int64(id)), .text(source)]) == 1
    }

    /// Deletes runs (and with them their change log) that finished more than `seconds` ago.
    /// What is left still answers `list --as-of` for every moment since the newest run deleted:
    /// each source's history horizon moves there.
    /// - Returns: how many runs and changes were deleted.
    package func prune(olderThan seconds: Int) throws -> (runs: Int, changes: Int) {
        let cutoff = Timestamp.format(Date().addingTimeInterval(-Double(seconds)))
        return try db.inTransaction {
            for (source, newest, wrote, confirmed) in try db.query("""
                SELECT source, max(finished_at), max(wrote_at), max(confirmed_at) FROM sync_runs WHERE finished_at < ? GROUP BY source
                """, [.text(cutoff)], row: { ($0.text(0) ?? "", $0.text(1) ?? "", $0.text(2), $0.text(3)) }) {
                try Self.raiseHorizon(db, source: source, to: newest, cause: .pruned, wrote: wrote, confirmed: confirmed)
            }
            // Loads count as entries of the change log too.
            let changes = Int(try db.scalarInt("""
                SELECT (SELECT count(*) FROM changes WHERE run_id IN (SELECT id FROM sync_runs WHERE finished_at < ?1))
                     + (SELECT count(*) FROM loads WHERE run_id IN (SELECT id FROM sync_runs WHERE finished_at < ?1))
                """, [.text(cutoff)]) ?? 0)
            try db.run("DELETE FROM sync_runs WHERE finished_at < ?", [.text(cutoff)])
            return (db.changes, changes)
        }
    }
}
