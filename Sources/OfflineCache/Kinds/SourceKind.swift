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
        case .ndjson: NDJSONKind()
        }
    }

    /// What it is, for `--kind`'s help: `(Official Joke API)`.
    package var summary: String { definition.summary }

    /// What its requests ask for (`Accept`).
    package var accept: String { definition.accept }

    /// How its responses are reconciled unless the source says otherwise.
    package var defaultMode: SyncMode { definition.defaultMode }

    /// Where and how its rows are kept.
    package var storage: RowStorage { definition.storage }

    /// What its rows are called in messages.
    public var rowNoun: String { storage.rowNoun }

    /// Whether its rows are records found by a key (json, csv): it takes a `RecordLayout`.
    package var keepsRecords: Bool { storage.keepsRecords }

    /// Whether the kind keeps a header above its rows (an account's holder and balance).
    package var hasHeader: Bool { storage.definition.loggedHeader != nil }

    /// The options a source of this kind takes: those of every kind, then its own (`--key`).
    package var options: [SourceOption] { SourceOption.common + definition.options }

    /// Where a record's key fields are in the record as the cache keeps it: JSON paths for json
    /// sources; for csv sources each name is one column, dots and all (`station.id`).
    func keyPaths(_ key: [JSONPath]) -> [JSONPath] { definition.keyPaths(key) }

    /// The source `settings` describe, whole: every option read in the order declared, then
    /// checked together. `new` names the options given now, checked as the command line checks
    /// them; the others were stored by this cache.
    package func source(named name: String, _ settings: SourceSettings, new: Set<String>) throws(SourceRules.Problem) -> Source {
        var source = Source(name: name, kind: self, url: URL(string: "about:blank")!,
                            layout: storage.keepsRecords ? RecordLayout(key: []) : nil)
        for option in options where option.clears.isEmpty {
            guard let values = settings.given[option.name] else { continue }
            try option.apply(&source, SourceOption.Given(values: values, isNew: new.contains(option.name)))
        }
        guard settings[.url] != nil else {
            throw SourceRules.Problem(message: "A source needs '--url <url>': where its data is fetched from.")
        }
        if let problem = definition.problem(source, settings) ?? SourceOption.commonProblem(source, settings) { throw problem }
        return source
    }

    /// `settings` after a change `given` to `before`'s: the options given replace theirs, a
    /// switch (`no-token`) clears its own, and the kind takes along what goes with a change.
    package func changed(_ settings: SourceSettings, by given: SourceSettings, before: Source) -> SourceSettings {
        var changed = settings
        for option in options where given[option] != nil {
            for cleared in option.clears { changed.given[cleared] = nil }
        }
        for option in options where given[option] != nil && option.clears.isEmpty { changed[option] = given[option] }
        definition.change(&changed, given: given, before: before)
        return changed
    }

    /// Every option of `source` away from its default, as it takes it on the command line.
    package func settings(of source: Source) -> SourceSettings {
        var settings = SourceSettings()
        for option in options { settings.given[option.name] = option.text(source) }
        return settings
    }
}

/// What the engine knows about one kind of source.
protocol KindDefinition: Sendable {
    /// What it is, in a few words in brackets, for help.
    var summary: String { get }
    /// The media types its requests ask for, as `Accept` sends them.
    var accept: String { get }
    var defaultMode: SyncMode { get }
    var storage: RowStorage { get }
    /// Its own options, beside those of every kind (`SourceOption.common`).
    var options: [SourceOption] { get }
    /// Reads and checks one sync's bodies (one per page; each emptied once read, so memory holds
    /// one copy of the data) into what the reconcile writes. Runs before the write transaction,
    /// and stops at `deadline`.
    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload
    func keyPaths(_ key: [JSONPath]) -> [JSONPath]
    /// Why its options, read into `source`, do not go together, or nil.
    func problem(_ source: Source, _ settings: SourceSettings) -> SourceRules.Problem?
    /// What else a change `given` changes in `settings` (a new paging style drops the old one's options).
    func change(_ settings: inout SourceSettings, given: SourceSettings, before: Source)
}

extension KindDefinition {
    var accept: String { "application/json" }
    func keyPaths(_ key: [JSONPath]) -> [JSONPath] { key }
    func problem(_ source: Source, _ settings: SourceSettings) -> SourceRules.Problem? { nil }
    func change(_ settings: inout SourceSettings, given: SourceSettings, before: Source) {}
}
