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
public struct Cache: Sendable {
    /// The database file.
    public let path: String
    /// Where token variables (`tokenEnv`) are read; the process's environment by default.
    public var environment: [String: String]

    /// Opens the cache at `path`, creating the file (and its folder) when there is none, and
    /// migrating an older one.
    ///
    /// - Throws: `CacheError`: `.cannotCreate`, `.notACache` for another program's file,
    ///   `.newerSchema` for a file from a newer version.
    public init(path: String, environment: [String: String] = processEnvironment()) throws(CacheError) {
        self.path = path
        self.environment = environment
        _ = try CacheDatabase(path: path, create: true)
    }

    private func database() throws(CacheError) -> CacheDatabase { try CacheDatabase(path: path, access: .write) }

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
    ///   - url: `http`, `https` or `file`; credentials in it are refused (use `tokenEnv`).
    ///   - settings: the rest, as `sources add` takes them; a `json` or `csv` source needs a `key`.
    /// - Throws: `CacheError.invalidSource` with the command line's message, or
    ///   `.sourceExists`.
    public func addSource(name: String, kind: SourceKind, url: String, _ settings: SourceSettings = SourceSettings()) throws(CacheError) {
        var settings = settings
        settings[.url] = .text(url)
        let source: Source
        do throws(SourceRules.Problem) {
            source = try settings.newSource(name: name, kind: kind)
        } catch {
            throw .invalidSource(error.message)
        }
        try SourceStore(database()).add(source)
    }

    /// Changes a source's settings, checked as `cache sources set` checks them; the source as
    /// it now is. A changed URL or record path leaves the cached rows stale until a sync
    /// confirms them.
    ///
    /// ```swift
    /// try cache.setSource(named: "bank", [.ttl: "30m", .noToken: true])
    /// ```
    ///
    /// - Throws: `CacheError.invalidSource` with the command line's message, or `.noSuchSource`.
    @discardableResult
    public func setSource(named name: String, _ settings: SourceSettings) throws(CacheError) -> Source {
        do throws(SourceRules.Problem) {
            try settings.checkedAlone()
        } catch {
            throw .invalidSource(error.message)
        }
        return try SourceStore(try database()).update(name, by: settings).after
    }

    /// Removes a source with its rows and history.
    public func removeSource(named name: String) throws(CacheError) {
        try SourceStore(database()).remove(name)
    }

    /// Syncs one source now, as `cache sync NAME` does.
    public func sync(_ name: String) throws(CacheError) -> SyncReport {
        try SyncEngine(database: database(), environment: environment).sync(name)
    }

    /// Syncs every source, one after another.
    public func syncAll() throws(CacheError) -> [SyncReport] {
        let engine = SyncEngine(database: try database(), environment: environment)
        return try sources().map { engine.sync($0) }
    }

    /// The cached rows of a source at once, without the network: at most `limit` of them.
    public func rows(of name: String, limit: Int? = nil) throws -> CachedRows {
        let database = try database()
        return try CacheReader(database).rows(of: SourceStore(database).named(name), limit: limit)
    }

    /// Every source's state, as `cache status` shows it.
    public func status() throws -> [SourceStatus] { try CacheReader(database()).status() }

    /// The loading states of a source: its preview at once (at most `limit` rows), then, when it
    /// is stale, `refreshing` and the fresh rows or a failure. See `CacheClient.states(of:)`.
    public func states(of name: String, limit: Int? = nil) -> AsyncStream<LoadingState> {
        CacheClient(databasePath: path, environment: environment).states(of: name, limit: limit)
    }
}
