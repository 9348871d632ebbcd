import FoundationEssentials
import Glibc
import Synchronization

/// The states of one source as an app shows them: preview, then content or a clear failure.
///
/// ```swift
/// for await state in cache.states(of: "bank", limit: 50) {
///     if case .fresh(let rows, let changes) = state { print(rows.count, changes.inserted.count) }
/// }
/// ```
public enum LoadingState: Sendable {
    /// The cached rows at once, with the source's staleness. Empty rows mean "show skeletons".
    case preview(CachedRows, stale: Bool)
    /// A refresh is under way (this process's, or another's that was already running).
    case refreshing
    /// The refresh landed: the reconciled rows and what changed since the preview.
    case fresh(CachedRows, changes: RowChanges)
    /// The refresh failed; the cached rows are still there, still served.
    case failed(RefreshError, cached: CachedRows)
}

/// Why a refresh failed, as the sync that ran it recorded it.
///
/// ```swift
/// for await state in cache.states(of: "bank") {
///     if case .failed(let error, let cached) = state { print("showing \(cached.count) cached rows: \(error.message)") }
/// }
/// ```
public struct RefreshError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// The typed failure, when this process ran the sync itself.
    public var failure: SyncReport.Failure?
    public var description: String { message }
}

/// The library's entry point for apps: reads that answer from the cache at once and a
/// refresh behind them.
///
/// ```swift
/// let cache = CacheClient(databasePath: path)
/// for await state in cache.states(of: "bank") {
///     switch state {
///     case .preview(let rows, let stale): show(rows, dimmed: stale)   // skeletons if rows is empty
///     case .refreshing: showSpinner()
///     case .fresh(let rows, let changes): show(rows, highlighting: changes)
///     case .failed(let error, let cached): show(cached, dimmed: true); showError(error)
///     }
/// }
/// ```
public struct CacheClient: Sendable {
    public var databasePath: String
    public var fetcher: any Fetching
    public var environment: [String: String]
    /// How often to look for the outcome of a refresh another process is running.
    public var pollInterval: Double = 0.1

    public init(databasePath: String, fetcher: any Fetching = Fetcher(),
                environment: [String: String] = processEnvironment()) {
        self.databasePath = databasePath
        self.fetcher = fetcher
        self.environment = environment
    }

    /// Preview first, then — if the source is stale — refreshing, then fresh or failed.
    /// A fresh source yields its preview alone. The work runs on its own thread, since a
    /// sync blocks on the network.
    ///
    /// - Parameter limit: at most this many rows in each state: what a screen shows, so a preview
    ///   of a large source reads only that much.
    public func states(of name: String, refresh: Bool = true, limit: Int? = nil) -> AsyncStream<LoadingState> {
        AsyncStream { continuation in
            let cancelled = Mutex(false)
            continuation.onTermination = { _ in cancelled.withLock { $0 = true } }
            // The stream ends only once the worker thread has ended (see `runThenJoin`): an app
            // that exits after its last state cannot race the worker's clean-up.
            runThenJoin({ [self] in
                run(name, refresh: refresh, limit: limit, cancelled: { cancelled.withLock { $0 } }) { continuation.yield($0) }
            }, finished: { continuation.finish() })
        }
    }

    private func run(_ name: String, refresh: Bool, limit: Int?, cancelled: () -> Bool, yield: (LoadingState) -> Void) {
        var preview = CachedRows.jokes([])
        do {
            let database = try CacheDatabase(path: databasePath, create: false)
            let source = try SourceStore(database).named(name)
            let reader = CacheReader(database)
            let engine = SyncEngine(database: database, fetcher: fetcher, environment: environment)
            let watcher = try RefreshWatcher(database, source: name)
            preview = try reader.rows(of: source, limit: limit)
            let stale = try reader.isStale(source)
            yield(.preview(preview, stale: stale))
            guard stale, refresh, !cancelled() else { return }
            if let variable = source.missingToken(in: environment) {
                // Nothing is started or recorded: without its token the refresh could only fail.
                yield(.failed(RefreshError(message: "not refreshing: the token variable \(variable) is not set"), cached: preview))
                return
            }

            yield(.refreshing)
            let report = engine.sync(source)
            var error: RefreshError?
            if report.outcome == .skipped {
                // Another process's refresh is in flight: wait for it to land.
                while !cancelled() {
                    if let landing = try watcher.landing() {
                        if landing.outcome == .failed || landing.outcome == .held { error = RefreshError(message: landing.error ?? "refresh failed") }
                        break
                    }
                    if try !watcher.refreshInFlight() { break }
                    sleepSeconds(pollInterval)
                }
            } else if let failure = report.failure {
                error = RefreshError(message: report.errorText ?? failure.description, failure: failure)
            }
            let rows = try reader.rows(of: source, limit: limit)
            if let error {
                yield(.failed(error, cached: rows))
            } else {
                yield(.fresh(rows, changes: RowChanges.between(preview, rows)))
            }
        } catch {
            yield(.failed(RefreshError(message: "\(error)"), cached: preview))
        }
    }
}
