import FoundationEssentials
import Observation
import Glibc
import Synchronization

/// One source as a screen shows it, the seed app's `Client` in library form: an `@Observable`
/// model with the loading status, the rows, and whether they are stale or being refreshed.
///
/// ```swift
/// struct AccountScreen: View {
///     @State var model = cache.model(of: "bank", limit: 50)
///     var body: some View {
///         if model.isPending { SkeletonRows() }
///         else {
///             if case .failure(let reason) = model.status { ErrorBanner(reason) }
///             Rows(model.rows).opacity(model.isStale ? 0.5 : 1)
///         }
///     }
/// }
/// ```
///
/// It starts loading on the main actor's next turn: the cached rows at once, then, when they
/// are stale, a refresh. After that it stays current: a sync by any process (cron, the
/// command line, `cache serve`) reaches it within a second, through SQLite's `data_version`
/// (what `cache serve`'s events watch). Its work stops when it is released.
@MainActor @Observable
public final class SourceModel {
    /// The seed app's loading status.
    public enum Status: Sendable, Equatable {
        /// Nothing asked yet.
        case initial
        /// Reading, or refreshing a stale source.
        case loading
        /// The rows are the cache's, fresh, or as fresh as they can be here (a read-only cache).
        case success
        /// The refresh failed; `rows` are still the cached ones.
        case failure(String)
    }

    /// The source this model shows.
    public let source: String
    /// Where the screen is: nothing asked yet, loading, showing the rows, or failed.
    public private(set) var status = Status.initial
    /// The cached rows (empty before the first read: show skeletons).
    public private(set) var rows = CachedRows.records(columns: [], [])
    /// Nothing to show yet: no rows read, no answer from upstream, no failure. Show placeholder
    /// rows while it is true. It is apart from ``SourceModel/isStale``, which says how old rows are: a source
    /// that never synced is stale from the start, while the placeholders are not rows to dim.
    public private(set) var isPending = true
    /// The source's last success is older than its TTL (or it never succeeded).
    public private(set) var isStale = false
    /// A refresh is under way.
    public private(set) var isRefreshing = false
    /// The last refresh's failure, until a refresh succeeds.
    public private(set) var lastError: RefreshError?

    @ObservationIgnored private let cache: Cache
    @ObservationIgnored private let limit: Int?

    /// How often the model looks for a sync by another process.
    nonisolated static let watchInterval = Duration.milliseconds(200)
    /// How many models' watchers run now, by database path (for the tests: a released model's
    /// stops).
    nonisolated package static let watching = Mutex<[String: Int]>([:])
    /// How many looks the watchers have taken, by database path (for the tests: a turn that
    /// would have written, had the watcher written, has happened).
    nonisolated package static let looks = Mutex<[String: Int]>([:])

    init(cache: Cache, source: String, limit: Int?) {
        self.cache = cache
        self.source = source
        self.limit = limit
        // The model weakly, so a screen let go mid-load (a refresh against a hung upstream)
        // ends the load at its next state: the stream let go stops the refresh behind it.
        let states = cache.states(of: source, limit: limit)
        Task { [weak self] in
            self?.status = .loading
            for await state in states {
                guard let self else { return }
                self.apply(state)
            }
            self?.loaded()
        }
    }

    /// Syncs the source now (pull to refresh), whatever its age; the rows follow.
    public func refresh() async {
        isRefreshing = true
        let (cache, source) = (self.cache, self.source)
        let outcome: Result<SyncReport, any Error> = await Task.detached { Result { try cache.sync(source) } }.value
        isRefreshing = false
        switch outcome {
        case .success(let report) where report.failure == nil:
            lastError = nil
            status = .success
        case .success(let report):
            fail(RefreshError(message: report.failure.map { "\($0)" } ?? "the sync failed"))
        case .failure(let error):
            fail(RefreshError(message: "\(error)"))
        }
        await reload()
    }

    private func apply(_ state: LoadingState) {
        switch state {
        case .preview(let rows, let stale):
            (self.rows, isStale) = (rows, stale)
            if !stale { status = .success }
            // Cached rows, or a fresh source that has none: something to show.
            if rows.count > 0 || !stale { isPending = false }
        case .refreshing:
            isRefreshing = true
        case .fresh(let rows, _):
            (self.rows, isStale, isRefreshing, lastError, status, isPending) = (rows, false, false, nil, .success, false)
        case .failed(let error, let cached):
            rows = cached
            isRefreshing = false
            isPending = false
            fail(error)
        }
    }

    private func loaded() {
        // Stale and not refreshed (a read-only cache): what there is, is the answer.
        if status == .loading { status = .success }
        isPending = false
        watch()
    }

    private func fail(_ error: RefreshError) {
        lastError = error
        status = .failure(error.message)
    }

    /// The rows and staleness as they are now.
    private func reload() async {
        let (cache, source, limit) = (self.cache, self.source, self.limit)
        guard let read = try? await Task.detached(operation: { try Self.read(cache, source, limit) }).value else { return }
        (rows, isStale) = read
    }

    nonisolated private static func read(_ cache: Cache, _ source: String, _ limit: Int?) throws -> (CachedRows, Bool) {
        let database = try cache.database()
        let named = try SourceStore(database).named(source)
        return (try CacheReader(database).rows(of: named, limit: limit), try CacheReader(database).isStale(named))
    }

    /// Watches the file for commits by any process (`CommitWatch`), and reads the rows again
    /// after each. Read-only, no connection is kept: one to a WAL file without side files reads
    /// it as immutable, and sees no commit; the file's marks show them instead.
    private func watch() {
        let (cache, source, limit) = (self.cache, self.source, self.limit)
        Self.watching.withLock { $0[cache.path, default: 0] += 1 }
        Task.detached { [weak self] in
            defer { Self.watching.withLock { $0[cache.path, default: 0] -= 1 } }
            var watch = CommitWatch(path: cache.path, access: cache.readOnly ? .readOnly : .write, keepsConnection: !cache.readOnly)
            var looked = false
            // Until the model is released: it is looked for on every turn.
            while self != nil {
                if looked { try? await Task.sleep(for: Self.watchInterval) }
                defer { Self.looks.withLock { $0[cache.path, default: 0] += 1 } }
                // The first look reads the rows again, whatever changed: a commit that landed
                // between the load's last read and the watch's start is in no read yet.
                guard watch.look(force: !looked) != nil else { looked = true; continue }
                looked = true
                guard let read = try? Self.read(cache, source, limit) else { continue }
                await MainActor.run { [weak self] in
                    guard let self else { return }
                    (self.rows, self.isStale) = read
                    // Another process's sync landed: the status says what the rows now are.
                    if !read.1, case .failure = self.status { self.status = .success; self.lastError = nil }
                }
            }
        }
    }
}

extension Cache {
    /// A model of `name` for a screen: at most `limit` rows, loading on the main actor's next
    /// turn and current from then on (see `SourceModel`).
    @MainActor
    public func model(of name: String, limit: Int? = nil) -> SourceModel {
        SourceModel(cache: self, source: name, limit: limit)
    }
}
