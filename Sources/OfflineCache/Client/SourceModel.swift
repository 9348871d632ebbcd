import FoundationEssentials
import Observation
import Synchronization

/// One source as a screen shows it, the seed app's `Client` in library form: an `@Observable`
/// model with the loading status, the rows decoded into the app's own type, the rows that did
/// not decode, and whether they are stale or being refreshed.
///
/// ```swift
/// struct AccountScreen: View {
///     @State private var model: SourceModel<Source.Kind.AccountTransaction>?
///     var body: some View {
///         List {
///             if let model {
///                 if model.isPending { SkeletonRows() }
///                 ForEach(model.rows, id: \.key) { TransactionRow($0.value) }
///                     .opacity(model.isStale ? 0.5 : 1)
///                 if case .failure(let reason) = model.status { ErrorBanner(reason) }
///             }
///         }
///         // Made once, when the screen appears: a view's initializer runs far more often.
///         .task { model = model ?? cache.model(of: "bank", as: Source.Kind.AccountTransaction.self, limit: 50) }
///     }
/// }
/// ```
///
/// It starts loading on the main actor's next turn (a model let go before then reads nothing
/// and watches nothing): the cached rows at once, then, when they are stale, a refresh. After
/// that it stays current: a sync by any process (cron, the command line, `cache serve`)
/// reaches it within a second, through SQLite's `data_version` (what `cache serve`'s events
/// watch). Released, it stops watching; a refresh it started ends at its next state (or its
/// timeout), and nothing more is read for it.
@MainActor @Observable
public final class SourceModel<Row: Decodable & Sendable> {
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
    /// The cached rows that decode into `Row`, in the source's order (empty before the first
    /// read: show placeholders while ``isPending``).
    public private(set) var rows: [Cached<Row>] = []
    /// The cached rows that do not decode into `Row`, by key, with the field and what was found
    /// there: shown as such, never dropped silently.
    public private(set) var failures: [UndecodableRow] = []
    /// For an account, its holder and balance (what the screen shows above the transactions);
    /// nil for other kinds, and before the first read.
    public private(set) var account: Cached<Source.Kind.Account>?
    /// Nothing to show yet: no rows read, no answer from upstream, no failure. Show placeholder
    /// rows while it is true. It is apart from ``isStale``, which says how old rows are: a
    /// source that never synced is stale from the start, while the placeholders are not rows to
    /// dim.
    public private(set) var isPending = true
    /// The source's last success is older than its TTL (or it never succeeded).
    public private(set) var isStale = false
    /// A refresh is under way.
    public private(set) var isRefreshing = false
    /// The last refresh's failure, until a refresh succeeds.
    public private(set) var lastError: CacheError?

    @ObservationIgnored private let cache: Cache
    @ObservationIgnored private let limit: Int?

    /// What one read of the source gives the model.
    private struct Read: Sendable {
        var rows: DecodedRows<Row>
        var account: Cached<Source.Kind.Account>?
        var stale: Bool
    }

    init(cache: Cache, source: String, limit: Int?) {
        self.cache = cache
        self.source = source
        self.limit = limit
        // The model weakly, so a screen let go mid-load (a refresh against a hung upstream)
        // ends the load at its next state: the stream let go stops the refresh behind it. A
        // model let go before the main actor's next turn starts nothing at all.
        Task { [weak self] in
            guard let states = self?.start() else { return }
            for await state in states {
                guard let (cache, source, limit) = self.map({ ($0.cache, $0.source, $0.limit) }) else { return }
                // A refresh under way changes no row: shown at once, not after a read that its
                // sync's write could hold up.
                var read: Read?
                if case .refreshing = state {} else { read = await Task.detached { try? Self.read(cache, source, limit) }.value }
                self?.apply(state, read)
            }
            self?.loaded()
        }
    }

