import FoundationEssentials

/// One version of a row in `cache log`: what a run did to it, and its fields before and after.
package struct RowVersion: Sendable, Equatable {
    package var runID: Int
    /// When the run finished.
    package var at: String
    /// `inserted`, `updated`, `removed`, or `loaded` (it came with a sync into an empty cache).
    package var change: String
    /// The change log's row kind (`record`, `joke`, `transaction`, `account`).
    package var rowKind: String
    /// The row's fields as JSON objects, before and after.
    package var before: String?
    package var after: String?

    package init(runID: Int, at: String, change: String, rowKind: String, before: String?, after: String?) {
        (self.runID, self.at, self.change, self.rowKind, self.before, self.after) = (runID, at, change, rowKind, before, after)
    }
}

/// The past of rows: how far back the change log answers (`list --as-of`), and one row's versions
/// (`cache log`).
extension HistoryStore {
    /// The earliest moment `source`'s change log answers for; nil when its whole history is there
    /// (before its first sync it had no rows).
    package func horizon(source: String) throws -> String? {
        try db.scalarText("SELECT since_at FROM history_horizon WHERE source = ?", [.text(source)])
    }

    /// The history horizon when it is later than the source's creation: older runs were pruned,
    /// or its rows re-keyed. Nil when the whole history since it was added is there.
    package func cut(source: String) throws -> String? {
        try db.scalarText("""
            SELECT h.since_at FROM history_horizon h JOIN sources s ON s.name = h.source
            WHERE h.source = ? AND h.since_at > s.created_at
            """, [.text(source)])
    }

    /// Refuses a moment the change log can no longer answer for, naming the earliest it can and
    /// why the history starts there.
    package func checkAnswerable(source: String, at moment: String) throws {
        let horizon = try db.query("SELECT since_at, cause FROM history_horizon WHERE source = ?", [.text(source)]) {
            ($0.text(0) ?? "", $0.text(1).flatMap(HorizonCause.init(rawValue:)))
        }.first
        if let (since, cause) = horizon, moment < since {
            throw CacheError.beforeHistory(source: source, asked: moment, earliest: since, cause: cause)
        }
    }

    /// Moves the horizon of `source` to `moment` for `cause`, unless it is already later, keeping
    /// the newest write and confirmation of the runs it leaves behind (`wrote`, `confirmed`:
    /// from the runs a prune deletes).
    static func raiseHorizon(_ db: Connection, source: String, to moment: String, cause: HorizonCause,
                             wrote: String? = nil, confirmed: String? = nil) throws {
        try db.run("""
            INSERT INTO history_horizon (source, since_at, wrote_at, confirmed_at, cause) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (source) DO UPDATE SET
                cause = CASE WHEN excluded.since_at > since_at THEN excluded.cause ELSE cause END,
                since_at = max(since_at, excluded.since_at),
                wrote_at = nullif(max(coalesce(wrote_at, ''), coalesce(excluded.wrote_at, '')), ''),
                confirmed_at = nullif(max(coalesce(confirmed_at, ''), coalesce(excluded.confirmed_at, '')), '')
            """, [.text(source), .text(moment), .optionalText(wrote), .optionalText(confirmed), .text(cause.rawValue)])
    }

    /// The versions of the row of `source` known by `key` (a record's key, a joke's id, a
    /// transaction's id, or for an account's header the source's name), newest first, since the
    /// history horizon (before it, rows may have had other keys); and the row as it is now (its
    /// fields as the log keeps them), if it is cached. A row that came with a load is shown as
    /// `loaded` there: loads are logged once, not row by row.
    /// The row's versions, newest first, then (when no change is logged since the history's cut)
    /// the row as it is now, as a version `current`: what `cache log` shows. The key as given,
    /// or a composite key as people write it (`PAR,2026-12-01`).
    package func log(of source: Source, key: String) throws -> [RowVersion] {
        var (versions, current) = try self.versions(of: source, key: key)
        for written in source.compositeKeys(written: key)
        where versions.isEmpty && current == nil {
            (versions, current) = try self.versions(of: source, key: written)
        }
        guard !versions.isEmpty || current != nil else { throw CacheError.noSuchRow(key, source: source.name) }
        let now = versions.isEmpty ? current.map {
            RowVersion(runID: 0, at: "", change: "current", rowKind: "", before: nil, after: $0)
        } : nil
        return versions + (now.map { [$0] } ?? [])
    }

