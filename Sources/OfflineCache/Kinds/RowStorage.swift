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

/// What the engine knows about one storage: its tables and views, and how `list` reads them.
/// (How the reconcile writes them is `Reconciler.apply`, by the payload's shape.)
protocol StorageDefinition: Sendable {
    var rowTable: String { get }
    var cachedTables: [String] { get }
    var rowNoun: String { get }
    var views: [ViewDefinition] { get }
    /// Whether its rows are records found by a key, described by a `RecordLayout`.
    var keepsRecords: Bool { get }
    /// The source's rows through its views, in `list`'s order: at most `limit`, only stale ones
    /// with `staleOnly`. Runs inside the caller's read transaction.
    func rows(_ db: Connection, source: String, staleOnly: Bool, limit: Int?) throws -> CachedRows
    /// The same rows as one `SELECT` to step through (`?1` the source, `?2` the limit), with the
    /// view's columns; `asRecords` gives `key, record, seen_at, age_s, stale` where it means anything.
    func rowsQuery(_ db: Connection, source: String, staleOnly: Bool, asRecords: Bool) throws -> String
    /// The columns `rowsQuery` gives without `asRecords`.
    func viewColumns(_ db: Connection, source: String) throws -> [String]
}
