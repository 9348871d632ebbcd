import FoundationEssentials

/// The kinds of upstream this tool understands: the two it was made for, any JSON API described
/// by a `RecordLayout`, and CSV tables. This is the registry: the one place that switches on the
/// kind. Everything else asks the kind's definition (`KindDefinition`), which lives in the kind's
/// own folder, so a new kind is a case here and a type the compiler holds to the protocol.
public enum SourceKind: String, Sendable, CaseIterable {
    case account, jokes, json, csv

    var definition: any KindDefinition {
        switch self {
        case .account: AccountKind()
        case .jokes: JokesKind()
        case .json: JSONKind()
        case .csv: CSVKind()
        }
    }

    /// How its responses are reconciled unless the source says otherwise.
    public var defaultMode: SyncMode { definition.defaultMode }

    /// Where and how its rows are kept.
    package var storage: RowStorage { definition.storage }

    /// What its rows are called in messages.
    public var rowNoun: String { storage.rowNoun }

    /// The options of `sources add` and `sources set` that only this kind takes, such as `--key`.
    package var layoutOptions: [String] { definition.layoutOptions }

    /// Where a record's key fields are in the record as the cache keeps it: JSON paths for json
    /// sources; for csv sources each name is one column, dots and all (`station.id`).
    func keyPaths(_ key: [JSONPath]) -> [JSONPath] { definition.keyPaths(key) }

    /// The kinds that take `option`, for messages ("'--rows' is for json sources").
    package static func taking(_ option: String) -> [SourceKind] {
        allCases.filter { $0.layoutOptions.contains(option) }
    }
}

/// What the engine knows about one kind of source.
protocol KindDefinition: Sendable {
    var defaultMode: SyncMode { get }
    var storage: RowStorage { get }
    var layoutOptions: [String] { get }
    /// Reads and checks one sync's bodies (one per page; each emptied once read, so memory holds
    /// one copy of the data) into what the reconcile writes. Runs before the write transaction,
    /// and stops at `deadline`.
    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload
    func keyPaths(_ key: [JSONPath]) -> [JSONPath]
}

extension KindDefinition {
    func keyPaths(_ key: [JSONPath]) -> [JSONPath] { key }
}

/// How a kind's rows are kept: its tables and views, how `list` reads them and how the reconcile
/// writes them. Kinds share a storage (json and csv sources both keep records).
package enum RowStorage: Sendable, CaseIterable {
    /// `accounts` and `transactions`.
    case account
    /// `jokes`.
    case jokes
    /// `records`: canonical JSON by key, with a view per source (`RecordView`).
    case records

    /// The table holding the rows `list` shows, counted by `status` and the removal guard.
    var rowTable: String {
        switch self {
        case .account: "transactions"
        case .jokes: "jokes"
        case .records: "records"
        }
    }

    /// Every table holding a source's cached data.
    var cachedTables: [String] {
        switch self {
        case .account: ["accounts", "transactions"]
        case .jokes: ["jokes"]
        case .records: ["records"]
        }
    }

    /// What its rows are called in messages.
    var rowNoun: String {
        switch self {
        case .account: "transactions"
        case .jokes: "jokes"
        case .records: "records"
        }
    }

    /// The views every cache has for it (see `DerivedViews`).
    var views: [ViewDefinition] {
        switch self {
        case .account: AccountKind.views
        case .jokes: JokesKind.views
        case .records: RecordTables.views
        }
    }
}
