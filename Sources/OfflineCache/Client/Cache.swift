import FoundationEssentials

/// An offline cache at a path: what an app needs in one place — sources, syncs, rows, status
/// and the loading states a screen shows. Sources are checked exactly as `cache sources add`
/// and `set` check them (the same code, the same messages), and the database is the one the `cache`
/// command reads, so a person can inspect what an app keeps.
///
/// ```swift
/// let cache = try Cache(path: "/var/lib/myapp/cache.sqlite3")
/// if try !cache.hasSource(named: "bank") {
///     try cache.addSource(name: "bank", kind: .account, url: "https://bank.example/api/account")
/// }
/// for await state in cache.states(of: "bank", limit: 50) {
///     switch state {
///     case .preview(let rows, let stale): show(rows, dimmed: stale)   // skeletons if rows is empty
///     case .refreshing: showSpinner()
///     case .fresh(let rows, _): show(rows)
///     case .failed(let error, let cached): show(cached, dimmed: true); showError(error)
///     }
/// }
/// ```
///
/// Each call opens the database for its own work and closes it after, so a `Cache` may be used
/// from any thread or task.
///
/// `Cache` is the library's one entry point: sources, syncs, rows (typed, stale-flagged, as of
/// a past moment), search, a row's log, the run history, status, loading states and an
/// observable model for a screen (`model(of:limit:)`).
public struct Cache: Sendable {
    /// The database file.
    public let path: String
    /// Opened with `readOnly: true`: nothing is written, created or migrated.
    public let readOnly: Bool
    /// Where token variables (`tokenEnv`) are read; the process's environment by default.
    public var environment: [String: String]
    /// How syncs reach upstream: libcurl by default; a test may hand in canned answers.
    public var fetcher: any Fetching
    /// The connection edits are queued on, kept between calls (see `KeptConnection`).
    let editor = KeptConnection()

    /// Opens the cache at `path`, creating the file (and its folder) when there is none, and
    /// migrating an older one; with `readOnly`, opens it as `cache --read-only` does, writing
    /// nothing at all (a read-only mount, a Litestream replica): reads work, and every call that
    /// would write throws `CacheError.readOnly`.
    ///
    /// - Throws: `CacheError`: `.cannotCreate`, `.notACache` for another program's file,
    ///   `.newerSchema` for a file from a newer version; with `readOnly`, `.noDatabase` when
    ///   there is no cache at `path`, `.readOnly` when it would need a migration first.
    public init(path: String, readOnly: Bool = false, environment: [String: String] = processEnvironment(),
                fetcher: any Fetching = Fetcher()) throws(CacheError) {
        self.path = path
        self.readOnly = readOnly
        self.environment = environment
        self.fetcher = fetcher
        _ = try readOnly ? CacheDatabase(path: path, access: .readOnly) : CacheDatabase(path: path, create: true)
    }

    /// A connection for one call's reads.
    func database() throws(CacheError) -> CacheDatabase {
        try CacheDatabase(path: path, access: readOnly ? .readOnly : .write)
    }

    /// Runs `body` with its errors as `CacheError`, the one type every call throws.
    func typed<T>(_ body: () throws -> T) throws(CacheError) -> T {
        do { return try body() } catch { throw CacheError(error) }
    }

    /// A connection for a call that writes: refused when opened read-only.
    func writable() throws(CacheError) -> CacheDatabase {
        if readOnly { throw .readOnly(path: path, reason: "it was opened with readOnly: true, and this call writes") }
        return try CacheDatabase(path: path, access: .write)
    }

    /// Whether a source of this name exists.
    public func hasSource(named name: String) throws(CacheError) -> Bool {
        try SourceStore(database()).all().contains { $0.name == name }
    }

    /// The sources, by name.
    public func sources() throws(CacheError) -> [Source] { try SourceStore(database()).all() }

