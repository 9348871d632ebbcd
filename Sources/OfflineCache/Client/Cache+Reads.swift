import FoundationEssentials

/// What `cache` reads besides rows — typed rows, search, a row's log, the run history — for
/// an app, without SQL and without the command line.
extension Cache {
    /// The cached rows of a source, each decoded into `Value` from its JSON: a json, csv or
    /// ndjson record as upstream sent it, a joke as `Source.Kind.Joke`, a transaction as `Source.Kind.AccountTransaction`; as
    /// `String`, each row's JSON as text. A row that does not decode is left out and named in
    /// `failures`, by key, with the field and what was found there.
    ///
    /// ```swift
    /// struct Repo: Decodable { var id: Int; var full_name: String }
    /// let repos = try cache.rows(of: "repos", as: Repo.self, limit: 20)
    /// ```
    ///
    /// - Parameters:
    ///   - name: the source.
    ///   - type: the app's type each row decodes into.
    ///   - limit: at most this many rows (decoded or not).
    ///   - staleOnly: only rows upstream has not confirmed within the TTL.
    ///   - asOf: the rows as they were then, from the change log.
    public func rows<Value: Decodable>(of name: String, as type: Value.Type, limit: Int? = nil, staleOnly: Bool = false,
                                       asOf: Date? = nil) throws(CacheError) -> DecodedRows<Value> {
        try typed {
            let database = try database()
            let source = try SourceStore(database).named(name)
            let moment = try Self.moment(asOf, source, database)
            return try CacheReader(database).decoded(source, as: type, staleOnly: staleOnly, limit: limit, asOf: moment)
        }
    }

    /// The cached rows whose text matches `query`, best first, offline, as `cache search` finds
    /// them (SQLite FTS5's syntax: words, "phrases", prefix*, AND, OR, NOT; case and accents do
    /// not matter), each decoded into `Value` with its snippet. For an account, a match is a
    /// vendor, and its transactions are the rows.
    ///
    /// The source's first search builds its index (its syncs keep it in step from then on).
    ///
    /// - Throws: `CacheError.invalidSearch` when search is off for the source or the query is not one FTS5
    ///   can read; `CacheError.readOnly` when the index is not built yet and the cache was
    ///   opened read-only (`cache reindex NAME` builds it where the cache is written).
    public func search<Value: Decodable>(_ name: String, for query: String, as type: Value.Type, limit: Int = 20) throws(CacheError) -> SearchResults<Value> {
        try typed {
            let database = try database()
            let source = try SourceStore(database).named(name)
            guard source.searchable else { throw CacheError.invalidSearch("search is off for '\(name)' (its `search` setting)") }
            // The first search of a source builds its index; its syncs keep it in step from then on.
            _ = try SearchIndex.buildForFirstSearch(source, path: path, readOnly: readOnly, reading: database)
            let reader = CacheReader(database)
            let hits: [SearchHit]
            do {
                hits = try reader.search(source, query: query, limit: limit)
            } catch let error as SearchQueryError {
                throw CacheError.invalidSearch("the query '\(query)' is not one FTS5 can read (\(error.message))")
            }
            var results = SearchResults<Value>(matches: [], failures: [])
            let decoder = JSONDecoder()
            for hit in hits where results.matches.count + results.failures.count < limit {
                try reader.forEachRow(of: source, document: hit.document, limit: limit - results.matches.count - results.failures.count,
                                      asRecords: true) { columns, row in
                    switch CachedRowText(columns, row).decoded(as: type, decoder) {
                    case .success(let cached): results.matches.append(SearchMatch(row: cached, snippet: hit.snippet, rank: hit.rank))
                    case .failure(let failure): results.failures.append(failure)
                    }
                }
            }
            return results
        }
    }

    /// One row's versions, newest first, as `cache log` shows them: what each run did to it,
    /// its fields before and after; when nothing is logged since the history's start, the row
    /// as it is now (`current`).
    ///
    /// - Parameters:
    ///   - name: the source.
    ///   - key: a record's key, a joke's id, a transaction's id (or the source's name for an
    ///     account's header).
    /// - Throws: `CacheError.noSuchRow` when the source has neither cached nor logged the key.
    public func log(of name: String, key: String) throws(CacheError) -> [LogEntry] {
        try typed {
            let database = try database()
            return try HistoryStore(database).log(of: SourceStore(database).named(name), key: key).map { LogEntry($0, key: key) }
        }
    }

