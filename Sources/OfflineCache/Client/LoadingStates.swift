import FoundationEssentials
import Synchronization

extension Cache {
    /// The states of one source as an app shows them: preview, then content or a clear failure.
    ///
    /// ```swift
    /// for await state in cache.states(of: "bank", limit: 50) {
    ///     if case .fresh(let rows, let changes) = state { print(rows.count, changes.inserted.count) }
    /// }
    /// ```
    public enum LoadingState: Sendable {
        /// The cached rows at once, with the source's staleness. Empty rows mean "show skeletons".
        case preview([Cached<String>], stale: Bool)
        /// A refresh is under way (this process's, or another's that was already running).
        case refreshing
        /// The refresh landed: the reconciled rows and what changed since the preview.
        case fresh([Cached<String>], changes: RowChanges)
        /// The refresh failed, or was not started (the source is backing off after failures, or its
        /// token variable is not set: the message says which); the cached rows are still served.
        case failed(CacheError, cached: [Cached<String>])
    }
}

/// The stream of one source's loading states, under `Cache.states(of:limit:)` and the model.
struct LoadingStates: Sendable {
    var databasePath: String
    var fetcher: any Fetching
    var environment: [String: String]
    /// How often to look for the outcome of a refresh another process is running.
    var pollInterval = 0.1
    var readOnly = false
    /// Whether each state carries the rows, untyped. A model reads its own, typed, from the
    /// same states: for it the stream reads none (each state's rows are then empty).
    var readsRows = true

    /// Preview first, then — if the source is stale — refreshing, then fresh or failed.
    /// A fresh source yields its preview alone. The work runs on its own thread, since a
    /// sync blocks on the network.
    ///
    /// - Parameters:
    ///   - name: the source.
    ///   - refresh: whether a stale source is refreshed (false: its preview alone).
    ///   - limit: at most this many rows in each state: what a screen shows, so a preview of a
    ///     large source reads only that much.
    func states(of name: String, refresh: Bool = true, limit: Int? = nil) -> AsyncStream<Cache.LoadingState> {
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

    private func run(_ name: String, refresh: Bool, limit: Int?, cancelled: () -> Bool, yield: (Cache.LoadingState) -> Void) {
        var preview: [Cached<String>] = []
        do {
            let database = try CacheDatabase(path: databasePath, access: readOnly ? .readOnly : .write)
            let read = try RefreshBehindRead(database, source: name)
            let reader = CacheReader(database)
            func rows() throws -> [Cached<String>] {
                guard readsRows else { return [] }
                SourceModelWatch.untypedReads.withLock { $0[databasePath, default: 0] += 1 }
                return try reader.decoded(read.source, as: String.self, limit: limit).rows
            }
            preview = try rows()
            yield(.preview(preview, stale: read.stale))
            let plan = try read.plan(refresh: refresh && !readOnly && !cancelled(), environment: environment)
            if let reason = plan.reason {
                // Nothing is started or recorded: the refresh could only fail, or is not due.
                yield(.failed(.refreshFailed(reason, upstream: nil), cached: preview))
                return
            }
            guard plan != .none else { return }

            yield(.refreshing)
            let engine = SyncEngine(database: database, fetcher: fetcher, environment: environment)
            let started = try read.start(plan, runner: .inProcess(engine))
            let error = try read.wait(for: started, pollInterval: pollInterval, cancelled: cancelled)
            let rows = try rows()
            if let error {
                yield(.failed(.refreshFailed(error.message, upstream: error.failure?.upstream), cached: rows))
            } else {
                var changes = Cache.RowChanges.between(preview, rows)
                // With a limit, a row can leave the window and stay cached: that is not a removal.
                if !changes.removed.isEmpty {
                    changes = changes.leavingOut(try reader.cachedIDs(of: read.source, among: changes.removed))
                }
                yield(.fresh(rows, changes: changes))
            }
        } catch {
            // Not a refresh's failure (no such source, a database that cannot be read): its own case.
            yield(.failed(CacheError(error), cached: preview))
        }
    }
}
