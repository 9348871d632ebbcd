/// One source's rows as they were at a past moment, rebuilt from the change log backwards.
///
/// A row no run after the moment changed is as it is now. A row a later run changed was as
/// that run's first change found it (its `before`; none: it was not there yet). A load (a sync
/// into an empty cache) after the moment means none of what it brought was there. The moment
/// must not be older than the source's history horizon (`HistoryStore.horizon`).
///
/// Each view is two `WITH` tables with its columns: `VIEW_now`, the rows still as they were
/// (read from the table, in its order), and `VIEW_log`, the rows brought back from the log.
/// `StorageDefinition.select` reads both, merged in `list`'s order.
///
/// Reading a page (`page`: a limit of `pageRows` or fewer), whether a run since the moment
/// changed a row, and when one by then last wrote it, are lookups of that row
/// (`changes_by_row`), and the log's rows come from an index in `list`'s order where one has
/// it (records by key through `changes_by_row`, transactions by date and vendor through
/// `changes_by_transaction_order`; jokes, ordered by number, are sorted): a `--limit 50` reads
/// about 50 rows of each part, however long the log. A whole list reads the changes
/// since the moment and before it as two sets instead, made once: lookups made a whole list
/// of many rows slower (figures: docs/performance.md).
struct PastRows {
    /// The most rows a read may ask for and still be read as a page, by lookups.
    static let pageRows = 10_000

    /// SQL literals.
    private let source: String, moment: String
    private let page: Bool

    /// `limit`: the most rows the read asks for; nil for all.
    init(source: String, moment: String, limit: Int?) {
        self.source = RecordView.literal(source)
        self.moment = RecordView.literal(moment)
        self.page = limit.map { $0 >= 0 && $0 <= Self.pageRows } ?? false
    }

    /// The runs after the moment; when the runs committed by then last wrote rows (a row's
    /// stored seen_at is its own then only if no later run wrote it, and no `sources set` moved
    /// it back since); and when upstream last confirmed every row by then, unless a new URL or
    /// key unconfirmed them after. Runs a prune deleted count through the horizon.
    var runs: String {
        """
        past_runs AS (SELECT id FROM sync_runs WHERE source = \(source) AND finished_at > \(moment)),
        past_wrote AS (SELECT CASE WHEN EXISTS (SELECT 1 FROM unconfirmations WHERE source = \(source) AND unconfirmed_at > \(moment))
                                   THEN '' ELSE coalesce(max(at), '') END AS at FROM (
            SELECT wrote_at AS at FROM sync_runs WHERE source = \(source) AND finished_at <= \(moment)
            UNION ALL SELECT wrote_at FROM history_horizon WHERE source = \(source))),
        past_unconfirmed AS (SELECT max(unconfirmed_at) AS at FROM unconfirmations WHERE source = \(source) AND unconfirmed_at <= \(moment)),
        past_confirmed AS (SELECT CASE WHEN coalesce((SELECT at FROM past_unconfirmed), '') > coalesce(max(at), '')
                                       THEN '' ELSE coalesce(max(at), '') END AS at FROM (
            SELECT confirmed_at AS at FROM sync_runs WHERE source = \(source) AND finished_at <= \(moment)
            UNION ALL SELECT confirmed_at FROM history_horizon WHERE source = \(source)))
        """
    }

