/// Reads cached rows through the views, with their stale flags. Never touches the network.
package struct CacheReader {
    let database: CacheDatabase
    var db: Connection { database.connection }

    package init(_ database: CacheDatabase) { self.database = database }

    /// The cached rows of `source`: transactions newest first, jokes by id.
    ///
    /// - Parameters:
    ///   - staleOnly: only rows upstream has not confirmed within the TTL.
    ///   - limit: at most this many rows.
    ///   - asOf: the rows as they were at this moment (stored form), rebuilt from the change log;
    ///     `HistoryStore.checkAnswerable` says whether the log still goes back that far.
    package func rows(of source: Source, staleOnly: Bool = false, limit: Int? = nil, asOf: String? = nil) throws -> CachedRows {
        // The account header and its transactions come from one snapshot: never half a sync.
        try db.inReadTransaction {
            var selection = RowSelection(source: source.name, staleOnly: staleOnly, asOf: asOf)
            selection.limit = limit
            return try source.kind.storage.definition.rows(db, selection)
        }
    }

    /// Streams every row of `source` from its view, with its stale flag, one statement step at
    /// a time: memory does not grow with the row count. `body` gets the column names and the
    /// statement positioned on each row.
    /// The columns are the view's: for transactions `id, source, account, type, vendor, amount,
    /// date, seen_at, age_s, stale`; for jokes `id, type, setup, punchline, source, seen_at,
    /// age_s, stale`. Rows come in `rows(of:)`'s order.
    /// For a json source, `asRecords` gives `key, record, seen_at, age_s, stale` (the record as
    /// JSON) instead of the view's columns.
    /// `asOf` as for `rows(of:)`.
    package func forEachRow(of source: Source, staleOnly: Bool = false, limit: Int? = nil, asRecords: Bool = false,
                           asOf: String? = nil, _ body: ([String], Statement) throws -> Void) throws {
        try forEachRow(RowSelection(source: source.name, staleOnly: staleOnly, asOf: asOf), kind: source.kind,
                       limit: limit, asRecords: asRecords, bindings: [], body)
    }

    /// The rows `selection` picks; `bindings` from `?3` on.
    func forEachRow(_ selection: RowSelection, kind: SourceKind, limit: Int?, asRecords: Bool, bindings: [SQLValue],
                    _ body: ([String], Statement) throws -> Void) throws {
        var selection = selection
        selection.limit = limit
        let sql = try kind.storage.definition.rowsQuery(db, selection, asRecords: asRecords)
        try db.inReadTransaction {
            // A statement per shape of conditions would be cached for ever (a reader's filters
            // make new shapes at will): those are prepared for this read alone.
            let statement = selection.conditions.isEmpty ? try db.cachedStatement(sql) : try Statement(connection: db, sql: sql)
            defer { statement.reset() }
            // Only the parameters the statement has: a page without a cursor has no ?4, and
            // filters that bind nothing (`is.null`) none after it.
            try statement.bind(Array(([.text(selection.source), .int(Int64(selection.limit ?? -1))] + bindings).prefix(max(2, statement.parameterCount))))
            let columns = (0..<statement.columnCount).map(statement.columnName)
            while try statement.step() { try body(columns, statement) }
        }
    }

    /// The columns `forEachRow` gives for `source` (without `asRecords`).
    package func viewColumns(of source: Source) throws -> [String] {
        try source.kind.storage.definition.viewColumns(db, source: source.name)
    }

    /// True when the source has never synced, or its last success is older than its TTL:
    /// the moment a read starts a background refresh, and `sync --if-stale` syncs.
    package func isStale(_ source: Source) throws -> Bool {
        try SourceStore(database).isStale(source)
    }

    /// Whether the source has ever synced successfully (its cache may still hold no row).
    package func hasSucceeded(_ source: Source) throws -> Bool {
        try db.scalarInt("SELECT last_success_at IS NOT NULL FROM sync_state WHERE source = ?", [.text(source.name)]) == 1
    }

    /// When the source is backing off after failed syncs: until when, and the last error.
    package func backoff(_ source: Source) throws -> (until: String, lastError: String?)? {
        try db.query("""
            SELECT next_attempt_at, last_error FROM sync_state WHERE source = ? AND next_attempt_at > ?
            """, [.text(source.name), .text(Timestamp.now())]) { ($0.text(0) ?? "", $0.text(1)) }.first
    }

    /// How a status counts a source's rows and stale rows.
    package enum RowCounting {
        /// Not at all (0): what a health check needs costs the same on a million rows as on ten.
        case none
        /// On the table, every row read: a command run once.
        case everyRow
        /// From the census kept for the rows' version: a server answering again and again.
        case kept(RowCensus.Kept)
    }

    /// Every source's state, by name.
    package func status(counting: RowCounting = .everyRow) throws -> [SourceStatus] {
        try SourceStore(database).all().map { try status(of: $0, counting: counting) }
    }

    /// One source's status, as `status()` gives it.
    package func status(of source: Source, counting: RowCounting = .everyRow) throws -> SourceStatus {
        let state = try db.query("""
            SELECT last_success_at, last_attempt_at, last_outcome, last_error, next_attempt_at,
                   CAST((julianday('now') - julianday(last_success_at)) * 86400 AS INTEGER),
                   last_success_at IS NULL OR (julianday('now') - julianday(last_success_at)) * 86400 > ?,
                   confirmed_at, watermark, last_full_at, index_damaged_at, index_damage
            FROM sync_state WHERE source = ?
            """, [.int(source.ttlSeconds), .text(source.name)]) { row in
            (row.text(0), row.text(1), row.text(2), row.text(3), row.text(4),
             row.isNull(5) ? nil : row.int(5), row.int(6) != 0, row.text(7), row.text(8), row.text(9),
             row.text(10), row.text(11))
        }.first
        // The views' staleness, counted on the table itself: a row is stale when the later of
        // its seen_at and the source's confirmed_at is older than the TTL. (Through the view,
        // which joins three tables for every row, it took far longer; figures: docs/performance.md.)
        let counts: (Int, Int)
        switch counting {
        case .none:
            counts = (0, 0)
        case .everyRow:
            counts = try db.query("""
                SELECT count(*), coalesce(sum(max(seen_at, ?2) < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || ?3 || ' seconds')), 0)
                FROM \(source.kind.storage.rowTable) WHERE source = ?1
                """, [.text(source.name), .text(state?.7 ?? ""), .int(source.ttlSeconds)]) { ($0.int(0), $0.int(1)) }.first ?? (0, 0)
        case .kept(let kept):
            let census = try kept.census(database, of: source)
            counts = (census.rows, census.staleRows(confirmedAt: state?.7, ttlSeconds: source.ttlSeconds))
        }
        var status = SourceStatus(source: source, rows: counts.0, staleRows: counts.1, stale: state?.6 ?? true,
                                  lastSuccessAt: state?.0, lastAttemptAt: state?.1, lastOutcome: state?.2,
                                  lastError: state?.3, nextAttemptAt: state?.4, ageSeconds: state?.5,
                                  watermark: state?.8, lastFullAt: state?.9,
                                  indexDamagedAt: state?.10 ?? nil, indexDamage: state?.11 ?? nil)
        // (A read-only file of an older schema has no outbox: nothing waits.)
        if source.kind.keepsRecords, let edits = try? db.query("""
            SELECT count(*) FILTER (WHERE state IN ('queued', 'in_flight')), count(*) FILTER (WHERE state = 'conflict'),
                   count(*) FILTER (WHERE state IN ('rejected', 'blocked')), min(made_at)
            FROM outbox WHERE source = ? AND state NOT IN ('applied', 'dropped')
            """, [.text(source.name)], row: { ($0.int(0), $0.int(1), $0.int(2), $0.text(3)) }).first {
            (status.queuedEdits, status.conflictedEdits, status.rejectedEdits, status.oldestEditAt) = edits
        }
        return status
    }
}