    private func start() -> AsyncStream<Cache.LoadingState> {
        SourceModelWatch.started.withLock { $0[cache.path, default: 0] += 1 }
        status = .loading
        // The states alone: the rows are read here, typed, for each of them.
        return cache.loadingStates(readsRows: false).states(of: source, limit: limit)
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
            fail(.refreshFailed(report.failure.map { "\($0)" } ?? "the sync failed", upstream: report.failure?.upstream))
        case .failure(let error):
            fail(.refreshFailed("\(error)", upstream: nil))
        }
        await reload()
    }

    private func apply(_ state: Cache.LoadingState, _ read: Read?) {
        switch state {
        case .preview(_, let stale):
            show(read)
            isStale = stale
            if !stale { status = .success }
            // Cached rows (decoded or not), or a fresh source that has none: something to show.
            if let read, !read.rows.rows.isEmpty || !read.rows.failures.isEmpty { isPending = false }
            if !stale { isPending = false }
        case .refreshing:
            isRefreshing = true
        case .fresh:
            show(read)
            (isStale, isRefreshing, lastError, status, isPending) = (false, false, nil, .success, false)
        case .failed(let error, _):
            show(read)
            isRefreshing = false
            isPending = false
            fail(error)
        }
    }

    private func show(_ read: Read?) {
        guard let read else { return }
        (rows, failures, account) = (read.rows.rows, read.rows.failures, read.account)
    }

    private func loaded() {
        // Stale and not refreshed (a read-only cache): what there is, is the answer.
        if status == .loading { status = .success }
        isPending = false
        watch()
    }

    private func fail(_ error: CacheError) {
        lastError = error
        status = .failure(error.description)
    }

    /// The rows and staleness as they are now.
    private func reload() async {
        let (cache, source, limit) = (self.cache, self.source, self.limit)
        guard let read = try? await Task.detached(operation: { try Self.read(cache, source, limit) }).value else { return }
        show(read)
        isStale = read.stale
    }

    /// The rows decoded, the account's holder, and the staleness, from one snapshot.
    nonisolated private static func read(_ cache: Cache, _ source: String, _ limit: Int?) throws -> Read {
        let database = try cache.database()
        return try database.connection.inReadTransaction {
            let named = try SourceStore(database).named(source)
            let reader = CacheReader(database)
            let rows = try reader.decoded(named, as: Row.self, limit: limit)
            return Read(rows: rows, account: try reader.accountHeader(of: named), stale: try reader.isStale(named))
        }
    }

    /// Watches the file for commits by any process (`CommitWatch`), and reads the rows again
    /// after each. Read-only, no connection is kept: one to a WAL file without side files reads
    /// it as immutable, and sees no commit; the file's marks show them instead.
    private func watch() {
        let (cache, source, limit) = (self.cache, self.source, self.limit)
        SourceModelWatch.watching.withLock { $0[cache.path, default: 0] += 1 }
        Task.detached { [weak self] in
            defer { SourceModelWatch.watching.withLock { $0[cache.path, default: 0] -= 1 } }
            var watch = CommitWatch(path: cache.path, access: cache.readOnly ? .readOnly : .write, keepsConnection: !cache.readOnly)
            var looked = false
            // Until the model is released: it is looked for on every turn.
            while self != nil {
                if looked { try? await Task.sleep(for: SourceModelWatch.interval) }
                defer { SourceModelWatch.looks.withLock { $0[cache.path, default: 0] += 1 } }
                // The first look reads the rows again, whatever changed: a commit that landed
                // between the load's last read and the watch's start is in no read yet.
                guard watch.look(force: !looked) != nil else { looked = true; continue }
                looked = true
                guard let read = try? Self.read(cache, source, limit) else { continue }
                await MainActor.run { [weak self] in
                    guard let self else { return }
                    self.show(read)
                    self.isStale = read.stale
                    // Another process's sync landed: the status says what the rows now are.
                    if !read.stale, case .failure = self.status { self.status = .success; self.lastError = nil }
                }
            }
        }
    }
}

/// What every model's watcher shares, whatever its rows' type.
package enum SourceModelWatch {
    /// How often a model looks for a sync by another process.
    static let interval = Duration.milliseconds(200)
    /// How many models began loading, by database path (for the tests: a model let go before
    /// its first turn begins nothing).
    package static let started = Mutex<[String: Int]>([:])
    /// How many models' watchers run now, by database path (for the tests: a released model's
    /// stops).
    package static let watching = Mutex<[String: Int]>([:])
    /// How many looks the watchers have taken, by database path (for the tests: a turn that
    /// would have written, had the watcher written, has happened).
    package static let looks = Mutex<[String: Int]>([:])
    /// How many times loading states read rows of their own, untyped, by database path (for the
    /// tests: a model's states read none; the model reads each state's rows once, typed).
    package static let untypedReads = Mutex<[String: Int]>([:])
}

extension Cache {
    /// A model of `name` for a screen, each row decoded into `Row` (a json, csv or ndjson
    /// record as upstream sent it, a joke as `Source.Kind.Joke`, a transaction as `Source.Kind.AccountTransaction`): at most
    /// `limit` rows, loading on the main actor's next turn and current from then on (see
    /// `SourceModel`). Make it once for a screen (in `.task`, or held by the app's state), not
    /// in a view's initializer.
    @MainActor
    public func model<Row: Decodable & Sendable>(of name: String, as type: Row.Type, limit: Int? = nil) -> SourceModel<Row> {
        SourceModel(cache: self, source: name, limit: limit)
    }

    /// A model of any source, for tools that show whatever is cached: each row's `value` is its
    /// JSON, as text (a record as upstream sent it; a joke's or a transaction's fields).
    @MainActor
    public func model(of name: String, limit: Int? = nil) -> SourceModel<String> {
        SourceModel(cache: self, source: name, limit: limit)
    }
}