    package func versions(of source: Source, key: String) throws -> (versions: [RowVersion], current: String?) {
        let storage = source.kind.storage.definition
        let since = SQLValue.text(try horizon(source: source.name) ?? "")
        // By the row's index (`changes_by_row`), naming the storage's row kinds; `+c.id` keeps
        // SQLite from walking every change of the source in id order to skip a sort of a few.
        let kinds = ([storage.loggedAs.kind] + (storage.loggedHeader.map { [$0.kind] } ?? [])).map { "'\($0)'" }.joined(separator: ", ")
        let logged = try db.query("""
            SELECT c.run_id, r.finished_at, c.change, c.row_kind, c.before, c.after
            FROM changes c JOIN sync_runs r ON r.id = c.run_id
            WHERE c.source = ?1 AND c.row_kind IN (\(kinds)) AND c.row_id = ?2 AND r.finished_at >= ?3 ORDER BY +c.id
            """, [.text(source.name), .text(key), since]) {
            RowVersion(runID: $0.int(0), at: $0.text(1) ?? "", change: $0.text(2) ?? "", rowKind: $0.text(3) ?? "",
                       before: $0.text(4), after: $0.text(5))
        }
        // The source's own name is its header's key (an account's), unless a row has that key.
        let header = storage.loggedHeader.flatMap { key == source.name ? $0 : nil }
        let kind = logged.first?.rowKind ?? header?.kind ?? storage.loggedAs.kind
        // Loads bring rows of the storage's own kind only (never an account's header).
        if let header, kind == header.kind {
            let current = try db.scalarText("SELECT \(header.fields) FROM \(header.table) WHERE source = ?", [.text(source.name)])
            return (logged.reversed(), current)
        }
        guard kind == storage.loggedAs.kind else { return (logged.reversed(), nil) }
        let loads = try db.query("""
            SELECT l.run_id, r.finished_at FROM loads l JOIN sync_runs r ON r.id = l.run_id
            WHERE l.source = ?1 AND l.row_kind = ?2 AND r.finished_at >= ?3 ORDER BY l.run_id
            """, [.text(source.name), .text(kind), since]) { (run: $0.int(0), at: $0.text(1) ?? "") }
        let current = try db.scalarText("""
            SELECT \(storage.loggedAs.fields) FROM \(storage.rowTable) WHERE source = ?1 AND \(storage.loggedAs.key) = ?2
            """, [.text(source.name), .text(key)])

        // A load fills an empty cache, and only logged changes empty it: the row came with a load
        // when the first logged change after it (before the next load) found it there, or, with
        // nothing logged after the last load, when the row is there now.
        var versions = logged
        for (index, load) in loads.enumerated() {
            let nextLoad = index + 1 < loads.count ? loads[index + 1].run : Int.max
            let next = logged.first { $0.runID > load.run }
            let came: String?
            if let next {
                came = next.runID < nextLoad && next.change != "inserted" ? next.before : nil
            } else {
                came = nextLoad == Int.max ? current : nil
            }
            if let came {
                versions.append(RowVersion(runID: load.run, at: load.at, change: "loaded", rowKind: kind, before: nil, after: came))
            }
        }
        return (versions.sorted { ($0.runID, $0.change == "loaded" ? 0 : 1) > ($1.runID, $1.change == "loaded" ? 0 : 1) }, current)
    }
}