    /// What syncs changed in a source, oldest first, as `cache diff` shows it: the newest run
    /// that changed anything, one run (`run`), or every run in the last `since`.
    public func diff(of name: String, run: Int? = nil, since: Duration? = nil) throws(CacheError) -> [LogEntry] {
        try typed {
            let database = try database()
            _ = try SourceStore(database).named(name)
            let selection: HistoryStore.Selection = run.map { .run($0) } ?? since.map { .since(seconds: Int($0.components.seconds)) } ?? .latest
            if let run, try !HistoryStore(database).hasRun(run, source: name) { throw CacheError.noSuchRun(run, source: name) }
            return try HistoryStore(database).changes(source: name, selection).map(LogEntry.init)
        }
    }

    /// The sync runs, newest first (of one source, or of all), as `cache history` lists them.
    public func history(of name: String? = nil, limit: Int? = nil) throws(CacheError) -> [SyncRun] {
        try typed {
            let database = try database()
            if let name { _ = try SourceStore(database).named(name) }
            return try HistoryStore(database).runs(source: name, limit: limit).map(SyncRun.init)
        }
    }
}

extension Cache {
    /// A search's matches, best first, and the matching rows that did not decode.
    public struct SearchResults<Value> {
        /// The rows that matched and decoded, best first.
        public var matches: [SearchMatch<Value>]
        /// The rows that matched but did not decode, by key.
        public var failures: [UndecodableRow]
    }
}

extension Cache.SearchResults: Sendable where Value: Sendable {}

extension Cache {
    /// One row a search found, with the text around the match (`[` and `]` mark it) and its rank
    /// (FTS5's bm25: lower is better).
    public struct SearchMatch<Value> {
        /// The row that matched.
        public var row: Cached<Value>
        /// The text around the match, the matched words in `[` and `]`.
        public var snippet: String
        /// FTS5's bm25 rank: lower is better.
        public var rank: Double
    }
}

extension Cache.SearchMatch: Sendable where Value: Sendable {}

extension Cache {
    /// One version of a row: what a run did to it, and its fields before and after (JSON objects).
    public struct LogEntry: Sendable, Equatable {
        /// What a run did to the row.
        public enum Change: String, Sendable {
            case inserted, updated, removed
            /// It came with a sync into an empty cache (loads are logged once, not row by row).
            case loaded
            /// Nothing is logged for it since the history's start: the row as it is now.
            case current
        }

        /// What happened to the row.
        public var change: Change
        /// The row's key (for a load in `diff`, empty: it stands for the rows it loaded).
        public var key: String
        /// For a load in `diff`: how many rows it brought.
        public var loadedRows: Int?
        /// The run that made the change (nil for `current`).
        public var run: Int?
        /// When that run finished (nil for `current`).
        public var at: Date?
        /// Its fields before, as a JSON object (nil for an insert).
        public var before: String?
        /// Its fields after, as a JSON object (nil for a removal).
        public var after: String?

        init(_ version: RowVersion, key: String) {
            change = Change(rawValue: version.change) ?? .updated
            self.key = key
            let current = change == .current
            run = current ? nil : version.runID
            at = current ? nil : Timestamp.parse(version.at)
            before = version.before
            after = version.after
        }

        init(_ record: ChangeRecord) {
            change = Change(rawValue: record.change) ?? .updated
            key = record.rows == nil ? record.rowID : ""
            loadedRows = record.rows
            run = record.runID
            at = Timestamp.parse(record.at)
            before = record.before
            after = record.after
        }
    }
}

extension Cache {
    /// One sync run, as `cache history` lists it.
    public struct SyncRun: Sendable, Equatable {
        /// Its number: `cache diff NAME --run N`, an event's id.
        public var id: Int
        /// The source synced.
        public var source: String
        /// When the run started.
        public var startedAt: Date
        /// When it ended.
        public var finishedAt: Date
        /// `updated`, `unchanged`, `failed`, `held` or `skipped`.
        public var outcome: String
        /// Rows inserted, updated and removed.
        public var counts: SyncReport.Counts
        /// Upstream's last HTTP status.
        public var httpStatus: Int?
        /// Body bytes received.
        public var bytes: Int?
        /// How long it took.
        public var duration: Duration
        /// Why it failed, when it did.
        public var error: String?

        init(_ run: SyncRunRecord) {
            id = run.id
            source = run.source
            startedAt = Timestamp.parse(run.startedAt) ?? Date(timeIntervalSince1970: 0)
            finishedAt = Timestamp.parse(run.finishedAt) ?? Date(timeIntervalSince1970: 0)
            outcome = run.outcome
            counts = run.counts
            httpStatus = run.httpStatus
            bytes = run.bytes
            duration = .milliseconds(run.durationMs)
            error = run.error
        }
    }
}
