import FoundationEssentials

/// The registry: the one place that switches on a source's kind (declared with the model, in
/// `Model/Source.swift`). Everything else asks the kind's definition (`KindDefinition`), which
/// lives in the kind's own folder, so a new kind is a case there, a line here and a type the
/// compiler holds to the protocol.
extension SourceKind {
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

    /// Whether its rows are records found by a key (json, csv): it takes a `RecordLayout`.
    package var keepsRecords: Bool { storage.keepsRecords }

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
