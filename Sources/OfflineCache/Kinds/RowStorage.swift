import FoundationEssentials

/// How a kind's rows are kept: its tables and views, how `list` reads them and how the reconcile
/// writes them. Kinds share a storage (json and csv sources both keep records).
package enum RowStorage: Sendable, CaseIterable {
    /// `accounts` and `transactions`.
    case account
    /// `jokes`.
    case jokes
    /// `records`: canonical JSON by key, with a view per source (`RecordView`).
    case records

    /// The registry of storages: the one place that switches on one.
    var definition: any StorageDefinition {
        switch self {
        case .account: AccountStorage()
        case .jokes: JokesStorage()
        case .records: RecordStorage()
        }
    }

    /// The table holding the rows `list` shows, counted by `status` and the removal guard.
    var rowTable: String { definition.rowTable }
    /// Every table holding a source's cached data.
    var cachedTables: [String] { definition.cachedTables }
    /// What its rows are called in messages.
    var rowNoun: String { definition.rowNoun }
    /// The views every cache has for it (see `DerivedViews`).
    var views: [ViewDefinition] { definition.views }
    var keepsRecords: Bool { definition.keepsRecords }
}

/// Which of a source's rows a storage reads, and as of when.
package struct RowSelection: Sendable, Equatable {
    package var source: String
    /// Only rows upstream has not confirmed within the TTL (at `asOf`, when given).
    package var staleOnly = false
    /// A past moment in the stored form (`Timestamp`): the rows as they were then, rebuilt from
    /// the change log (`PastRows`). The caller checks it against the source's history horizon.
    package var asOf: String?
    /// Only the rows of one search document, bound as `?3` (see `SearchDocuments.column`).
    package var document = false
    /// In the order of the storage's `pageKey` instead of `list`'s: keyset paging, stable while
    /// syncs land between pages...
    package var keyed = false
    /// ...from after the page key bound as `?4` (a range on the index, so any page is as quick
    /// as the first).
    package var afterKey = false
    /// More conditions on the rows, each bound from `?5` on (`RowFilter`), built from the
    /// storage's `filterColumn`s.
    package var conditions: [String] = []
    /// The most rows the read asks for (the caller binds it as `?2`); nil for all. As of a past
    /// moment, a page is read differently from a whole list (`PastRows`).
    package var limit: Int?

    package init(source: String, staleOnly: Bool = false, asOf: String? = nil, document: Bool = false) {
        self.source = source
        self.staleOnly = staleOnly
        self.asOf = asOf
        self.document = document
    }
}

/// What the engine knows about one storage: its tables and views, how `list` reads them (now
/// or in the past) and what `cache search` indexes. (How the reconcile writes them is
/// `Reconciler.apply`, by the payload's shape.)
protocol StorageDefinition: Sendable {
    var rowTable: String { get }
    var cachedTables: [String] { get }
    var rowNoun: String { get }
    var views: [ViewDefinition] { get }
    /// Whether its rows are records found by a key, described by a `RecordLayout`.
    var keepsRecords: Bool { get }
    /// The source's rows through its views, in `list`'s order: at most `selection.limit`. Runs inside the
    /// caller's read transaction.
    func rows(_ db: Connection, _ selection: RowSelection) throws -> CachedRows
    /// The same rows as one `SELECT` to step through (`?1` the source, `?2` its `limit`, -1 for none), with the
    /// view's columns; `asRecords` gives `key, record, seen_at, age_s, stale` where it means anything.
    func rowsQuery(_ db: Connection, _ selection: RowSelection, asRecords: Bool) throws -> String
    /// The columns `rowsQuery` gives without `asRecords`.
    func viewColumns(_ db: Connection, source: String) throws -> [String]
    /// Its rows as the change log names them: their `row_kind`, the SQL giving a row's
    /// `row_id`, and the SQL giving the JSON object of fields the log keeps of a row.
    var loggedAs: (kind: String, key: String, fields: String) { get }
    /// A row of its own that the log knows by the source's name (an account's header): its
    /// `row_kind`, table and fields as the log keeps them; nil for none.
    var loggedHeader: (kind: String, table: String, fields: String)? { get }
    /// The `WITH` tables that make its views read as they were at a moment (`PastRows.view`),
    /// after `PastRows.runs`.
    func past(_ rows: PastRows) -> String
    /// What `cache search` indexes of its rows.
    var search: SearchDocuments { get }
    /// The column that orders its rows for paging: unique within a source.
    var pageKey: String { get }
    /// The SQL of a view column as the rows query's conditions can use it; nil when there is none.
    func filterColumn(_ db: Connection, source: String, _ column: String) throws -> String?
    /// Gives every cached row of `source` its key under `key`, read from the row (a change of
    /// `--key`), inside the caller's transaction; storages without keys have nothing to do.
    func rekey(_ db: Connection, source: String, to key: [JSONPath]) throws
    /// Keeps the largest `incremental.cursorField` cached as the source's watermark, after an
    /// incremental sync lands (in its transaction).
    func recordWatermark(_ db: Connection, _ incremental: RecordLayout.Incremental, source: String, fullSync: Bool, at now: String) throws
}

extension StorageDefinition {
    var loggedHeader: (kind: String, table: String, fields: String)? { nil }
    func rekey(_ db: Connection, source: String, to key: [JSONPath]) throws {}
    func filterColumn(_ db: Connection, source: String, _ column: String) throws -> String? {
        try viewColumns(db, source: source).contains(column) ? RecordView.quoted(column) : nil
    }
    func recordWatermark(_ db: Connection, _ incremental: RecordLayout.Incremental, source: String, fullSync: Bool, at now: String) throws {}

    /// `SELECT columns` of `view`'s rows that `selection` picks (`?1` the source), in `orderBy`'s
    /// order, at most `?2`: from the view now, or as of a past moment from its two parts
    /// (`PastRows`), merged in that order. `with` goes first in the statement.
    func select(_ columns: String, from view: String, _ selection: RowSelection, orderBy: String) -> (with: String, body: String) {
        let orderBy = selection.keyed ? pageKey : orderBy
        let filter = (selection.staleOnly ? " AND stale = 1" : "") + (selection.document ? " AND \(search.column) = ?3" : "")
            + (selection.afterKey ? " AND \(pageKey) > ?4" : "") + selection.conditions.map { " AND (\($0))" }.joined()
        guard let moment = selection.asOf else {
            return ("", "SELECT \(columns) FROM \(view) WHERE source = ?1\(filter) ORDER BY \(orderBy) LIMIT ?2")
        }
        let parts = ["now", "log"].map { "SELECT * FROM \(view)_\($0) WHERE source = ?1\(filter)" }.joined(separator: " UNION ALL ")
        let rows = PastRows(source: selection.source, moment: moment, limit: selection.limit)
        return ("WITH \(rows.runs),\n\(past(rows)) ",
                "SELECT \(columns) FROM (\(parts) ORDER BY \(orderBy) LIMIT ?2) ORDER BY \(orderBy)")
    }
}