    /// `VIEW_now` and `VIEW_log`, each with `columns` then `seen_at, age_s, stale` as of the
    /// moment. The rows are those of `kind` (the change log's name) in `table` (alias `r`),
    /// known by `key` (SQL over `r` giving the log's row_id); `current` gives `columns` from
    /// `r`, `restored` from `c`, the `changes` row whose `before` the row was (each named as in `columns`).
    ///
    /// A row's seen_at then is the later of the source's confirmation by then and the row's own:
    /// its stored seen_at if a run committed by then wrote it, else the last run by then that
    /// logged a change of it, or loaded it. (A merge sync that returns a row unchanged is not
    /// logged, so such a row may read older, and stale, where `list` then said fresh; never the
    /// reverse. After a prune, such a row's last write may be unknown: empty, and stale.)
    func view(_ view: String, columns: String, kind: String, table: String, key: String, current: String, restored: String,
              trailing: String = "") -> String {
        """
        \(view)_load AS (SELECT min(run_id) AS run FROM loads
                         WHERE row_kind = '\(kind)' AND run_id IN (SELECT id FROM past_runs)),
        \(view)_first AS (SELECT row_id, min(id) AS id FROM changes
                          WHERE row_kind = '\(kind)' AND run_id IN (SELECT id FROM past_runs) GROUP BY row_id),
        \(view)_written AS (SELECT c.row_id, max(x.wrote_at) AS at FROM changes c JOIN sync_runs x ON x.id = c.run_id
                            WHERE c.row_kind = '\(kind)' AND x.source = \(source) AND x.finished_at <= \(moment) GROUP BY c.row_id),
        \(view)_loaded AS (SELECT coalesce(max(x.wrote_at), '') AS at FROM loads l JOIN sync_runs x ON x.id = l.run_id
                           WHERE l.row_kind = '\(kind)' AND x.source = \(source) AND x.finished_at <= \(moment)),
        \(view)_now AS (
            SELECT \(columns), \(staleness)\(trailing)
            FROM (SELECT \(current), s.ttl_s,
                         max(\(unconfirmed("""
                             CASE WHEN r.seen_at <= (SELECT at FROM past_wrote) THEN r.seen_at
                                  ELSE coalesce(\(written(view, kind: kind, row: key)), (SELECT at FROM \(view)_loaded)) END
                             """)), (SELECT at FROM past_confirmed)) AS seen_at
                  FROM \(table) r JOIN sources s ON s.name = r.source
                  WHERE r.source = \(source) AND (SELECT run FROM \(view)_load) IS NULL
                    AND \(unchanged(view, kind: kind, row: key)))),
        \(view)_log AS (
            SELECT \(columns), \(staleness)\(trailing)
            FROM (SELECT \(restored), s.ttl_s,
                         max(\(unconfirmed("coalesce(\(written(view, kind: kind, row: "c.row_id")), (SELECT at FROM \(view)_loaded))")),
                             (SELECT at FROM past_confirmed)) AS seen_at
                  \(firstChanges(view, kind: kind))
                    AND c.before IS NOT NULL AND c.run_id < coalesce((SELECT run FROM \(view)_load), 9223372036854775807)))
        """
    }

    /// SQL: `FROM` the first change since the moment of each row of `kind` (alias `c`) joined
    /// with its source (`s`), and a `WHERE` to go on. A page reads them in the order of an index
    /// (`changes_by_row`, or a storage's own on its before-images), so the merge with the rows
    /// now stops after a page; a whole list reads them as the set `VIEW_first`.
    private func firstChanges(_ view: String, kind: String) -> String {
        guard page else {
            return "FROM \(view)_first f JOIN changes c ON c.id = f.id JOIN sources s ON s.name = c.source WHERE 1"
        }
        return """
            FROM changes c JOIN sources s ON s.name = c.source
            WHERE c.source = \(source) AND c.row_kind = '\(kind)' AND c.run_id IN (SELECT id FROM past_runs)
              AND NOT EXISTS (SELECT 1 FROM changes earlier WHERE earlier.source = \(source) AND earlier.row_kind = '\(kind)'
                              AND earlier.row_id = c.row_id AND earlier.run_id IN (SELECT id FROM past_runs) AND earlier.id < c.id)
            """
    }

    /// SQL: no run since the moment changed the row of `kind` known by `row` (SQL).
    private func unchanged(_ view: String, kind: String, row: String) -> String {
        guard page else { return "\(row) NOT IN (SELECT row_id FROM \(view)_first)" }
        return """
            NOT EXISTS (SELECT 1 FROM changes later WHERE later.source = \(source) AND later.row_kind = '\(kind)'
                        AND later.row_id = \(row) AND later.run_id IN (SELECT id FROM past_runs))
            """
    }

    /// SQL: when a run committed by the moment that logged a change of the row of `kind` known
    /// by `row` (SQL) last wrote it; NULL if none did.
    private func written(_ view: String, kind: String, row: String) -> String {
        guard page else { return "(SELECT at FROM \(view)_written WHERE row_id = \(row))" }
        return """
            (SELECT max(x.wrote_at) FROM changes w JOIN sync_runs x ON x.id = w.run_id
             WHERE w.source = \(source) AND w.row_kind = '\(kind)' AND w.row_id = \(row) AND x.finished_at <= \(moment))
            """
    }

    /// A row's seen_at `written` (SQL), moved back as `sources set` moved it (to a TTL and a second
    /// before) if a new URL or key unconfirmed the rows after it was written and by the moment.
    private func unconfirmed(_ written: String) -> String {
        """
        (SELECT CASE WHEN u.at IS NOT NULL AND w.at <= u.at
                     THEN min(w.at, strftime('%Y-%m-%dT%H:%M:%fZ', u.at, '-' || (s.ttl_s + 1) || ' seconds')) ELSE w.at END
         FROM (SELECT \(written) AS at) w, past_unconfirmed u)
        """
    }

    /// `seen_at, age_s, stale` measured at the moment; a row whose seen_at is unknown is stale.
    private var staleness: String { ViewDefinition.staleness(at: moment, unknownIsStale: true) }
}