    /// Adds a source, checked as `cache sources add` checks it: the same code, the same
    /// messages.
    ///
    /// ```swift
    /// try cache.addSource(name: "bank", kind: .account, url: "https://bank.example/api/account",
    ///                     [.ttl: "1h", .tokenEnv: "BANK_TOKEN"])
    /// ```
    ///
    /// - Parameters:
    ///   - name: letters, digits, `-`, `_` and `.`.
    ///   - kind: what the upstream serves, and how its rows are kept.
    ///   - url: `http`, `https` or `file`; credentials in it are refused (use `tokenEnv`).
    ///   - settings: the rest, as `sources add` takes them; a `json` or `csv` source needs a `key`.
    /// - Throws: `CacheError.invalidSource` with the command line's message (naming settings,
    ///   such as `.ttl`, where it names options), or `.sourceExists`.
    public func addSource(name: String, kind: Source.Kind, url: String, _ settings: Source.Settings = Source.Settings()) throws(CacheError) {
        var settings = settings
        settings[.url] = .text(url)
        let source: Source
        do throws(SourceRules.Problem) {
            source = try settings.newSource(name: name, kind: kind)
        } catch {
            throw .invalidSource(SourceOption.namingSettings(error.message))
        }
        try namingSettings { () throws(CacheError) in try SourceStore(writable()).add(source) }
    }

    /// Runs `body`, its refusals worded for a program: the settings it passes (`.ttl`), not the
    /// command line's flags (`--ttl`).
    private func namingSettings<T>(_ body: () throws(CacheError) -> T) throws(CacheError) -> T {
        do {
            return try body()
        } catch .invalidSource(let message) {
            throw .invalidSource(SourceOption.namingSettings(message))
        }
    }

    /// Changes a source's settings, checked as `cache sources set` checks them; the source as
    /// it now is. A changed URL or record path leaves the cached rows stale until a sync
    /// confirms them.
    ///
    /// ```swift
    /// try cache.setSource(named: "bank", [.ttl: "30m", .noToken: true])
    /// ```
    ///
    /// - Throws: `CacheError.invalidSource` with the command line's message (naming settings
    ///   where it names options), or `.noSuchSource`.
    @discardableResult
    public func setSource(named name: String, _ settings: Source.Settings) throws(CacheError) -> Source {
        do throws(SourceRules.Problem) {
            try settings.checkedAlone()
        } catch {
            throw .invalidSource(SourceOption.namingSettings(error.message))
        }
        return try namingSettings { () throws(CacheError) in try SourceStore(try writable()).update(name, by: settings).after }
    }

    /// Removes a source with its rows and history.
    public func removeSource(named name: String) throws(CacheError) {
        try SourceStore(writable()).remove(name)
    }

    /// The sources (all, or those named) as a sources file, as `cache sources export` writes
    /// it: one JSON document, sorted and stable, for version control and `apply(sourcesFile:)`.
    /// Only the names of environment variables are written, never their values.
    public func exportSources(_ names: [String] = []) throws(CacheError) -> String {
        let all = try sources()
        if let missing = names.first(where: { name in !all.contains { $0.name == name } }) { throw .noSuchSource(missing) }
        return SourcesFile.export(names.isEmpty ? all : all.filter { names.contains($0.name) })
    }

    /// Makes the sources match a sources file, as `cache apply` does: a source only in the file
    /// is added, one whose settings differ is changed (rows, history and run numbers kept), one
    /// only in the cache is kept unless `prune`. The whole file is checked first, and every
    /// change is made in one transaction; with `plan`, nothing is changed.
    ///
    /// - Returns: what happens to each source, by name.
    /// - Throws: `CacheError.invalidSource` with the command line's message for a file that
    ///   cannot be applied.
    @discardableResult
    public func apply(sourcesFile json: String, prune: Bool = false, plan: Bool = false) throws(CacheError) -> [SourceChange] {
        let wanted: [Source]
        do throws(SourcesFile.Refusal) {
            wanted = try SourcesFile.sources(in: Data(json.utf8), named: "the sources file")
        } catch {
            throw .invalidSource(SourceOption.namingSettings(error.description))
        }
        let database = try plan ? database() : writable()
        let store = SourceStore(database)
        do {
            var steps = try SourcesFile.plan(wanted, existing: try store.all(), prune: prune) { try store.belongings(of: $0) }
            if !plan { steps = try store.apply(steps) }
            return steps.map { SourceChange(source: $0.source, action: $0.action.rawValue, changes: $0.changes.map { "\($0.option) \($0.before) → \($0.after)" }) }
        } catch CacheError.invalidSource(let message) {
            throw .invalidSource(SourceOption.namingSettings(message))
        } catch let error as CacheError {
            throw error
        } catch let error as SourcesFile.Refusal {
            throw .invalidSource(SourceOption.namingSettings(error.description))
        } catch {
            throw .invalidSource("\(error)")
        }
    }

