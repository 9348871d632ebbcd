/// One source's rows as they were at a past moment, rebuilt from the change log backwards.
///
/// A row no run after the moment changed is as it is now. A row a later run changed was as
/// that run's first change found it (its `before`; none: it was not there yet). A load (a sync
/// into an empty cache) after the moment means none of what it brought was there. The moment
/// must not be older than the source's history horizon (`HistoryStore.horizon`).
///
/// Each view is two `WITH` tables with its columns: `VIEW_now`, the rows still as they were
/// (read from the table, in its order), and `VIEW_log`, the rows brought back from the log
/// (few). `StorageDefinition.select` reads both, merged in `list`'s order, so a `--limit 50`
/// of a million rows reads about 50 of them.
struct PastRows {
    /// SQL literals.
    private let source: String, moment: String

    init(source: String, moment: String) {
        self.source = RecordView.literal(source)
        self.moment = RecordView.literal(moment)
    }

    /// The runs after the moment, and when upstream last confirmed the rows at or before it
    /// (from the runs kept, or from the runs a prune deleted).
    var runs: String {
        """
        past_runs AS (SELECT id FROM sync_runs WHERE source = \(source) AND finished_at > \(moment)),
        past_confirmed AS (SELECT coalesce(max(at), '') AS at FROM (
            SELECT confirmed_at AS at FROM sync_runs WHERE source = \(source) AND finished_at <= \(moment)
            UNION ALL SELECT confirmed_at FROM history_horizon WHERE source = \(source)))
        """
    }

    /// `VIEW_now` and `VIEW_log`, each with `columns` then `seen_at, age_s, stale` as of the
    /// moment. The rows are those of `kind` (the change log's name) in `table` (alias `r`),
    /// known by `key` (SQL over `r` giving the log's row_id); `current` gives `columns` from
    /// `r`, `restored` from `c`, the `changes` row whose `before` the row was (each named as in `columns`).
    func view(_ view: String, columns: String, kind: String, table: String, key: String, current: String, restored: String) -> String {
        """
        \(view)_load AS (SELECT min(run_id) AS run FROM loads
                         WHERE row_kind = '\(kind)' AND run_id IN (SELECT id FROM past_runs)),
        \(view)_first AS (SELECT row_id, min(id) AS id FROM changes
                          WHERE row_kind = '\(kind)' AND run_id IN (SELECT id FROM past_runs) GROUP BY row_id),
        \(view)_now AS (
            SELECT \(columns), \(staleness)
            FROM (SELECT \(current), s.ttl_s,
                         max(CASE WHEN r.seen_at <= \(moment) THEN r.seen_at ELSE '' END, (SELECT at FROM past_confirmed)) AS seen_at
                  FROM \(table) r JOIN sources s ON s.name = r.source
                  WHERE r.source = \(source) AND (SELECT run FROM \(view)_load) IS NULL
                    AND \(key) NOT IN (SELECT row_id FROM \(view)_first))),
        \(view)_log AS (
            SELECT \(columns), \(staleness)
            FROM (SELECT \(restored), s.ttl_s, (SELECT at FROM past_confirmed) AS seen_at
                  FROM \(view)_first f JOIN changes c ON c.id = f.id JOIN sources s ON s.name = c.source
                  WHERE c.before IS NOT NULL AND c.run_id < coalesce((SELECT run FROM \(view)_load), 9223372036854775807)))
        """
    }

    /// `seen_at, age_s, stale` measured at the moment.
    private var staleness: String { ViewDefinition.staleness(at: moment) }
}
