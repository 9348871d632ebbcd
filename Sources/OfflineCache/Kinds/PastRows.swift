/// One source's rows as they were at a past moment, rebuilt from the change log backwards, as
/// `WITH` tables named like the views they stand in for (`cached_records`, …): a query on the
/// views reads the past when this clause comes first.
///
/// A row no run after the moment changed is as it is now. A row a later run changed was as
/// that run's first change found it (its `before`; none: it was not there yet). A load (a sync
/// into an empty cache) after the moment means none of what it brought was there. The moment
/// must not be older than the source's history horizon (`HistoryStore.horizon`).
struct PastRows {
    /// SQL literals.
    private let source: String, moment: String

    init(source: String, moment: String) {
        self.source = RecordView.literal(source)
        self.moment = RecordView.literal(moment)
    }

    /// The runs after the moment, and when upstream last confirmed the rows at or before it.
    var runs: String {
        """
        past_runs AS (SELECT id FROM sync_runs WHERE source = \(source) AND finished_at > \(moment)),
        past_confirmed AS (SELECT max(at) AS at FROM (
            SELECT confirmed_at AS at FROM sync_runs WHERE source = \(source) AND finished_at <= \(moment)
            UNION ALL SELECT confirmed_at FROM history_horizon WHERE source = \(source)))
        """
    }

    /// `name`: the rows of `kind` (as the change log names it) at the moment, with `columns`
    /// and `own` (a current row's seen_at): current rows from `table`, known by `key` (the
    /// change log's row_id), and the others from their first later change's `before` through
    /// `fromBefore` (SQL over `c`, a `changes` row, giving `columns`).
    func rows(_ name: String, kind: String, table: String, key: String, columns: String, fromBefore: String) -> String {
        """
        \(name)_load AS (SELECT min(run_id) AS run FROM loads
                         WHERE row_kind = '\(kind)' AND run_id IN (SELECT id FROM past_runs)),
        \(name)_first AS (SELECT row_id, min(id) AS id FROM changes
                          WHERE row_kind = '\(kind)' AND run_id IN (SELECT id FROM past_runs) GROUP BY row_id),
        \(name) AS (
            SELECT \(columns), seen_at AS own FROM \(table)
            WHERE source = \(source) AND (SELECT run FROM \(name)_load) IS NULL AND \(key) NOT IN (SELECT row_id FROM \(name)_first)
            UNION ALL
            SELECT \(fromBefore), NULL FROM \(name)_first f JOIN changes c ON c.id = f.id
            WHERE c.before IS NOT NULL AND c.run_id < coalesce((SELECT run FROM \(name)_load), 9223372036854775807))
        """
    }

    /// A row's seen_at at the moment: the later of its own (if it was written by then) and the
    /// source's newest confirmation by then. `row` is the alias of a `rows` table.
    func seenAt(_ row: String) -> String {
        "max(CASE WHEN \(row).own <= \(moment) THEN \(row).own ELSE '' END, coalesce((SELECT at FROM past_confirmed), ''))"
    }

    /// `seen_at, age_s, stale` measured at the moment.
    var staleness: String { ViewDefinition.staleness(at: moment) }
}