    /// Syncs one source now, as `cache sync NAME` does, giving up after `timeout` (every
    /// attempt and the waits between them): a hung upstream ends in a report whose `failure`
    /// says it timed out, within the timeout, and the cached rows stay as they were.
    public func sync(_ name: String, timeout: Duration = .seconds(30)) throws(CacheError) -> SyncReport {
        try SyncEngine(database: writable(), fetcher: fetcher, environment: environment).sync(name, options: options(timeout))
    }

    /// Syncs every source, one after another, each within `timeout`.
    public func syncAll(timeout: Duration = .seconds(30)) throws(CacheError) -> [SyncReport] {
        let engine = SyncEngine(database: try writable(), fetcher: fetcher, environment: environment)
        return try sources().map { engine.sync($0, options: options(timeout)) }
    }

    private func options(_ timeout: Duration) -> SyncEngine.Options {
        SyncEngine.Options(timeout: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
    }

    /// The cached rows of a source at once, without the network, each as its JSON (a record as
    /// upstream sent it; a joke's or a transaction's fields): at most `limit` of them, only the
    /// stale ones with `staleOnly`, and with `asOf` as they were then (from the change log;
    /// `CacheError.beforeHistory` when it does not go back that far). For typed rows, see
    /// `rows(of:as:limit:staleOnly:asOf:)`.
    public func rows(of name: String, limit: Int? = nil, staleOnly: Bool = false, asOf: Date? = nil) throws(CacheError) -> [Cached<String>] {
        try typed {
            try rows(of: name, as: String.self, limit: limit, staleOnly: staleOnly, asOf: asOf).rows
        }
    }

    /// An account source's holder and balance, as cached (nil before its first sync, and for
    /// other kinds).
    ///
    /// ```swift
    /// if let header = try cache.account(of: "bank") { print(header.value.name, header.value.balance, header.isStale) }
    /// ```
    public func account(of name: String) throws(CacheError) -> Cached<Source.Kind.Account>? {
        try typed {
            let database = try database()
            return try CacheReader(database).accountHeader(of: SourceStore(database).named(name))
        }
    }

    /// Every source's state, as `cache status` shows it.
    public func status() throws(CacheError) -> [Source.Status] { try typed { try CacheReader(database()).status() } }

    /// The loading states of a source: its preview at once (at most `limit` rows), then, when it
    /// is stale, `refreshing` and the fresh rows or a failure. A fresh source yields its
    /// preview alone; the work runs on a thread of its own (a sync blocks on the network), and
    /// the stream ends once that thread has.
    public func states(of name: String, limit: Int? = nil) -> AsyncStream<LoadingState> {
        loadingStates(readsRows: true).states(of: name, limit: limit)
    }

    func loadingStates(readsRows: Bool) -> LoadingStates {
        LoadingStates(databasePath: path, fetcher: fetcher, environment: environment, readOnly: readOnly, readsRows: readsRows)
    }

    /// The stored form of `asOf`, checked against what the change log still answers for.
    static func moment(_ asOf: Date?, _ source: Source, _ database: CacheDatabase) throws -> String? {
        guard let asOf else { return nil }
        // A moment after now (or no moment at all: not finite) reads as now.
        let now = Date()
        let moment = Timestamp.format(asOf.timeIntervalSince1970.isFinite && asOf < now ? asOf : now)
        try HistoryStore(database).checkAnswerable(source: source.name, at: moment)
        return moment
    }
}

extension Cache {
    /// What `Cache.apply(sourcesFile:)` does, or would do, to one source.
    public struct SourceChange: Sendable, Equatable {
        /// The source's name.
        public var source: String
        /// `create`, `change`, `unchanged`, `keep` (not in the file) or `remove` (with `prune`).
        public var action: String
        /// Each setting that changes, as `ttl 15m → 1h`.
        public var changes: [String]
    }
}
