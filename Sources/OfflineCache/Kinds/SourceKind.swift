/// The kinds of upstream this tool understands: the two it was made for, and any JSON API
/// described by a `RecordLayout`. This is the registry: the one place that switches on the
/// kind. Everything else asks the kind's definition (`KindDefinition`), which lives in the
/// kind's own folder, so a new kind is a new case here and a type the compiler holds to the
/// protocol.
public enum SourceKind: String, Sendable, CaseIterable {
    case account, jokes, json

    var definition: any KindDefinition {
        switch self {
        case .account: AccountKind()
        case .jokes: JokesKind()
        case .json: RecordsKind()
        }
    }

    /// How its responses are reconciled unless the source says otherwise.
    public var defaultMode: SyncMode { definition.defaultMode }

    /// What its rows are called in messages.
    public var rowNoun: String { definition.rowNoun }

    /// The table holding the rows `list` shows, counted by `status` and the removal guard.
    var rowTable: String { definition.rowTable }

    /// Every table holding a source's cached data.
    var cachedTables: [String] { definition.cachedTables }
}

/// What the engine knows about one kind of source.
protocol KindDefinition: Sendable {
    var defaultMode: SyncMode { get }
    var rowNoun: String { get }
    var rowTable: String { get }
    var cachedTables: [String] { get }
    /// The views every cache has for this kind (see `DerivedViews`).
    var views: [ViewDefinition] { get }
}
